"""Section 7 of the model document, scenario by scenario: every number and every task time.

Task ids: u1's tasks are 0-9, u2's are 10-19 (user by user, in submission order).
"""

from __future__ import annotations

import pytest

from campaign.models.ownership import run, simulate

U1, U2 = range(0, 10), range(10, 20)


def mean(values):
    values = list(values)
    return sum(values) / len(values)


def assert_doc_value(value: float, printed: float, exact: float) -> None:
    """A value matches the exact formula and rounds to the document's 3 decimals."""
    assert value == pytest.approx(exact, rel=1e-12)
    assert round(value, 3) == printed


def test_osep_all_kill(example, schedule, fives, su):
    params = {**example, "policy": "osep", "maxt": "all"}
    assert fives(schedule(params)) == [
        # 0: five idle machines reserved for u1; 10: u1 starts all ten (end 310)
        [(10, 310, "done")],
        # 60: five victims, each ran 50 s, killed; they restart at 310 (end 610)
        [(10, 60, "killed"), (310, 610, "done")],
        # 70: u2 starts 5 (end 370); 370: its last five start (end 670)
        [(70, 370, "done")],
        [(370, 670, "done")],
    ]
    metrics = run(params, 0)
    first_half, second_half = su(300, 0, 310), su(300, 0, 610)
    assert round(first_half, 3) == 96.774 and round(second_half, 3) == 49.180
    exact = mean([first_half] * 5 + [second_half] * 5)
    assert_doc_value(metrics["satisfaction_user1"], 72.977, exact)
    assert_doc_value(metrics["satisfaction_user2"], 72.977, exact)
    assert metrics["policy_violation"] == 100  # u1 0-10, u2 60-70
    assert metrics["capacity_loss"] == 50
    assert metrics["policy_cost"] == 250
    assert metrics["makespan"] == 670
    assert metrics["n_preemptions"] == 5


def test_osep_all_victims_are_the_highest_ids_first(example):
    _, outcome = simulate({**example, "policy": "osep"}, 0, record=True)
    killed = [s.task for s in outcome.segments if s.outcome == "killed"]
    assert killed == [9, 8, 7, 6, 5]


def test_osep_all_checkpoint_cost_zero(example, schedule, fives, su):
    params = {**example, "policy": "osep_checkpoint", "maxt": "all", "checkpoint_cost_s": 0}
    assert fives(schedule(params)) == [
        [(10, 310, "done")],
        # victims resume at 310 with 250 s left (end 560)
        [(10, 60, "checkpointed"), (310, 560, "done")],
        [(70, 370, "done")],
        [(370, 670, "done")],
    ]
    metrics = run(params, 0)
    exact_u1 = mean([su(300, 0, 310)] * 5 + [su(300, 0, 560)] * 5)
    exact_u2 = mean([su(300, 60, 370)] * 5 + [su(300, 60, 670)] * 5)
    assert_doc_value(metrics["satisfaction_user1"], 75.173, exact_u1)
    assert_doc_value(metrics["satisfaction_user2"], 72.977, exact_u2)
    assert metrics["policy_violation"] == 100
    assert metrics["capacity_loss"] == 50
    assert metrics["policy_cost"] == 0
    assert metrics["makespan"] == 670
    assert metrics["n_preemptions"] == 5


def test_osep_maxt_one_kill(example, schedule, su):
    params = {**example, "policy": "osep", "maxt": 1}
    runs = schedule(params)
    for j in range(5):
        assert runs[j] == [(10, 310, "done")]
    # one victim per epoch at 60, 80, 100, 120, 140: ran 50, 70, 90, 110, 130 s
    kills = {9: 60, 8: 80, 7: 100, 6: 120, 5: 140}
    for j, at in kills.items():
        assert runs[j] == [(10, at, "killed"), (310, 610, "done")]
    # u2 starts at 70, 90, 110, 130, 150, later ones at 370, 390, 410, 430, 450
    starts = [70, 90, 110, 130, 150, 370, 390, 410, 430, 450]
    for j, start in zip(U2, starts):
        assert runs[j] == [(start, start + 300, "done")]
    metrics = run(params, 0)
    exact_u1 = mean([su(300, 0, 310)] * 5 + [su(300, 0, 610)] * 5)
    exact_u2 = mean(su(300, 60, start + 300) for start in starts)
    assert_doc_value(metrics["satisfaction_user1"], 72.977, exact_u1)
    assert_doc_value(metrics["satisfaction_user2"], 66.261, exact_u2)
    assert metrics["policy_violation"] == 300
    assert metrics["capacity_loss"] == 50
    assert metrics["policy_cost"] == 450  # 50 + 70 + 90 + 110 + 130
    assert metrics["makespan"] == 750
    assert metrics["n_preemptions"] == 5


