"""The economic scenario against a literal, slow re-implementation of economic.md 2-7.

The reference keeps every reservation (a finished job's shrinks to its real end), asks each
processor each question by the definitions (free over a window, a_q, b_q, busy time), reads
every shift's terms afresh and ranks offers as section 5 says; the simulator drops finished
reservations, tests candidates by matrix products and reads a_q and b_q once per candidate.
On random small grids full of ties (times in multiples of 12, so every value is exact) both
give the same schedule, processor by processor, and the same number of offers; and on a few
of them at real-valued times, where a shift's window end (b - est) + est may round past b.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from campaign.models.grid.economic import EconomicGrid, EconomicOptions, simulate
from campaign.models.grid.measure import check_grid_feasible
from campaign.models.grid.schedule import GridOptions, simulate_grid
from campaign.models.rigid.workload import from_arrays

INF = math.inf


def mf_value(mf, A, under, over, lr, lrr):
    return {
        1: (A + over + under + lr) * (1 - lrr),
        2: A + over + under + lr,
        3: (A + over + under) * (1 - lrr),
        4: (A + lr) * (1 - lrr),
        5: (A + over + lr) * (1 - lrr),
        6: (A + under + lr) * (1 - lrr),
    }[mf]


def uf_value(uf, start, cost):
    return {
        1: -start,
        2: -cost,
        3: -(start + cost),
        4: -(start + 2 * cost),
        5: -(2 * start + cost),
    }[uf]


def breadth_first(home, m, topology, hops):
    def knows(k):
        if topology == "full":
            return [x for x in range(m) if x != k]
        return [x for x in ((k - 1) % m, (k + 1) % m) if x != k]

    seen = {home: 0}
    layer = [home]
    for step in range(1, hops + 1):
        layer = [x for k in layer for x in knows(k) if x not in seen and not seen.update({x: step})]
    return seen


class Reference:
    def __init__(self, machines, o: EconomicOptions, overhead, max_parts):
        self.m = machines
        self.o = o
        self.overhead = overhead
        self.max_parts = max_parts
        self.R = [[] for _ in machines]  # [processors, b, planned e, real end]
        self.offers_made = 0

    # -- the definitions, one processor at a time
    def end(self, r, now):
        return r[3] if r[3] <= now else r[2]

    def held(self, k, now):
        """Machine k's reservations; one shrunk to nothing (a job of runtime 0) holds nothing."""
        return [r for r in self.R[k] if self.end(r, now) > r[1]]

    def free(self, k, q, x, y, now):
        return all(
            not (max(r[1], x) < min(self.end(r, now), y)) for r in self.held(k, now) if q in r[0]
        )

    def a(self, k, q, s, now):
        return max(
            [now]
            + [self.end(r, now) for r in self.held(k, now) if q in r[0] and self.end(r, now) <= s]
        )

    def b(self, k, q, x, now):
        return min([INF] + [r[1] for r in self.held(k, now) if q in r[0] and r[1] >= x])

    def H(self, k, now):
        return max([now] + [self.end(r, now) for r in self.held(k, now)])

    def busy(self, k, q, x, y, now):
        return sum(
            max(0, min(self.end(r, now), y) - max(r[1], x)) for r in self.held(k, now) if q in r[0]
        )

    def F(self, k, x, est, now):
        return [q for q in range(self.m[k]) if self.free(k, q, x, x + est, now)]

    def N(self, k, free, size, x, est, now):
        H = self.H(k, now)

        def fit(q):
            return (x - self.a(k, q, x, now)) + max(
                0, min(self.b(k, q, x + est, now), H) - (x + est)
            )

        return sorted(free, key=lambda q: (fit(q), q))[:size]

    def value(self, k, N, s, est, now):
        H = self.H(k, now)
        A = len(N) * est
        under = sum(s - self.a(k, q, s, now) for q in N)
        over = sum(max(0, min(self.b(k, q, s + est, now), H) - (s + est)) for q in N)
        lr = sum(est - self.busy(k, q, s, s + est, now) for q in range(self.m[k]) if q not in N)
        lrr = lr / A if A > 0 else 0
        return mf_value(self.o.mf, A, under, over, lr, lrr)

    def starts(self, ks, now):
        return sorted(
            {now}
            | {self.end(r, now) for k in ks for r in self.held(k, now) if self.end(r, now) > now}
        )

    # -- offers
    def single(self, k, hops, size, est, now):
        offers = []
        H = self.H(k, now)
        for tau in self.starts([k], now):
            if len(offers) == self.o.offers_per_machine:
                break
            free = self.F(k, tau, est, now)
            if len(free) < size:
                continue
            N = self.N(k, free, size, tau, est, now)
            b = min(self.b(k, q, tau, now) for q in N)
            hi = min(b - est, max(tau, H - est))
            while hi + est > b:  # the window must end by b, in floating point too
                hi = math.nextafter(hi, -INF)
            hi = max(hi, tau)
            Z = self.o.shifts
            shifts = (
                [tau]
                if Z == 1 or hi == tau
                else [min(tau + z * (hi - tau) / (Z - 1), hi) for z in range(Z)]
            )
            best = None
            for s in shifts:
                cost = self.value(k, N, s, est, now)
                key = (-uf_value(self.o.uf, s, cost), cost, s)
                if best is None or key < best[0]:
                    best = (key, s, cost)
            _, s, cost = best
            offers.append((uf_value(self.o.uf, s, cost), cost, s, hops, k, tau, ((k, N),)))
        return offers

    def multi(self, reach, size, est, now):
        o = self.o
        offers = []
        for s in self.starts(list(reach), now):
            if len(offers) == o.offers_per_machine:
                break
            c = {}
            for k in reach:
                c[k] = len(self.F(k, s, est, now))
                if o.max_multisite is not None:
                    c[k] = min(c[k], o.max_multisite)
            order = sorted((k for k in reach if c[k] >= o.min_multisite), key=lambda k: (-c[k], k))
            if self.max_parts is not None:
                order = order[: self.max_parts]
            rem, parts = size, []
            for k in order:
                if rem == 0:
                    break
                q = min(c[k], rem)
                if 0 < rem - q < o.min_multisite:
                    q = q - (o.min_multisite - (rem - q))
                    if q < o.min_multisite:
                        continue
                parts.append((k, q))
                rem -= q
            if rem != 0 or len(parts) < 2:
                continue
            chosen = tuple((k, self.N(k, self.F(k, s, est, now), q, s, est, now)) for k, q in parts)
            cost = sum(self.value(k, N, s, est, now) for k, N in chosen)
            hops = max(reach[k] for k, _ in parts)
            offers.append(
                (
                    uf_value(o.uf, s, cost),
                    cost,
                    s,
                    hops,
                    min(reach_k for reach_k, _ in parts),
                    s,
                    chosen,
                )
            )
        return offers

    def offers(self, size, est, home, now):
        o = self.o
        reach = breadth_first(home, len(self.m), o.topology, o.hops)
        single_ok = o.max_multisite is None or size <= o.max_multisite
        offers = []
        if single_ok:
            for k, hops in reach.items():
                if size <= self.m[k]:
                    offers += self.single(k, hops, size, est, now)
        fits = single_ok and any(size <= self.m[k] for k in reach)
        wanted = o.multisite == "always" or (o.multisite == "required" and not fits)
        if wanted and len(reach) > 1:
            offers += self.multi(reach, size, est * (1 + self.overhead), now)
        return offers

    def request(self, size, est, p, home, now):
        offers = self.offers(size, est, home, now)
        self.offers_made += len(offers)
        winner = min(offers, key=lambda x: (-x[0], x[1], x[2], x[3], x[4], x[5]))
        _, _, s, _, _, _, parts = winner
        stretch = 1 + self.overhead if len(parts) > 1 else 1
        for k, N in parts:
            if est * stretch > 0:
                self.R[k].append([set(N), s, s + est * stretch, s + p * stretch])
        return s, parts


