"""The ready specs of the ownership model validate against the model's own check."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from campaign.design import Design, cell_params
from campaign.models.ownership import run
from campaign.spec import load_spec

SPECS = Path(__file__).resolve().parents[2] / "specs"


@pytest.mark.parametrize(
    ("name", "paired"),
    [("ownership-case1.yaml", ("policy",)), ("ownership-quick.yaml", ("policy", "maxt"))],
)
def test_spec_validates_and_pairs_strategies(name, paired):
    spec = load_spec(SPECS / name)
    assert spec.model == "ownership"
    assert spec.paired == paired


def test_case1_covers_the_source_sweep():
    spec = load_spec(SPECS / "ownership-case1.yaml")
    assert spec.factor("machines").values == (10, 20, 40)
    assert spec.factor("policy").values == ("osep", "osep_checkpoint", "fair_share")
    assert spec.factor("maxt").values == (1, 2, 5, 10, 20, "all")
    assert spec.factor("checkpoint_cost_s").values == (0, 2, 10, 60)
    assert spec.cells == 216 and spec.replicates == 1


def test_case1_at_ten_machines_is_the_worked_example():
    spec = load_spec(SPECS / "ownership-case1.yaml")
    found = 0
    for cell in Design(spec).cells:
        params = cell_params(spec, cell)
        if (params["machines"], params["maxt"], params["checkpoint_cost_s"]) == (10, "all", 0):
            metrics = run(params, 0)
            cost, violation = {
                "osep": (250, 100),
                "osep_checkpoint": (0, 100),
                "fair_share": (0, 1300),
            }[params["policy"]]
            assert (metrics["policy_cost"], metrics["policy_violation"]) == (cost, violation)
            found += 1
    assert found == 3


def test_quick_spec_shares_seeds_across_cells_and_replicates_differ():
    spec = load_spec(SPECS / "ownership-quick.yaml")
    design = Design(spec)
    seeds = defaultdict(set)
    makespans = defaultdict(set)
    for task in design.tasks():
        seeds[task.replicate].add(task.seed)
        params = cell_params(spec, task.cell)
        makespans[task.cell].add(run(params, task.seed)["makespan"])
    assert all(len(s) == 1 for s in seeds.values())
    assert all(len(values) == spec.replicates for values in makespans.values())
