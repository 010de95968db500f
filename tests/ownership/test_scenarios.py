"""The ``scenario`` parameter: a reference scenario of the model document as the base of a
run's params, refusing a parameter that would change it."""

from __future__ import annotations

import pytest

from campaign.cli.main import main
from campaign.models.ownership import MODEL, run
from campaign.models.ownership.params import parse
from campaign.models.ownership.scenarios import REFERENCE_SCENARIOS

NAMES = ", ".join(REFERENCE_SCENARIOS)
POLICIES = (
    {"policy": "osep", "maxt": 2},
    {"policy": "osep_checkpoint", "maxt": "all", "checkpoint_cost_s": 10, "restart_cost_s": 5},
    {"policy": "fair_share", "priority_half_life_s": 600},
)


@pytest.mark.parametrize("name", list(REFERENCE_SCENARIOS))
def test_a_scenario_name_gives_the_metrics_of_its_parameter_set(name):
    for options in POLICIES:
        by_name = run({"scenario": name, **options}, 3)
        explicit = run({**REFERENCE_SCENARIOS[name], **options}, 3)
        assert by_name == explicit
        assert list(by_name) == list(explicit)


def test_the_scenarios_are_the_documents_cases():
    assert list(REFERENCE_SCENARIOS) == [
        "case1-n10",
        "case1-n20",
        "case1-n40",
        "case2-4-5-5",
        "case2-4-10-10",
        "case2-4-20-20",
        "case2-4-30-30",
        "case2-4-20-2",
        "case5-8-600",
        "case5-8-1800",
        "case5-8-3600",
        "case5-8-mixed",
        "case5-8-3600-600",
        "case5-8-600-3600",
        "case9-10-equal-600",
        "case9-10-equal-mixed",
        "case9-10-unequal-600",
        "case9-10-unequal-mixed",
    ]
    recipe = parse({"scenario": "case9-10-unequal-mixed"}).recipe
    assert parse({"scenario": "case9-10-unequal-mixed"}).settings.shares == (6, 8, 3, 3)
    assert recipe.tasks_per_user == (15, 15, 15, 15)
    assert recipe.durations == ((600, 1800, 3600),) * 4
    assert recipe.submit == (0, 100, 200, 210)
    recipe = parse({"scenario": "case1-n40"}).recipe
    assert (recipe.tasks_per_user, recipe.submit) == ((40, 20), (0, 60))


@pytest.mark.parametrize("policy", ["osep", "osep_checkpoint", "fair_share"])
def test_five_tasks_each_on_twenty_machines_never_contend(policy, su):
    """Case 2, 5/5 tasks: u1's five run 10-310 and u2's five 70-370 under every policy; each
    user is below its share of 10 only until its first negotiation epoch (5 machines, 10 s)."""
    metrics = run({"scenario": "case2-4-5-5", "policy": policy}, 0)
    assert metrics == {
        "satisfaction_user1": su(300, 0, 310),
        "satisfaction_user2": su(300, 60, 370),
        "satisfaction_mean": su(300, 0, 310),
        "satisfaction_std": 0.0,
        "policy_violation": 100.0,
        "capacity_loss": 0.0,
        "policy_cost": 0.0,
        "makespan": 370.0,
        "n_preemptions": 0.0,
    }


def test_parameters_the_scenario_leaves_open_act():
    jittered = run({"scenario": "case5-8-600", "duration_jitter": 0.2}, 4)
    assert jittered == run({**REFERENCE_SCENARIOS["case5-8-600"], "duration_jitter": 0.2}, 4)
    assert jittered != run({"scenario": "case5-8-600"}, 4)


def test_null_scenario_is_no_scenario():
    assert run({"scenario": None, "machines": 20}, 0) == run({"machines": 20}, 0)


def test_a_bad_scenario_is_one_line_listing_the_names():
    with pytest.raises(ValueError) as caught:
        MODEL.check({"scenario": "case11", "policy": "osep"})
    assert str(caught.value) == f"parameter 'scenario' must be one of {NAMES}, got 'case11'"


@pytest.mark.parametrize(
    ("extra", "sets"),
    [
        ({"machines": 20}, "machines: 20"),
        ({"submit_s": [0, 60]}, "submit_s: [0, 60]"),
        ({"shares": [10, 10]}, "shares_pct: [50, 50]"),
        ({"shares_pct": [50, 50]}, "shares_pct: [50, 50]"),
        (
            {"tasks": [[1, 0, 300]]},
            "the parametric workload (tasks_per_user, task_duration_s, submit_s)",
        ),
    ],
)
def test_a_parameter_the_scenario_sets_is_refused_in_one_line(extra, sets):
    """Even when it repeats the scenario's own value: the spec says one thing in one place."""
    (name,) = extra
    with pytest.raises(ValueError) as caught:
        MODEL.check({"scenario": "case2-4-10-10", "policy": "fair_share", **extra})
    assert str(caught.value) == (
        f"parameter {name!r} cannot be combined with scenario 'case2-4-10-10', which sets "
        f"{sets}; drop {name!r}, or drop 'scenario' and give every parameter"
    )


def test_models_show_lists_the_scenarios(capsys):
    assert main(["models", "show", "ownership"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3] == f"  scenario, default none: one of {NAMES}"
    assert lines[4] == (
        "      a reference scenario of the model document (section 8) as the base: the "
        "parameters it sets (machines, shares_pct, tasks_per_user, task_duration_s, submit_s) "
        "may not be given too"
    )
