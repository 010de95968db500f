"""Claim reuse (ownership.md section 2): a finished task's machine starts the same user's next
ready task at once instead of idling until the next negotiation epoch.

Every schedule here is hand-computed (T = 20, negotiation offset 10, dispatch delay 0 unless
stated); task ids follow the task list.
"""

from __future__ import annotations

import math

import pytest

from campaign.models.ownership import run
from campaign.models.ownership.params import parse

POLICIES = ("osep", "osep_checkpoint", "fair_share")

# Section 2's example: n = 1, p = (1), u1 submits two tasks of 15 s at 0.
TWO_TASKS = {"machines": 1, "shares": [1], "tasks_per_user": 2, "task_duration_s": 15}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    ("reuse", "second", "violation"),
    [(True, (25, 40), 10), (False, (30, 45), 15)],
)
def test_document_example(schedule, su, policy, reuse, second, violation):
    """Task 1 runs 10-25 (matched at the first negotiation); with reuse task 2 follows at 25,
    without it the machine idles until the negotiation at 30. Violation: the share is short
    0-10, and without reuse also 25-30."""
    params = {**TWO_TASKS, "policy": policy, "claim_reuse": reuse}
    assert schedule(params) == {0: [(10, 25, "done")], 1: [(*second, "done")]}
    metrics = run(params, 0)
    exact = (su(15, 0, 25) + su(15, 0, second[1])) / 2
    assert metrics["satisfaction_user1"] == pytest.approx(exact, rel=1e-12)
    assert metrics["satisfaction_mean"] == metrics["satisfaction_user1"]
    assert math.isnan(metrics["satisfaction_std"])  # one user
    assert metrics["policy_violation"] == violation
    assert metrics["capacity_loss"] == 0
    assert metrics["policy_cost"] == 0
    assert metrics["makespan"] == second[1]
    assert metrics["n_preemptions"] == 0


def test_claim_reuse_is_on_by_default_and_must_be_a_flag():
    assert parse({}).settings.claim_reuse is True
    assert parse({"claim_reuse": False}).settings.claim_reuse is False
    with pytest.raises(ValueError, match="'claim_reuse' must be true or false"):
        parse({"claim_reuse": "yes"})


@pytest.mark.parametrize(
    "options",
    [
        {"policy": "osep", "maxt": "all"},
        {"policy": "osep_checkpoint", "maxt": "all", "checkpoint_cost_s": 0},
        {"policy": "osep", "maxt": 1},
        {"policy": "fair_share"},
    ],
)
def test_section_7_examples_are_the_same_either_way(example, schedule, options):
    """Their completions fall on negotiation epochs, where the machine goes to the same user."""
    params = {**example, **options}
    off = {**params, "claim_reuse": False}
    assert schedule(params) == schedule(off)
    assert run(params, 0) == pytest.approx(run(off, 0), nan_ok=True)


def test_reuse_starts_after_the_dispatch_delay(example, schedule, fives):
    """Section 7's example with a 5 s dispatch delay: u1 runs 15-315, five killed at 60 after
    45 s, u2 starts 75 (end 375). At 315 u1's finished machines start its five killed tasks
    (at 320, end 620); at 375 u2's start its last five (at 380, end 680). Violation: u1 0-15
    and 315-320, u2 60-75 and 375-380, five machines each: 75 + 25 + 75 + 25."""
    params = {**example, "policy": "osep", "dispatch_delay_s": 5}
    assert fives(schedule(params)) == [
        [(15, 315, "done")],
        [(15, 60, "killed"), (320, 620, "done")],
        [(75, 375, "done")],
        [(380, 680, "done")],
    ]
    metrics = run(params, 0)
    assert metrics["policy_violation"] == 200
    assert metrics["capacity_loss"] == 5 * 15
    assert metrics["policy_cost"] == 5 * 45
    assert metrics["makespan"] == 680
    assert metrics["n_preemptions"] == 5


