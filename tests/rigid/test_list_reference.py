"""A literal re-implementation of list-scheduling.md sections 2-3 (orders, trigger, modes),
written from the text on integer times with per-second usage grids, against the simulator on
random small instances: the same start of every job, jobs_backfilled and orders_computed."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.policies import LIST_MODES, ListOptions
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import from_arrays


def smith_list(W, size, est, w):
    def ratio(j):
        return w[j] / (size[j] * est[j])

    return sorted(W, key=lambda j: (-ratio(j), j))


def psrs(W, size, est, w, m):
    """Section 2.2 on a per-second grid: slots[j] = the seconds [y, y + 1) j runs in P."""
    L0 = smith_list(W, size, est, w)
    slots = {}

    def free_at(y):
        return m - sum(size[j] for j, ys in slots.items() if y in ys)

    def earliest(at, need):
        y = at
        while free_at(y) < need:
            y += 1
        return y

    tau = 0
    done = {}
    for j in L0:
        if 2 * size[j] <= m:
            x = earliest(tau, size[j])
        else:
            tc = earliest(tau, m / 2)
            tf = earliest(tc, size[j])
            if tf <= tc + est[j]:
                x = tf
            else:
                tp = tc + est[j]
                for k, ys in slots.items():
                    slots[k] = {y + est[j] if y >= tp else y for y in ys}
                slots[j] = set(range(tp, tp + est[j]))
                done[j] = tp + est[j]
                tau = tp + est[j]
                continue
        slots[j] = set(range(x, x + est[j]))
        done[j] = x + est[j]
        tau = x
    for j, ys in slots.items():
        done[j] = max(ys) + 1  # every job here runs >= 1 s
    keys = {}
    for position, j in enumerate(L0):
        c = done[j]
        k = -5
        if 2 * size[j] > m:
            while c * c > 2 ** (2 * k + 1):  # c / sqrt(2) <= 2^k
                k += 1
            keys[j] = (2 * k + 1, position)
        else:
            while c > 2**k:
                k += 1
            keys[j] = (2 * k, position)
    return sorted(W, key=keys.__getitem__)


def smart(W, size, est, w, m, first_fit):
    def bin_of(e):
        if e <= 1:
            return 0
        k = 1
        while not 2 ** (k - 1) < e <= 2**k:
            k += 1
        return k

    shelves = []
    for b in sorted({bin_of(est[j]) for j in W}):
        members = [j for j in W if bin_of(est[j]) == b]
        if first_fit:
            members.sort(key=lambda j: (size[j] * est[j], j))
        else:
            members.sort(key=lambda j: (size[j] / w[j], j))
        mine = []
        for j in members:
            target = None
            if first_fit:
                for shelf in mine:
                    if sum(size[i] for i in shelf) + size[j] <= m:
                        target = shelf
                        break
            elif mine and sum(size[i] for i in mine[-1]) + size[j] <= m:
                target = mine[-1]
            if target is None:
                target = []
                mine.append(target)
            target.append(j)
        for shelf in mine:
            ratio = sum(w[i] for i in shelf) / max(est[i] for i in shelf)
            shelves.append((-ratio, b, len(shelves), shelf))
    shelves.sort(key=lambda s: s[:3])
    return [j for s in shelves for j in s[3]]


ORDER = {
    "psrs": psrs,
    "smart_ffia": lambda *a: smart(*a, True),
    "smart_nfiw": lambda *a: smart(*a, False),
}


def reference(jobs, m, order, mode, weight, ratio=2 / 3):
    """Start of every job, jobs_backfilled, orders_computed."""
    r = [j[0] for j in jobs]
    size = [j[1] for j in jobs]
    p = [j[2] for j in jobs]
    est = [j[3] for j in jobs]
    w = [1 if weight == "unit" else size[j] * est[j] for j in range(len(jobs))]
    n = len(jobs)
    start = [None] * n
    running = {}  # job -> start
    waiting = []
    computed_order, N, U, computed, backfilled = [], 0, 0, 0, 0
    res = {}

    def planned(k, t):
        return max(running[k] + est[k], t)

    def usage(y, t, booked):
        used = sum(size[k] for k in running if planned(k, t) > y)
        return used + sum(size[k] for k, b in booked.items() if b <= y < b + est[k])

    def earliest(j, t, booked):
        x = t
        while True:
            if est[j] == 0:
                if usage(x, t, booked) + size[j] <= m:
                    return x
            elif all(usage(y, t, booked) + size[j] <= m for y in range(x, x + est[j])):
                return x
            x += 1

    def shadow(h, t):
        """Earliest q >= t where h fits given the running jobs' planned ends."""
        for q in [t, *sorted(planned(k, t) for k in running)]:
            used = sum(size[k] for k in running if planned(k, t) > q)
            if used + size[h] <= m:
                return q

    t = -1
    i = 0  # next arrival
    while None in start:
        # A job of zero runtime ends at its start: one more pass at that time.
        t = min([running[k] + p[k] for k in running] + r[i : i + 1])
        for k in [k for k in running if running[k] + p[k] == t]:
            del running[k]
        arrived = []
        while i < n and r[i] == t:
            arrived.append(i)
            i += 1
        for j in arrived:
            waiting.append(j)
            if mode == "conservative":
                res[j] = earliest(j, t, res)
        if not waiting:
            continue
        recomputed = False
        if order != "fcfs" and arrived and (N == 0 or ratio is None or U > ratio * N):
            computed_order = ORDER[order](list(waiting), size, est, w, m)
            N, U = len(computed_order), 0
            computed += 1
            recomputed = True
        L = [j for j in computed_order if j in waiting]
        L += [j for j in waiting if j not in computed_order]
        free = m - sum(size[k] for k in running)
        began = []
        if mode in ("none", "greedy"):
            for j in L:
                if size[j] <= free:
                    began.append(j)
                    free -= size[j]
                elif mode == "none":
                    break
        elif mode == "easy":
            h = None
            for j in L:
                if h is None and size[j] <= free:
                    began.append(j)
                    free -= size[j]
                    running[j] = t
                elif h is None:
                    h = j

                    S = shadow(h, t)
                elif size[j] <= free:
                    running[j] = t
                    if shadow(h, t) <= S:
                        began.append(j)
                        free -= size[j]
                    else:
                        del running[j]
            for j in began:
                del running[j]
        else:
            if recomputed:
                res = {}
                for j in L:
                    res[j] = earliest(j, t, res)
            position = {j: k for k, j in enumerate(L)}
            old = dict(res)
            res = {}
            for j in sorted(L, key=lambda j: (old[j], position[j])):
                res[j] = earliest(j, t, res)
            for j in L:
                if res[j] == t and size[j] <= free:
                    began.append(j)
                    free -= size[j]
                    del res[j]
        for j in began:
            start[j] = t
            running[j] = t
            waiting.remove(j)
            if j in computed_order:
                U += 1
                computed_order.remove(j)
        for pos, j in enumerate(L):
            if j in began and any(i in waiting for i in L[:pos]):
                backfilled += 1
    return start, backfilled, computed


