"""The reference scenarios of section 8 of the model document, as parameter sets.

A spec names one with the ``scenario`` parameter. Each sets the platform and the workload
(machines, shares, tasks per user, durations, submit times); policy and its options are left
out: combine a scenario with ``policy``, ``maxt``, ... .
Decisions of the document are kept: in case 1 u1 submits n tasks and u2 its share n/2;
"mixed" durations are taken in turn 600/1800/3600.
"""

from __future__ import annotations

MIXED = [600, 1800, 3600]


def _case1(machines: int) -> dict:
    return {
        "machines": machines,
        "shares_pct": [50, 50],
        "tasks_per_user": [machines, machines // 2],
        "task_duration_s": 300,
        "submit_s": [0, 60],
    }


def _cases_2_4(u1: int, u2: int) -> dict:
    return {
        "machines": 20,
        "shares_pct": [50, 50],
        "tasks_per_user": [u1, u2],
        "task_duration_s": 300,
        "submit_s": [0, 60],
    }


def _cases_5_8(durations: object) -> dict:
    return {
        "machines": 20,
        "shares_pct": [50, 50],
        "tasks_per_user": 30,
        "task_duration_s": durations,
        "submit_s": [0, 300],
    }


def _cases_9_10(shares: list[int], durations: object) -> dict:
    return {
        "machines": 20,
        "shares_pct": shares,
        "tasks_per_user": 15,
        "task_duration_s": durations,
        "submit_s": [0, 100, 200, 210],
    }


REFERENCE_SCENARIOS: dict[str, dict] = {
    "case1-n10": _case1(10),
    "case1-n20": _case1(20),
    "case1-n40": _case1(40),
    **{f"case2-4-{a}-{b}": _cases_2_4(a, b) for a, b in [(5, 5), (10, 10), (20, 20), (30, 30)]},
    "case2-4-20-2": _cases_2_4(20, 2),
    "case5-8-600": _cases_5_8(600),
    "case5-8-1800": _cases_5_8(1800),
    "case5-8-3600": _cases_5_8(3600),
    "case5-8-mixed": _cases_5_8([MIXED, MIXED]),
    "case5-8-3600-600": _cases_5_8([3600, 600]),
    "case5-8-600-3600": _cases_5_8([600, 3600]),
    "case9-10-equal-600": _cases_9_10([25, 25, 25, 25], 600),
    "case9-10-equal-mixed": _cases_9_10([25, 25, 25, 25], [MIXED] * 4),
    "case9-10-unequal-600": _cases_9_10([30, 40, 15, 15], 600),
    "case9-10-unequal-mixed": _cases_9_10([30, 40, 15, 15], [MIXED] * 4),
}