# n = 2, p = (1, 1): u1 submits four 25 s tasks at 0, u2 one 100 s task at 21.
OVER_SHARE = {
    "machines": 2,
    "shares": [1, 1],
    "tasks": [[1, 0, 25]] * 4 + [[2, 21, 100]],
    "policy": "osep",
}


def test_a_user_above_its_share_keeps_a_reused_machine_until_the_next_decision(schedule):
    """u1 runs tasks 0, 1 on both machines 10-35. At 35 both machines start u1's tasks 2, 3
    although u2 waits; the decision at 40 kills the younger (task 3, 5 s run, highest id) and
    reserves its machine for u2, which starts at the negotiation at 50. Task 2 ends at 60 and
    its machine takes task 3 at once (60-85). Violation: u1 0-10, u2 21-50."""
    runs = schedule(OVER_SHARE)
    assert runs == {
        0: [(10, 35, "done")],
        1: [(10, 35, "done")],
        2: [(35, 60, "done")],
        3: [(35, 40, "killed"), (60, 85, "done")],
        4: [(50, 150, "done")],
    }
    metrics = run(OVER_SHARE, 0)
    assert metrics["policy_violation"] == 10 + 29
    assert metrics["capacity_loss"] == 10  # freed at 40, task 4 starts at 50
    assert metrics["policy_cost"] == 5
    assert metrics["makespan"] == 150
    assert metrics["n_preemptions"] == 1


def test_without_reuse_the_machines_idle_until_a_negotiation(schedule):
    """At 35 both machines idle; the decision at 40 reserves one for u2 and one for u1, both
    start at 50. Task 2 ends at 75; its machine idles until the negotiation at 90 (task 3,
    90-115). Violation: u1 0-10, 35-50 and 75-90, u2 21-50."""
    params = {**OVER_SHARE, "claim_reuse": False}
    assert schedule(params) == {
        0: [(10, 35, "done")],
        1: [(10, 35, "done")],
        2: [(50, 75, "done")],
        3: [(90, 115, "done")],
        4: [(50, 150, "done")],
    }
    metrics = run(params, 0)
    assert metrics["policy_violation"] == 10 + 15 + 15 + 29
    assert (metrics["capacity_loss"], metrics["policy_cost"]) == (0, 0)
    assert metrics["n_preemptions"] == 0


# n = 3, p = (1, 2): u1 submits three 1000 s tasks at 0; u2 a 35 s task at 15, a 100 s at 45.
RESERVED = {
    "machines": 3,
    "shares": [1, 2],
    "tasks": [[1, 0, 1000]] * 3 + [[2, 15, 35], [2, 45, 100]],
    "policy": "osep",
}


@pytest.mark.parametrize(("reuse", "late", "violation"), [(True, 65, 45), (False, 70, 50)])
def test_reuse_takes_a_task_a_reservation_waits_for(schedule, reuse, late, violation):
    """u1 fills the pool at 10. The decision at 20 kills task 2 for u2, whose 35 s task runs
    30-65. The decision at 60 kills task 1 and reserves its machine for u2's 100 s task. With
    reuse that task starts at 65 on the machine of u2's finished task; the reservation then
    finds no ready task at 70 and is dropped, and the machine goes to u1 (task 1 restarts).
    Without reuse the reserved machine starts it at 70 and the finished one goes to u1. Task 2
    restarts when the 100 s task ends (165 or 170; 170 is a negotiation epoch).
    Violation: u1 0-10; u2 15-30 and 45 until its second task starts."""
    runs = schedule({**RESERVED, "claim_reuse": reuse})
    assert runs == {
        0: [(10, 1010, "done")],
        1: [(10, 60, "killed"), (70, 1070, "done")],
        2: [(10, 20, "killed"), (170, 1170, "done")],
        3: [(30, 65, "done")],
        4: [(late, late + 100, "done")],
    }
    metrics = run({**RESERVED, "claim_reuse": reuse}, 0)
    assert metrics["policy_violation"] == violation
    assert metrics["capacity_loss"] == 20  # 20-30 and 60-70
    assert metrics["policy_cost"] == 10 + 50
    assert metrics["makespan"] == 1170
    assert metrics["n_preemptions"] == 2
