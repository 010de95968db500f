"""The fast schedulers against literal, slow re-implementations of parallel-jobs.md section 3.

The references recompute everything from scratch at every pass (EASY: the shadow time with
each candidate added; conservative: every reservation re-inserted in order), so any shortcut
in the fast code that changes a schedule shows up on random workloads full of ties.
"""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.policies import PolicyOptions
from campaign.models.rigid.simulate import job_times, run_schedule
from campaign.models.rigid.workload import from_arrays


def _usage(intervals, x):
    return sum(size for begin, end, size in intervals if begin <= x < end)


def _fits(intervals, processors, width, begin, duration):
    points = [begin] + [b for b, _, _ in intervals if begin < b < begin + duration]
    return all(_usage(intervals, x) + width <= processors for x in points)


def _earliest(intervals, processors, width, duration, t):
    candidates = sorted({t} | {end for _, end, _ in intervals if end > t})
    for begin in candidates:
        if _fits(intervals, processors, width, begin, duration):
            return begin
    raise AssertionError("no start found")


def reference(submit, size, runtime, estimate, processors, policy, rng=None):
    """Start times under ``policy`` by the literal definitions (slow); ``rng``: the policy
    stream of ``random``."""
    n = len(submit)
    start: list[float | None] = [None] * n
    end: list[float | None] = [None] * n
    done = [False] * n
    arrived = [False] * n
    queue: list[int] = []
    reservation: dict[int, float] = {}
    while True:
        events = [submit[j] for j in range(n) if not arrived[j]]
        events += [end[j] for j in range(n) if start[j] is not None and not done[j]]
        if not events:
            break
        t = min(events)
        for j in range(n):
            if start[j] is not None and not done[j] and end[j] == t:
                done[j] = True
        arrivals = [j for j in range(n) if not arrived[j] and submit[j] == t]
        running = [j for j in range(n) if start[j] is not None and not done[j]]
        planned = [(t, max(start[k] + estimate[k], t), size[k]) for k in running]
        for j in arrivals:
            arrived[j] = True
            queue.append(j)
            if policy == "conservative":
                booked = planned + [
                    (reservation[k], reservation[k] + estimate[k], size[k]) for k in reservation
                ]
                reservation[j] = _earliest(booked, processors, size[j], estimate[j], t)
        free = processors - sum(size[k] for k in running)
        started = []
        if policy == "conservative":
            placed = list(planned)
            for j in sorted(queue, key=lambda k: (reservation[k], k)):
                reservation[j] = _earliest(placed, processors, size[j], estimate[j], t)
                placed.append((reservation[j], reservation[j] + estimate[j], size[j]))
            for j in queue:
                if reservation[j] <= t and size[j] <= free:
                    started.append(j)
                    free -= size[j]
        elif policy == "sjf":
            for j in sorted(queue, key=lambda k: (estimate[k], k)):
                if size[j] > free:
                    break
                started.append(j)
                free -= size[j]
        elif policy == "random":
            waiting = list(queue)
            while waiting and free > 0:
                j = waiting[int(rng.integers(len(waiting)))]
                if size[j] > free:
                    break
                waiting.remove(j)
                started.append(j)
                free -= size[j]
        else:
            k = 0
            while k < len(queue) and size[queue[k]] <= free:
                started.append(queue[k])
                free -= size[queue[k]]
                k += 1
            if policy == "easy" and k < len(queue):
                head = queue[k]
                now = planned + [(t, t + estimate[j], size[j]) for j in started]

                def shadow(intervals, head=head, now_t=t):
                    return _earliest(intervals, processors, size[head], 0.0, now_t)

                limit = shadow(now)
                for c in queue[k + 1 :]:
                    if size[c] <= free:
                        trial = now + [(t, t + estimate[c], size[c])]
                        if shadow(trial) <= limit:
                            started.append(c)
                            now = trial
                            free -= size[c]
        for j in started:
            queue.remove(j)
            reservation.pop(j, None)
            start[j] = t
            end[j] = t + runtime[j]
    return start