def random_case(seed):
    rng = np.random.default_rng(seed)
    machines = tuple(int(x) for x in rng.choice([2, 3, 4, 6], size=rng.integers(1, 4)))
    n = 25
    submit = np.cumsum(rng.choice([0, 0, 12, 24, 36], size=n)).astype(float)
    size = rng.integers(1, max(machines) + 3, size=n)
    est = 12.0 * rng.integers(1, 7, size=n) * (rng.random(n) > 0.08)  # some of length 0
    runtime = np.where(rng.random(n) < 0.5, est, 12.0 * rng.integers(0, 7, size=n))
    runtime = np.minimum(runtime, est)
    max_ms = [None, 2, 3][rng.integers(3)]
    options = EconomicOptions(
        mf=int(rng.integers(1, 7)),
        uf=int(rng.integers(1, 6)),
        hops=int(rng.integers(0, 3)),
        topology=["full", "ring"][rng.integers(2)],
        offers_per_machine=int(rng.integers(1, 4)),
        shifts=int(rng.choice([1, 2, 3, 5])),
        multisite=["required", "always", "off"][rng.integers(3)],
        min_multisite=int(rng.integers(1, 3)),
        max_multisite=max_ms if max_ms is None else max(max_ms, 2),
    )
    overhead = float(rng.choice([0.0, 0.5]))
    max_parts = [None, 2][rng.integers(2)]
    return machines, submit, size, est, runtime, options, overhead, max_parts


