"""The ready specs of the ownership model validate against the model's own check."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from campaign.design.tasks import Design, cell_params
from campaign.models.ownership import run
from campaign.models.ownership.params import parse
from campaign.models.ownership.scenarios import REFERENCE_SCENARIOS
from campaign.spec.load import load_spec

SPECS = Path(__file__).resolve().parents[2] / "specs"


@pytest.mark.parametrize(
    ("name", "paired"),
    [
        ("ownership-case1.yaml", ("policy",)),
        ("ownership-cases.yaml", ("policy",)),
        ("ownership-quick.yaml", ("policy", "maxt")),
    ],
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


def cells_as_expected(spec, expected: dict, chosen) -> int:
    """Run each cell of ``spec`` whose parameters ``chosen`` picks (seed 0) and compare its
    metrics with ``expected[policy]``; the number of cells run."""
    found = 0
    for cell in Design(spec).cells:
        params = cell_params(spec, cell)
        if chosen(params):
            metrics = run(params, 0)
            for name, value in expected[params["policy"]].items():
                assert metrics[name] == pytest.approx(value, rel=1e-12), name
            found += 1
    return found


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
    at_ten = cells_as_expected(
        spec,
        expected,
        lambda p: (p["machines"], p["maxt"], p["checkpoint_cost_s"]) == (10, "all", 0),
    )
    assert at_ten == 3


def test_cases_spec_runs_cases_2_to_10_as_scenarios():
    spec = load_spec(SPECS / "ownership-cases.yaml")
    assert spec.factor("scenario").values == tuple(
        name for name in REFERENCE_SCENARIOS if not name.startswith("case1-")
    )
    assert spec.factor("policy").values == ("osep", "osep_checkpoint", "fair_share")
    assert spec.factor("maxt").values == (1, 2, 5, 10, 20, "all")
    assert spec.cells == 270 and spec.replicates == 1
    for cell in Design(spec).cells:
        settings = parse(cell_params(spec, cell)).settings
        assert settings.machines == 20
        assert (settings.interval, settings.offset, settings.dispatch_delay) == (20, 10, 0)
        assert (settings.checkpoint_cost, settings.restart_cost) == (10, 0)


def test_cases_spec_case_2_with_two_late_tasks(su):
    """Hand-computed, case 2 at 20/2 tasks: u1's twenty tasks fill the pool 10-310; at 60 u2
    submits two. OSEP with a budget of 2 or more kills u1's two youngest at 60 (50 s run; u2
    runs 70-370) and they restart at 310 when u1's machines finish (to 610; from their
    checkpoints, written 60-70, to 560). Fair-Share leaves u2 waiting until 310 (to 610)."""
    spec = load_spec(SPECS / "ownership-cases.yaml")
    u1_done = su(300, 0, 310)
    expected = {
        "osep": {
            "satisfaction_user1": (18 * u1_done + 2 * su(300, 0, 610)) / 20,
            "satisfaction_user2": su(300, 60, 370),
            "policy_violation": 10 * 10 + 2 * 10,  # u1 0-10 (its share), u2 60-70
            "capacity_loss": 2 * 10,
            "policy_cost": 2 * 50,
            "makespan": 610,
            "n_preemptions": 2,
        },
        "osep_checkpoint": {
            "satisfaction_user1": (18 * u1_done + 2 * su(300, 0, 560)) / 20,
            "satisfaction_user2": su(300, 60, 370),
            "policy_violation": 120,
            "capacity_loss": 0,
            "policy_cost": 2 * 10,
            "makespan": 560,
            "n_preemptions": 2,
        },
        "fair_share": {
            "satisfaction_user1": u1_done,
            "satisfaction_user2": su(300, 60, 610),
            "policy_violation": 100 + 2 * 250,
            "capacity_loss": 0,
            "policy_cost": 0,
            "makespan": 610,
            "n_preemptions": 0,
        },
    }
    late = cells_as_expected(
        spec, expected, lambda p: p["scenario"] == "case2-4-20-2" and p["maxt"] != 1
    )
    assert late == 15


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
