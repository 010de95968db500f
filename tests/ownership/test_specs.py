"""The ready specs of the ownership model validate against the model's own check."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from campaign.design import Design, cell_params
from campaign.models.ownership import run
from campaign.models.ownership.params import parse
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


def test_case1_u2_submits_its_share():
    spec = load_spec(SPECS / "ownership-case1.yaml")
    assert spec.params["tasks_per_user"] == ["machines", "share"]
    for cell in Design(spec).cells:
        params = cell_params(spec, cell)
        n = params["machines"]
        assert parse(params).recipe.tasks_per_user == (n, n // 2)


def test_case1_at_ten_machines(su):
    """Hand-computed, n = 10, maxt = all, checkpoint cost 0: u1's ten tasks run 10-310; at 60
    u2 submits five, OSEP kills u1's five youngest (50 s run) and u2 runs 70-370; at 310 u1's
    finished machines restart the victims (to 610, or to 560 from their checkpoints).
    Fair-Share leaves u2 waiting until u1's tasks end: 310-610."""
    spec = load_spec(SPECS / "ownership-case1.yaml")
    first, second = su(300, 0, 310), su(300, 0, 610)
    expected = {
        "osep": {
            "satisfaction_user1": (5 * first + 5 * second) / 10,
            "satisfaction_user2": su(300, 60, 370),
            "policy_violation": 100,  # u1 0-10, u2 60-70, five machines each
            "capacity_loss": 50,
            "policy_cost": 250,
            "makespan": 610,
            "n_preemptions": 5,
        },
        "osep_checkpoint": {
            "satisfaction_user1": (5 * first + 5 * su(300, 0, 560)) / 10,
            "satisfaction_user2": su(300, 60, 370),
            "policy_violation": 100,
            "capacity_loss": 50,
            "policy_cost": 0,
            "makespan": 560,
            "n_preemptions": 5,
        },
        "fair_share": {
            "satisfaction_user1": first,
            "satisfaction_user2": su(300, 60, 610),
            "policy_violation": 50 + 5 * 250,  # u1 0-10, u2 60-310
            "capacity_loss": 0,
            "policy_cost": 0,
            "makespan": 610,
            "n_preemptions": 0,
        },
    }
    found = 0
    for cell in Design(spec).cells:
        params = cell_params(spec, cell)
        if (params["machines"], params["maxt"], params["checkpoint_cost_s"]) == (10, "all", 0):
            metrics = run(params, 0)
            for name, value in expected[params["policy"]].items():
                assert metrics[name] == pytest.approx(value, rel=1e-12), name
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
