"""The model contract: parameters, metric names and units, workloads, determinism, pairing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from campaign.models import load_model
from campaign.models.ownership import MODEL, run, simulate
from campaign.models.ownership.params import PARAMS, parse


def test_registry_names_this_model():
    assert load_model("ownership") is MODEL and MODEL.run is run


def test_metrics_are_documented_with_units():
    names = set(run({"shares": [5, 5]}, 0))
    documented = {name.replace("{k}", "1") for name in MODEL.metrics} | {"satisfaction_user2"}
    assert names == documented
    for meta in MODEL.metrics.values():
        assert meta["units"] and meta["long_name"]
    assert MODEL.metrics["policy_violation"]["units"] == "machine*s"
    assert MODEL.metrics["satisfaction_user{k}"]["units"] == "%"


def test_four_users_give_four_satisfactions():
    metrics = run({"shares_pct": [30, 40, 15, 15], "machines": 20}, 0)
    assert [k for k in metrics if k.startswith("satisfaction_user")] == [
        f"satisfaction_user{k}" for k in (1, 2, 3, 4)
    ]


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"speed": 2}, "'speed'"),
        ({"policy": "fcfs"}, "'policy'"),
        ({"machines": 0}, "'machines'"),
        ({"shares": [5, 4]}, "'shares'"),
        ({"shares": [5, 5], "shares_pct": [50, 50]}, "'shares_pct'"),
        ({"machines": 10, "shares_pct": [33, 67]}, "'shares_pct'"),
        ({"maxt": -1}, "'maxt'"),
        ({"maxt": "some"}, "'maxt'"),
        ({"maxt": 1.5}, "'maxt'"),
        ({"update_interval_s": 0}, "'update_interval_s'"),
        ({"negotiation_offset_s": 20}, "'negotiation_offset_s'"),
        ({"checkpoint_cost_s": -1}, "'checkpoint_cost_s'"),
        ({"priority_half_life_s": 0}, "'priority_half_life_s'"),
        ({"fair_share_weights": "users"}, "'fair_share_weights'"),
        ({"owner_load": 1.5}, "'owner_load'"),
        ({"tasks_per_user": [1, 2, 3]}, "'tasks_per_user'"),
        ({"tasks_per_user": 0}, "'tasks_per_user'"),
        ({"tasks_per_user": ["machines", "half"]}, "'tasks_per_user'"),
        ({"claim_reuse": 1}, "'claim_reuse'"),
        ({"task_duration_s": 0}, "'task_duration_s'"),
        ({"task_duration_s": [[600], []]}, "'task_duration_s'"),
        ({"submit_s": [0, -1]}, "'submit_s'"),
        ({"duration_jitter": 1.0}, "'duration_jitter'"),
        ({"tasks": [[3, 0, 10]]}, "'tasks'"),
        ({"tasks": [[1, 0, 0]]}, "'tasks'"),
        ({"tasks": [[1, 0, 10]], "submit_s": 5}, "'submit_s'"),
    ],
)
def test_check_names_the_bad_parameter(params, named):
    with pytest.raises(ValueError, match=named):
        MODEL.check(params)


def test_check_lists_allowed_values():
    with pytest.raises(ValueError, match="osep, osep_checkpoint, fair_share"):
        MODEL.check({"policy": "fcfs"})
    with pytest.raises(ValueError, match="allowed: .*checkpoint_cost_s"):
        MODEL.check({"speed": 2})


def test_defaults_and_documented_conversions():
    scenario = parse({"machines": 20, "shares_pct": [30, 40, 15, 15], "maxt": "all"})
    assert scenario.settings.shares == (6, 8, 3, 3)
    assert scenario.settings.maxt == math.inf
    assert scenario.settings.offset == PARAMS["update_interval_s"].default / 2
    assert parse({"update_interval_s": 60}).settings.offset == 30
    assert parse({"machines": 40, "tasks_per_user": "machines"}).recipe.tasks_per_user == (40, 40)
    shares = {"machines": 20, "shares": [6, 8, 3, 3]}
    assert parse({**shares, "tasks_per_user": "share"}).recipe.tasks_per_user == (6, 8, 3, 3)
    counts = ["machines", "share", 7, "share"]
    assert parse({**shares, "tasks_per_user": counts}).recipe.tasks_per_user == (20, 8, 7, 3)


def test_mixed_durations_cycle_in_turn():
    tasks, _ = simulate({"machines": 20, "tasks_per_user": 15, **_mixed()}, 0)
    first_user = tasks.duration[:15]
    assert first_user[:4] == (600, 1800, 3600, 600)
    assert sorted(set(first_user)) == [600, 1800, 3600]
    assert all(first_user.count(d) == 5 for d in (600, 1800, 3600))


def _mixed():
    return {"shares": [10, 10], "task_duration_s": [[600, 1800, 3600], 600]}


def test_jitter_and_poisson_arrivals(random_four_users):
    tasks, _ = simulate(random_four_users, 3)
    durations = np.array(tasks.duration)
    base = np.array([[600, 1800, 3600][i % 3] for i in range(15)] * 4)
    assert np.all(np.abs(durations / base - 1) <= 0.2)
    assert not np.array_equal(durations, base)
    submits = np.array(tasks.submit).reshape(4, 15)
    assert submits[:, 0].tolist() == [0, 100, 200, 210]
    assert np.all(np.diff(submits, axis=1) > 0)
    gaps = np.diff(submits, axis=1).ravel()
    assert 30 < gaps.mean() < 90  # 56 exponential gaps of mean 60


def test_same_params_and_seed_give_bit_identical_metrics(random_four_users):
    for policy in ("osep", "osep_checkpoint", "fair_share"):
        params = {**random_four_users, "policy": policy}
        first, second = run(params, 12345), run(params, 12345)
        assert list(first) == list(second)
        assert np.array_equal(list(first.values()), list(second.values()))
        assert run(params, 12346) != first


def test_deterministic_scenarios_do_not_depend_on_the_seed(example):
    assert run(example, 1) == run(example, 2**62 + 7)


def test_policies_see_the_same_workload_for_one_seed(random_four_users):
    """Pairing (common random numbers): the workload stream ignores the policy."""
    workloads = {
        policy: simulate({**random_four_users, "policy": policy}, 9)[0]
        for policy in ("osep", "osep_checkpoint", "fair_share")
    }
    assert len({(w.submit, w.duration) for w in workloads.values()}) == 1


def test_one_users_draws_do_not_shift_when_another_user_changes(random_four_users):
    base = simulate(random_four_users, 4)[0]
    changed = simulate({**random_four_users, "tasks_per_user": [15, 3, 15, 15]}, 4)[0]
    assert base.duration[:15] == changed.duration[:15]
    assert base.duration[30:] == changed.duration[18:]
    assert base.submit[30:] == changed.submit[18:]


def test_owner_load_slows_tasks_down():
    params = {"machines": 4, "shares": [2, 2], "tasks_per_user": 4, "policy": "fair_share"}
    free = run(params, 0)
    loaded = run({**params, "owner_load": 0.5, "owner_on_s": 600, "owner_off_s": 600}, 0)
    assert loaded["makespan"] > free["makespan"]
    assert loaded["policy_cost"] > 0 == free["policy_cost"]


def test_user_without_tasks_has_nan_satisfaction():
    metrics = run({"shares": [5, 5], "tasks_per_user": [4, 0]}, 0)
    assert math.isnan(metrics["satisfaction_user2"])
    assert metrics["satisfaction_mean"] == metrics["satisfaction_user1"]
    assert math.isnan(metrics["satisfaction_std"])


@pytest.mark.parametrize(("weights", "u2_starts"), [("equal", [10, 110]), ("share", [210, 210])])
def test_fair_share_weights_by_share_starve_non_owners(schedule, weights, u2_starts):
    """Two machines, both owned by u1; four 100 s tasks of u1 and two of u2 at 0. Equal
    weights split the first negotiation 1/1; share weights give u2 (p = 0, e = ∞) machines
    only once u1 has no ready task."""
    params = {
        "machines": 2,
        "shares": [2, 0],
        "tasks": [[1, 0, 100]] * 4 + [[2, 0, 100]] * 2,
        "policy": "fair_share",
        "fair_share_weights": weights,
    }
    runs = schedule(params)
    assert [runs[j][0][0] for j in (4, 5)] == u2_starts


@pytest.mark.parametrize(("half_life", "u2_at_110"), [(1, 1), (100, 2)])
def test_fair_share_history_window_decides_who_gets_machines(schedule, half_life, u2_at_110):
    """u1 alone runs two machines 10-110; both users have three tasks ready at 110. With a
    long half-life u1's usage still weighs (π_u1 > 0.5 = π_u2): u2 gets both machines; with
    h = 1 s the usage is forgotten, priorities tie and the machines split 1/1. (Claim reuse
    is off: with it u1 would keep both machines at 110 and no negotiation would choose.)"""
    params = {
        "machines": 2,
        "shares": [1, 1],
        "tasks": [[1, 0, 100]] * 2 + [[1, 50, 100]] * 3 + [[2, 50, 100]] * 3,
        "policy": "fair_share",
        "priority_half_life_s": half_life,
        "claim_reuse": False,
    }
    runs = schedule(params)
    assert runs[0][0][:2] == runs[1][0][:2] == (10, 110)
    started = [j for j, r in runs.items() if r[0][0] == 110]
    assert sum(1 for j in started if j >= 5) == u2_at_110
    assert len(started) == 2
