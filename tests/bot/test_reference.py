"""The heuristics against literal transcriptions of the model document's pseudo-code.

The implementations use heaps, task classes and processor groups for speed; the references
below scan everything at every step, exactly as written. On small random grids full of ties
(equal speeds, equal file sizes, warm data, several jobs, caps) both must produce the same
copies, in the same order, on the same processors, at the same times.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from campaign.models.bot import (
    Platform,
    Simulator,
    StorageAffinity,
    Workload,
    Workqueue,
    XSufferage,
)


class Passive:
    def file_arrived(self, sim, task, site):
        pass

    def processor_freed(self, sim, proc):
        pass


class LiteralWQR(Passive):
    def __init__(self, cap, rng):
        self.cap, self.rng = cap, rng

    def start_job(self, sim):
        self.order = [int(t) for t in self.rng.permutation(sim.n)]
        self.waiting = list(self.order)
        self.rho = -1

    def dispatch(self, sim):
        while sim.n_idle:
            if self.waiting:
                task = self.waiting.pop(0)
            else:
                running = [
                    t
                    for t in self.order
                    if not sim.done[t] and 0 < len(sim.task_copies[t]) < self.cap
                ]
                if not running:
                    return
                task = min(running, key=lambda t: (len(sim.task_copies[t]), self.order.index(t)))
            site = next(
                i % sim.n_sites
                for i in range(self.rho + 1, self.rho + 1 + sim.n_sites)
                if sim.site_idle[i % sim.n_sites]
            )
            self.rho = site
            sim.start_copy(task, sim.take_idle(site), whole_file=True)


class LiteralSA(Passive):
    def __init__(self, cap):
        self.cap = cap

    def start_job(self, sim):
        self.waiting = list(range(sim.n))

    def affinity(self, sim, task, site):
        return sim.sizes[task] if sim.present[site][task] else 0.0

    def dispatch(self, sim):
        sites = range(sim.n_sites)
        while sim.n_idle:
            best = None
            if self.waiting:
                for t in self.waiting:
                    for i in sites:
                        if sim.site_idle[i]:
                            sa = self.affinity(sim, t, i)
                            if best is None or sa >= best[0]:  # the source's '<='
                                best = (sa, t, i)
                self.waiting.remove(best[1])
            else:
                c1 = [
                    t
                    for t in range(sim.n)
                    if not sim.done[t]
                    and len(sim.task_copies[t]) < self.cap
                    and any(sim.site_idle[i] and self.affinity(sim, t, i) > 0 for i in sites)
                ]
                if not c1:
                    return
                fewest = min(sim.replicas[t] for t in c1)
                for t in (t for t in c1 if sim.replicas[t] == fewest):
                    for i in sites:
                        if sim.site_idle[i]:
                            sa = self.affinity(sim, t, i)
                            if best is None or sa > best[0]:  # strict '>'
                                best = (sa, t, i)
            _, task, site = best
            sim.start_copy(task, sim.take_idle(site))


class LiteralXSufferage(XSufferage):
    def start_job(self, sim):
        super().start_job(sim)  # the tested mapping, replaced below by the literal one
        self.queues = literal_mapping(sim)
        self.pending = [p for p in range(sim.n_procs) if self.queues[p]]


def literal_mapping(sim):
    bandwidth = sim.link.capacity * sim.link.availability
    ready = [sim.now] * sim.n_procs
    here = [bytearray(h) for h in sim.present]
    unmapped = list(range(sim.n))
    queues = [[] for _ in range(sim.n_procs)]

    def ct(t, p):
        site = sim.proc_site[p]
        missing = 0.0 if here[site][t] else sim.sizes[t]
        return ((ready[p] + sim.latency) + missing / bandwidth) + sim.cost[t] / sim.rate(p)

    while unmapped:
        chosen = None
        for t in unmapped:
            values = [min(ct(t, p) for p in procs) for procs in sim.site_procs if procs]
            ordered = sorted(values)
            suff = ordered[1] - ordered[0] if len(ordered) > 1 else math.inf
            if chosen is None or suff >= chosen[0]:  # the source's '<=': later task wins
                chosen = (suff, t)
        t = chosen[1]
        site = min(
            (i for i in range(sim.n_sites) if sim.site_procs[i]),
            key=lambda i: (min(ct(t, p) for p in sim.site_procs[i]), i),
        )
        proc = min(sim.site_procs[site], key=lambda p: (ct(t, p), p))
        ready[proc] = ct(t, proc)
        here[site][t] = 1
        queues[proc].append(t)
        unmapped.remove(t)
    return queues


def random_case(seed):
    rng = np.random.default_rng(seed)
    n_sites = int(rng.integers(2, 4))
    sites = [
        list(rng.choice([1.0, 2.0, 4.0], size=int(rng.integers(1, 4)))) for _ in range(n_sites)
    ]
    n = int(rng.integers(3, 13))
    sizes = tuple(float(s) for s in rng.choice([100.0, 200.0, 300.0], size=n))
    jobs = tuple(
        tuple(float(c) for c in rng.choice([5.0, 10.0, 20.0, 40.0], size=n)) for _ in range(3)
    )
    placement = {i: [t for t in range(n) if rng.random() < 0.3] for i in range(n_sites)}
    return Platform.from_sites(sites), Workload(sizes, jobs), placement


def log(platform, workload, placement, heuristic, latency=0.0):
    result = Simulator(
        platform, workload, heuristic, link_capacity=50.0, placement=placement, latency=latency
    ).run()
    return [(c.job, c.task, c.proc, c.assigned, c.ended, c.state, c.moved) for c in result.copies]


SEEDS = range(40)
LATENCY = [0.0, 3.0]  # seconds before each copy's transfer begins


@pytest.mark.parametrize("latency", LATENCY)
@pytest.mark.parametrize("cap", [1, 2, math.inf])
def test_wqr_matches_the_literal_pseudo_code(cap, latency):
    for seed in SEEDS:
        platform, workload, placement = random_case(seed)
        fast = Workqueue(cap, rng=np.random.default_rng(seed))
        literal = LiteralWQR(cap, np.random.default_rng(seed))
        assert log(platform, workload, placement, fast, latency) == log(
            platform, workload, placement, literal, latency
        ), seed


@pytest.mark.parametrize("latency", LATENCY)
@pytest.mark.parametrize("cap", [1, 2, math.inf])
def test_storage_affinity_matches_the_literal_pseudo_code(cap, latency):
    for seed in SEEDS:
        platform, workload, placement = random_case(seed)
        assert log(platform, workload, placement, StorageAffinity(cap), latency) == log(
            platform, workload, placement, LiteralSA(cap), latency
        ), seed


@pytest.mark.parametrize("latency", LATENCY)
def test_xsufferage_matches_the_literal_pseudo_code(latency):
    for seed in SEEDS:
        platform, workload, placement = random_case(seed)
        assert log(platform, workload, placement, XSufferage(), latency) == log(
            platform, workload, placement, LiteralXSufferage(), latency
        ), seed


def test_xsufferage_matches_the_literal_pseudo_code_on_a_generated_grid():
    from campaign.models.bot import build

    params = {"heuristic": "xsufferage", "grid_heterogeneity": 8, "granularity_mb": 75}
    for ha, app in [(0.0, "visualization"), (0.5, "pattern_search")]:
        cell = params | {"app_heterogeneity": ha, "app_type": app, "jobs": 2}
        setup = build(cell, 9)
        platform, workload = setup.platform, setup.workload
        result = [
            Simulator(platform, workload, heuristic).run().copies
            for heuristic in (XSufferage(), LiteralXSufferage())
        ]
        fast, literal = ([(c.job, c.task, c.proc, c.assigned, c.ended) for c in r] for r in result)
        assert fast == literal