@pytest.mark.parametrize("half_life", [60, 600, 3600, 86400])
def test_fair_share_any_half_life(example, schedule, su, half_life):
    params = {**example, "policy": "fair_share", "priority_half_life_s": half_life}
    runs = schedule(params)
    for j in U1:
        assert runs[j] == [(10, 310, "done")]
    for j in U2:
        assert runs[j] == [(310, 610, "done")]
    metrics = run(params, 0)
    assert_doc_value(metrics["satisfaction_user1"], 96.774, su(300, 0, 310))
    assert_doc_value(metrics["satisfaction_user2"], 54.545, su(300, 60, 610))
    assert metrics["policy_violation"] == 1300  # 50 + 5 * 250
    assert metrics["capacity_loss"] == 0
    assert metrics["policy_cost"] == 0
    assert metrics["makespan"] == 610
    assert metrics["n_preemptions"] == 0


def test_summary_metrics_of_the_example(example):
    metrics = run({**example, "policy": "fair_share"}, 0)
    users = [metrics["satisfaction_user1"], metrics["satisfaction_user2"]]
    assert metrics["satisfaction_mean"] == pytest.approx(mean(users), rel=1e-15)
    spread = abs(users[0] - users[1]) / 2**0.5  # sample std of two values
    assert metrics["satisfaction_std"] == pytest.approx(spread, rel=1e-12)


def test_checkpoint_and_restart_costs_extend_the_example(example, schedule, su):
    """Hand-computed: a 10 s write ends at the 70 s negotiation, so u2 still starts at 70 and no
    capacity is lost; victims resume at 310 with 250 s left plus 5 s restart (end 565)."""
    params = {
        **example,
        "policy": "osep_checkpoint",
        "checkpoint_cost_s": 10,
        "restart_cost_s": 5,
    }
    runs = schedule(params)
    for j in range(5, 10):
        assert runs[j] == [(10, 60, "checkpointed"), (310, 565, "done")]
    for j in range(10, 15):
        assert runs[j] == [(70, 370, "done")]
    metrics = run(params, 0)
    assert metrics["capacity_loss"] == 0
    assert metrics["policy_cost"] == 5 * 10 + 5 * 5
    assert metrics["policy_violation"] == 100
    exact_u1 = mean([su(300, 0, 310)] * 5 + [su(300, 0, 565)] * 5)
    assert metrics["satisfaction_user1"] == pytest.approx(exact_u1, rel=1e-12)


def test_dispatch_delay_shifts_every_start(example, schedule, fives):
    """Hand-computed with a 5 s dispatch delay and no claim reuse: u1 runs 15-315; five are
    killed at 60 after 45 s; u2 starts 75 (end 375); the 320 decision reserves for u1, which
    starts at 335; u2's second half is reserved at 380 and starts at 395. Violation: u1 0-15
    and 315-335, u2 60-75 and 375-395, five machines each: 75 + 100 + 75 + 100."""
    params = {**example, "policy": "osep", "dispatch_delay_s": 5, "claim_reuse": False}
    assert fives(schedule(params)) == [
        [(15, 315, "done")],
        [(15, 60, "killed"), (335, 635, "done")],
        [(75, 375, "done")],
        [(395, 695, "done")],
    ]
    metrics = run(params, 0)
    assert metrics["policy_violation"] == 350
    assert metrics["capacity_loss"] == 5 * 15
    assert metrics["policy_cost"] == 5 * 45
    assert metrics["makespan"] == 695
