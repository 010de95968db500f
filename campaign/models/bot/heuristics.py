"""The scheduling heuristics: which copy of which task starts on which processor.

Each works through the simulator's small interface (idle processors per site, data on each
site's server, copies per task) and keeps its own per-job state. Ties follow the model
document; nothing depends on set or dict order.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np

from .simulator import Simulator


class Workqueue:
    """Workqueue with Replication (WQR): tasks in random order to sites in round robin, then
    replicas of the running task with the fewest copies while processors are idle.

    ``cap`` = most simultaneous copies of a task (``math.inf``: unlimited; 1: the plain
    workqueue). Every copy moves its whole input file: WQR uses no information at all.
    ``orders`` fixes the task order of each job instead of drawing it from ``rng``.
    """

    def __init__(
        self,
        cap: float = math.inf,
        rng: np.random.Generator | None = None,
        orders: Sequence[Sequence[int]] | None = None,
    ) -> None:
        if rng is None and orders is None:
            raise ValueError("Workqueue needs a policy rng or explicit task orders")
        self.cap = cap
        self.rng = rng
        self.orders = orders

    def start_job(self, sim: Simulator) -> None:
        if self.orders is not None:
            order = [int(t) for t in self.orders[sim.job]]
        else:
            order = [int(t) for t in self.rng.permutation(sim.n)]
        if sorted(order) != list(range(sim.n)):
            raise ValueError("a task order must be a permutation of the job's tasks")
        self.order = order
        self.rank = [0] * sim.n
        for position, task in enumerate(order):
            self.rank[task] = position
        self.head = 0
        self.site = -1  # the site that got the last copy (rho)
        self.replicable: list[tuple[int, int, int]] | None = None

    def dispatch(self, sim: Simulator) -> None:
        n_sites = sim.n_sites
        while sim.n_idle:
            if self.head < len(self.order):
                task = self.order[self.head]
                self.head += 1
            else:
                task = self._replica_candidate(sim)
                if task < 0:
                    return
            site = self.site
            for _ in range(n_sites):
                site = (site + 1) % n_sites
                if sim.site_idle[site]:
                    break
            self.site = site
            sim.start_copy(task, sim.take_idle(site), whole_file=True)
            if self.replicable is not None:
                copies = len(sim.task_copies[task])
                if copies < self.cap:
                    heapq.heappush(self.replicable, (copies, self.rank[task], task))

    def _replica_candidate(self, sim: Simulator) -> int:
        """The running task with the fewest copies below the cap (ties: earliest in the
        order), or -1. Copies of an unfinished task only ever increase, so a heap keyed by
        copies with stale entries skipped is exact."""
        if self.replicable is None:
            self.replicable = [
                (len(sim.task_copies[t]), self.rank[t], t)
                for t in range(sim.n)
                if not sim.done[t] and len(sim.task_copies[t]) < self.cap
            ]
            heapq.heapify(self.replicable)
        heap = self.replicable
        while heap:
            copies, _, task = heap[0]
            if sim.done[task] or copies != len(sim.task_copies[task]):
                heapq.heappop(heap)
                continue
            heapq.heappop(heap)
            return task
        return -1

    def file_arrived(self, sim: Simulator, task: int, site: int) -> None:
        pass

    def processor_freed(self, sim: Simulator, proc: int) -> None:
        pass


class StorageAffinity:
    """Storage Affinity: a task goes where most of its input already is; once every task has
    started, idle processors replicate running tasks whose data is on their site.

    With one file per task, SA(t, i) is the file's size when site i holds it, else 0.
    Phase 1 keeps per site a max-heap of waiting tasks whose file the site holds, keyed by
    (size, task) so the last task wins ties; phase 2 keeps per site a min-heap of running
    tasks whose file the site holds, keyed by (replicas, -size, task) so the least replicated,
    then largest, then first task wins. Stale heap entries are skipped when they surface.
    """

    def __init__(self, cap: float = math.inf) -> None:
        self.cap = cap

    def start_job(self, sim: Simulator) -> None:
        sizes = sim.sizes
        self.waiting = bytearray([1]) * sim.n
        self.n_waiting = sim.n
        self.last_waiting = sim.n - 1
        self.affine = []
        for site in range(sim.n_sites):
            here = sim.present[site]
            heap = [(-sizes[t], -t) for t in range(sim.n) if here[t]]
            heapq.heapify(heap)
            self.affine.append(heap)
        self.replicable: list[list[tuple[int, float, int]]] = [[] for _ in range(sim.n_sites)]

    def file_arrived(self, sim: Simulator, task: int, site: int) -> None:
        if self.waiting[task]:
            heapq.heappush(self.affine[site], (-sim.sizes[task], -task))
        elif not sim.done[task]:
            self._offer(sim, task, (site,))

    def processor_freed(self, sim: Simulator, proc: int) -> None:
        pass

    def _offer(self, sim: Simulator, task: int, sites: Sequence[int]) -> None:
        """Make a running task a replication candidate on ``sites`` (which hold its file)."""
        if len(sim.task_copies[task]) < self.cap:
            entry = (sim.replicas[task], -sim.sizes[task], task)
            for site in sites:
                heapq.heappush(self.replicable[site], entry)

    def dispatch(self, sim: Simulator) -> None:
        while sim.n_idle:
            if self.n_waiting:
                task, site = self._place_waiting(sim)
                self.waiting[task] = 0
                self.n_waiting -= 1
                sim.start_copy(task, sim.take_idle(site))
                self._offer(sim, task, sim.holders[task])
            else:
                task = self._replica_candidate(sim)
                if task < 0:
                    return
                site = next(i for i in sim.holders[task] if sim.site_idle[i])
                sim.start_copy(task, sim.take_idle(site))
                self._offer(sim, task, sim.holders[task])

    def _place_waiting(self, sim: Simulator) -> tuple[int, int]:
        """Phase 1: the (task, site) pair of largest affinity among sites with an idle
        processor; ties go to the last pair (tasks outer, sites inner)."""
        best: tuple[float, int, int] | None = None
        waiting = self.waiting
        for site in range(sim.n_sites):
            if not sim.site_idle[site]:
                continue
            heap = self.affine[site]
            while heap and not waiting[-heap[0][1]]:
                heapq.heappop(heap)
            if heap:
                key = (-heap[0][0], -heap[0][1], site)
                if best is None or key > best:
                    best = key
        if best is not None:
            return best[1], best[2]
        while not waiting[self.last_waiting]:
            self.last_waiting -= 1
        return self.last_waiting, sim.idle_sites()[-1]

    def _replica_candidate(self, sim: Simulator) -> int:
        """Phase 2: among running tasks below the cap whose file is on a site with an idle
        processor, the least replicated, then the largest file, then the first task; -1 if
        none. Replica counts and copies of an unfinished task only grow, so an entry is
        current exactly when its replica count still matches."""
        best: tuple[int, float, int] | None = None
        for site in range(sim.n_sites):
            if not sim.site_idle[site]:
                continue
            heap = self.replicable[site]
            while heap:
                replicas, _, task = heap[0]
                if (
                    sim.done[task]
                    or replicas != sim.replicas[task]
                    or len(sim.task_copies[task]) >= self.cap
                ):
                    heapq.heappop(heap)
                else:
                    break
            if heap and (best is None or heap[0] < best):
                best = heap[0]
        return -1 if best is None else best[2]


class XSufferage:
    """XSufferage: at each job's release, a full static mapping with perfect information
    (speeds, data location, the whole link, availability at release); no replication. Each
    processor then runs its list in order, starting a copy when the previous one ends.

    ``cost_errors[k][t]`` (optional) multiplies task t's cost in the estimates of job k: an
    information error. The scheduler latency is part of every estimate.
    """

    def __init__(self, cost_errors: Sequence[Sequence[float]] | None = None) -> None:
        self.cost_errors = cost_errors

    def start_job(self, sim: Simulator) -> None:
        errors = None if self.cost_errors is None else self.cost_errors[sim.job]
        self.queues = xsufferage_mapping(sim, errors)
        self.next = [0] * sim.n_procs
        self.pending = [p for p in range(sim.n_procs) if self.queues[p]]

    def processor_freed(self, sim: Simulator, proc: int) -> None:
        self.pending.append(proc)

    def file_arrived(self, sim: Simulator, task: int, site: int) -> None:
        pass

    def dispatch(self, sim: Simulator) -> None:
        pending, self.pending = sorted(self.pending), []
        for proc in pending:
            queue = self.queues[proc]
            if self.next[proc] < len(queue) and sim.is_idle[proc]:
                sim.start_copy(queue[self.next[proc]], proc)
                self.next[proc] += 1


def xsufferage_mapping(
    sim: Simulator, cost_errors: Sequence[float] | None = None
) -> list[list[int]]:
    """Map every task of the current job to a processor list, XSufferage style.

    CT(t, p) = ready(p) + latency + missing bytes of t at site(p) / bandwidth + C_t / rate(p)
    (C_t times its error factor when given); a site's value is its best CT; the task with the
    largest sufferage (second best site value minus best, ties: the later task) goes to the
    best processor of its best site (ties: lowest site, then lowest processor).

    Three reductions keep this fast without changing the result. Tasks with the same cost
    and the same transfer times have the same estimates, so they form one class and are
    mapped latest task first. Processors of a site with the same rate differ only by ready
    time, so only the earliest ready of each such group (lowest index on ties) is a
    candidate. An assignment changes one candidate's ready time, so only that row of its
    site's CT table is recomputed. A task's file is used by no other task, so marking it
    present after mapping changes no estimate.
    """
    n, n_sites = sim.n, sim.n_sites
    rates = np.array([sim.rate(p) for p in range(sim.n_procs)])
    bandwidth = sim.link.capacity * sim.link.availability

    present = np.array([np.frombuffer(bytes(h), dtype=np.uint8) for h in sim.present]).T
    estimate = np.asarray(sim.cost)
    if cost_errors is not None:
        estimate = estimate * np.asarray(cost_errors)
    keys = np.column_stack([estimate, np.asarray(sim.sizes), present])
    unique, klass = np.unique(keys, axis=0, return_inverse=True)
    klass = klass.reshape(-1)
    m = len(unique)
    members: list[list[int]] = [[] for _ in range(m)]
    for task in range(n):  # ascending, so the last member is the latest task
        members[klass[task]].append(task)
    cost = unique[:, 0]
    transfer = [
        np.where(unique[:, 2 + i] > 0, 0.0, unique[:, 1]) / bandwidth for i in range(n_sites)
    ]
    last = np.array([tasks[-1] for tasks in members])

    # Per site: groups of equal-rate processors, each a heap of (ready, proc) whose head is
    # the group's candidate; run times depend only on the group, so they are computed once.
    heaps: list[list[list[tuple[float, int]]]] = []
    heads: list[np.ndarray] = []
    run_time: list[np.ndarray] = []
    group_of = [0] * sim.n_procs
    for site in range(n_sites):
        by_rate: dict[float, list[tuple[float, int]]] = {}
        for proc in sim.site_procs[site]:  # ascending, so each list is already a heap
            by_rate.setdefault(float(rates[proc]), []).append((sim.now, proc))
        groups = list(by_rate.values())
        for index, group in enumerate(groups):
            for _, proc in group:
                group_of[proc] = index
        heaps.append(groups)
        heads.append(np.array([g[0][1] for g in groups], dtype=np.intp))
        group_rates = np.array(list(by_rate), dtype=float)
        run_time.append(cost[None, :] / group_rates[:, None])
    # ct[i][j, c]: completion time of class c on site i's candidate j, kept up to date row
    # by row: an assignment changes one candidate's ready time, hence one row.
    latency = sim.latency
    ct = [((sim.now + latency) + transfer[i][None, :]) + run_time[i] for i in range(n_sites)]
    value = np.full((n_sites, m), math.inf)  # value[i, c] = V_i of class c
    for site in range(n_sites):
        if heads[site].size:
            value[site] = ct[site].min(axis=0)
    alive = np.ones(m, dtype=bool)

    def sufferage() -> np.ndarray:
        """Second best site value minus the best (0 when two sites tie for the best)."""
        if n_sites == 1:
            suff = np.full(m, math.inf)
        else:
            best = value.min(axis=0)
            at_best = value == best
            second = np.where(at_best, math.inf, value).min(axis=0)
            suff = np.where(at_best.sum(axis=0) > 1, 0.0, second - best)
        suff[~alive] = -math.inf
        return suff

    queues: list[list[int]] = [[] for _ in range(sim.n_procs)]
    for _ in range(n):
        suff = sufferage()
        tied = np.flatnonzero(suff == suff.max())
        c = int(tied[np.argmax(last[tied])]) if tied.size > 1 else int(tied[0])
        task = members[c].pop()
        site = int(np.argmin(value[:, c]))
        column = ct[site][:, c]
        procs = heads[site]
        proc = int(procs[column == column.min()].min())  # lowest index among the best
        finish = float(value[site, c])
        queues[proc].append(task)
        if members[c]:
            last[c] = members[c][-1]
        else:
            alive[c] = False
        j = group_of[proc]
        group = heaps[site][j]
        heapq.heapreplace(group, (finish, proc))  # proc was the group's head
        heads[site][j] = group[0][1]
        ct[site][j] = ((group[0][0] + latency) + transfer[site]) + run_time[site][j]
        value[site] = ct[site].min(axis=0)
    return queues