def instance(rng, n, m):
    jobs = []
    t = 0
    for _ in range(n):
        t += int(rng.integers(0, 4))
        est = int(rng.integers(1, 9))
        jobs.append((t, int(rng.integers(1, m + 1)), int(rng.integers(0, est + 1)), est))
    return jobs


CASES = [
    (order, mode, weight)
    for order in ("fcfs", "psrs", "smart_ffia", "smart_nfiw")
    for mode in ("none", "easy", "conservative", "greedy")
    for weight in ("unit", "work")
]


@pytest.mark.parametrize(("order", "mode", "weight"), CASES)
def test_simulator_matches_the_literal_rules(order, mode, weight):
    rng = np.random.default_rng([hash_name(order), hash_name(mode), hash_name(weight)])
    for trial in range(20):
        m = int(rng.choice([3, 4, 5, 8]))
        jobs = instance(rng, int(rng.integers(3, 15)), m)
        ratio = None if trial % 4 == 3 else 2 / 3
        expected = reference(jobs, m, order, mode, weight, ratio)
        r, size, p, est = zip(*jobs, strict=True)
        schedule = run_schedule(
            from_arrays(r, size, p, est),
            m,
            LIST_MODES[mode],
            options=ListOptions(order=order, weight=weight, reorder_ratio=ratio),
        )
        check_feasible(schedule)
        got = (schedule.start.tolist(), schedule.jobs_backfilled, schedule.orders_computed)
        assert got == expected, (m, jobs, ratio)


def hash_name(name: str) -> int:
    return sum(ord(c) * 31**k for k, c in enumerate(name)) % 2**32