def reference_of(workload, processors, policy, kill, rng=None):
    """`reference` of a workload, its jobs run as the simulator runs them (killed at their
    estimate or not)."""
    runtime, estimate, _, _ = job_times(workload, "user", kill)
    return reference(
        workload.submit.tolist(),
        workload.size.tolist(),
        runtime.tolist(),
        estimate.tolist(),
        processors,
        policy,
        rng,
    )


def random_jobs(rng, n, processors):
    submit = np.sort(rng.integers(0, 60, n)).astype(float)
    size = rng.integers(1, processors + 1, n)
    runtime = rng.integers(0, 30, n).astype(float)
    estimate = np.maximum(runtime + rng.integers(-5, 30, n), 1).astype(float)
    return submit, size, runtime, estimate


def random_case(rng):
    """A small machine (2 to 8 processors) and a workload of 3 to 24 random jobs for it."""
    processors = int(rng.integers(2, 9))
    jobs = random_jobs(rng, int(rng.integers(3, 25)), processors)
    return from_arrays(*jobs), processors


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "sjf", "random"])
@pytest.mark.parametrize("kill", [True, False])
def test_fast_schedulers_equal_the_literal_definitions(policy, kill):
    rng = np.random.default_rng(7 if kill else 8)
    for case in range(40):
        workload, processors = random_case(rng)
        schedule = run_schedule(
            workload, processors, policy, kill_at_estimate=kill, rng=np.random.default_rng(case)
        )
        check_feasible(schedule)
        expected = reference_of(workload, processors, policy, kill, np.random.default_rng(case))
        assert schedule.start.tolist() == expected


@pytest.mark.parametrize("kill", [True, False])
def test_literal_conservative_compression_equals_the_definition(kill):
    """The compression the fast one is checked against on trace slices."""
    rng = np.random.default_rng(9 if kill else 10)
    for _ in range(40):
        workload, processors = random_case(rng)
        schedule = run_schedule(
            workload,
            processors,
            "conservative",
            kill_at_estimate=kill,
            options=PolicyOptions(reference=True),
        )
        check_feasible(schedule)
        expected = reference_of(workload, processors, "conservative", kill)
        assert schedule.start.tolist() == expected


# A workload where jobs overrun their estimates (no kill) while others are reserved behind
# them: reservations left in the past must not open slots before the current time.
OVERRUN = [
    (0, 4, 12, 13), (0, 6, 14, 22), (5, 1, 18, 40), (6, 2, 11, 21), (6, 3, 29, 41),
    (7, 2, 12, 21), (7, 4, 19, 32), (16, 4, 4, 31), (17, 6, 12, 12), (20, 2, 2, 21),
    (21, 1, 6, 32), (26, 6, 1, 7), (27, 1, 9, 5), (27, 2, 4, 3), (31, 1, 19, 17),
    (35, 3, 1, 1), (36, 5, 1, 3), (37, 1, 14, 41), (38, 2, 27, 41), (39, 4, 19, 20),
    (40, 4, 4, 21), (41, 3, 15, 44), (43, 4, 18, 27), (43, 3, 23, 26), (54, 5, 25, 40),
    (58, 6, 23, 46), (58, 2, 9, 38),
]  # fmt: skip


def test_conservative_with_overruns_equals_the_literal_definition():
    submit, size, runtime, estimate = (list(c) for c in zip(*OVERRUN, strict=True))
    workload = from_arrays(submit, size, runtime, estimate)
    schedule = run_schedule(workload, 6, "conservative", kill_at_estimate=False)
    check_feasible(schedule)
    expected = reference(submit, size, runtime, estimate, 6, "conservative")
    assert expected[5] == 38  # job 6 moves up when job 4 ends at 38, 10 s early
    assert schedule.start.tolist() == expected