def real_valued_case(seed):
    """``random_case(seed)`` at real-valued times: submissions, estimates (none of 0),
    runtimes and the overhead scaled and jittered, so that sums and differences round."""
    machines, submit, size, est, runtime, options, overhead, max_parts = random_case(seed)
    rng = np.random.default_rng(10_000 + seed)
    n = len(submit)
    scale = rng.uniform(0.9, 1.1)
    submit = np.sort(submit * scale + rng.uniform(0, 7, n) * (rng.random(n) < 0.7))
    est = np.where(est == 0, 12.0, est) * rng.uniform(0.8, 1.3, n)
    runtime = np.minimum(runtime * rng.uniform(0.5, 1.0, n), est)
    return machines, submit, size, est, runtime, options, overhead * 0.73, max_parts


# Seeds 54 and 70 place a job of no duration whose last shift reaches the end of a
# reservation holding its processor (a_q changes from shift to shift).
@pytest.mark.parametrize("seed", [*range(40), 54, 70])
def test_simulator_matches_the_literal_reference(seed):
    same_schedule_as_the_reference(random_case(seed))


# On these (b - est) + est rounds past the next reservation's begin b at some last shift.
@pytest.mark.parametrize("seed", [175, 369, 577])
def test_simulator_matches_the_literal_reference_at_real_valued_times(seed):
    same_schedule_as_the_reference(real_valued_case(seed))


def same_schedule_as_the_reference(case):
    """The simulator places every job of ``case`` (a ``random_case``) where the reference
    does, on the same processors, after as many offers."""
    machines, submit, size, est, runtime, options, overhead, max_parts = case
    home = np.arange(len(submit)) % len(machines)
    # The drop rule: a job is kept iff the reference makes it an offer on idle machines.
    empty = Reference(machines, options, overhead, max_parts)
    keep = np.array(
        [bool(empty.offers(int(z), e, int(h), 0.0)) for z, e, h in zip(size, est, home)]
    )
    grid = EconomicGrid(machines, [], [], [], [], options, overhead, max_parts)
    assert keep.tolist() == [grid.placeable(int(z), int(h)) for z, h in zip(size, home)]
    submit, size, est, runtime, home = (x[keep] for x in (submit, size, est, runtime, home))

    reference = Reference(machines, options, overhead, max_parts)
    expected = []
    for j in range(len(submit)):
        s, parts = reference.request(int(size[j]), est[j], runtime[j], int(home[j]), submit[j])
        expected.append((s, tuple((k, tuple(N)) for k, N in parts)))

    workload = from_arrays(submit, size, runtime, estimate=est)
    result = simulate_grid(
        workload,
        machines,
        GridOptions(
            sharing="economic", economic=options, overhead=overhead, max_parts=max_parts, home=home
        ),
    )
    check_grid_feasible(result)
    got = [
        (
            float(result.start[j]),
            tuple((k, nodes) for (k, _), nodes in zip(result.parts[j], result.nodes[j])),
        )
        for j in range(len(submit))
    ]
    assert got == expected
    assert result.offers_made == reference.offers_made


def test_the_random_cases_cover_every_rule():
    """The 40 cases meet every function, topology, multi-site mode, shift count and stretch
    and jobs of length 0, and their winners include multi-site offers, shifted starts and
    remote machines."""
    cases = [random_case(seed) for seed in range(40)]
    options = [c[5] for c in cases]
    assert {o.mf for o in options} == set(range(1, 7))
    assert {o.uf for o in options} == set(range(1, 6))
    assert {o.topology for o in options} == {"full", "ring"}
    assert {o.multisite for o in options} == {"required", "always", "off"}
    assert {o.shifts for o in options} == {1, 2, 3, 5}
    assert {c[6] for c in cases} == {0.0, 0.5} and {len(c[0]) for c in cases} == {1, 2, 3}
    multisite = shifted = remote = 0
    for machines, submit, size, est, runtime, o, overhead, max_parts in cases:
        home = np.arange(len(submit)) % len(machines)
        grid = EconomicGrid(machines, [], [], [], [], o, overhead, max_parts)
        keep = np.array([grid.placeable(int(z), int(h)) for z, h in zip(size, home)])
        args = (x[keep] for x in (size, est, runtime, home))
        grid = EconomicGrid(machines, *args, o, overhead, max_parts)
        _, winners = simulate(grid, submit[keep])
        multisite += sum(len(w.parts) > 1 for w in winners)
        shifted += sum(w.start > w.candidate for w in winners)
        remote += sum(
            any(k != h for k, _ in w.parts) for w, h in zip(winners, home[keep], strict=True)
        )
    assert multisite >= 50 and shifted >= 5 and remote >= 50
    assert sum((c[3] == 0).sum() for c in cases) >= 50  # jobs of length 0
