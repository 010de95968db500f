"""Exact event-driven simulation of OSEP and Fair-Share on n identical machines.

Time jumps from event to event: task completions, checkpoint writes ending, dispatched tasks
starting, owner-load changes, submissions, and the policy's own epochs (decisions at k·T,
negotiations at k·T + offset, each computed as k·T + offset, never accumulated). Nothing is
sampled on a time grid, so integrals (violation, busy time) are exact sums of rectangles.
Epochs that provably cannot act (a decision and a negotiation did nothing and no state has
changed since) are skipped up to the next event; Fair-Share still ages its priorities at
each of them, so the schedule is the one of processing every epoch.

Same-time order: completions, checkpoint writes ending, dispatched tasks starting, owner-load
changes, submissions, decision, negotiation; within one kind, the order the events were
created (submissions: submit time, then task id). Machines are taken lowest index first.

Decisions where the model document is silent:
- A machine between a match and the start of its task (dispatch delay) counts against its
  user's share f_u like a reservation; the task is not active (a_u, violation), cannot be
  preempted, and the machine is not busy (policy_cost); the wait is part of capacity loss
  when the machine was freed by a preemption (loss runs to the task's actual start).
- A checkpointing task is neither active nor ready; it returns to the head of its user's
  queue when the write ends, which is also when its machine is released for the beneficiary.
  The write takes ``checkpoint_cost_s`` whatever the owner load.
- A reserved machine is served at the first negotiation after its release. Idle machines
  left at a negotiation go to users with a non-empty queue, even if part of that queue is
  covered by a reservation still waiting for a checkpoint write; a reservation that then
  finds no ready task is dropped. At a decision, r_u = max(0, queue length - reservations).
- Victims: least time since the latest (re)start; the tie rule "latest start" is read as
  the latest first start, then the highest task id.
- The restart cost is extra work at the machine's rate, paid whenever a task resumes from a
  checkpoint; a task preempted during it keeps only the progress it had.
- Capacity loss of a freed machine that never runs a task again lasts until the makespan.
- Claim reuse: a machine whose task completes starts its user's queue head at once when
  that user has a queued task, even one a reservation was made for (the batch system knows
  no reservations: the reservation then finds no ready task at the negotiation and is
  dropped); otherwise the machine becomes idle. It applies to every policy, as the batch
  system under both keeps the claim. Completions come before submissions of the same time,
  so a task submitted at the instant of a completion waits for a negotiation.
- Fair-Share: ρ_u is the number of u's running tasks at the epoch, before its matches; the
  first update (at the first negotiation epoch) covers the time since 0.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from campaign.models.ownership.shares import PRIORITY_FLOOR, fair_share_order, update_priorities

# Event kinds, in same-time processing order.
COMPLETE, CKPT_DONE, START, OWNER, SUBMIT, DECIDE, NEGOTIATE = range(7)
# Machine states.
IDLE, RUN, CKPT, DISPATCH = range(4)

POLICIES = ("osep", "osep_checkpoint", "fair_share")


@dataclass(frozen=True)
class Settings:
    """Platform and policy of one run; times in seconds."""

    machines: int
    shares: tuple[int, ...]
    policy: str = "osep"
    interval: float = 20.0
    offset: float = 10.0
    dispatch_delay: float = 0.0
    maxt: float = math.inf
    checkpoint_cost: float = 0.0
    restart_cost: float = 0.0
    half_life: float = 86400.0
    share_weighted: bool = False
    owner_load: float = 0.0
    claim_reuse: bool = True


@dataclass(frozen=True)
class Tasks:
    """The workload: per task its user (0-based), submit time and duration; id = position."""

    user: tuple[int, ...]
    submit: tuple[float, ...]
    duration: tuple[float, ...]


@dataclass(frozen=True)
class Segment:
    """One run of a task on a machine; `work` is the work done, restart overhead included."""

    task: int
    machine: int
    start: float
    end: float
    overhead: float
    work: float
    outcome: str  # "done", "killed" or "checkpointed"


@dataclass
class Outcome:
    """What a run produced: completions and the integrals the metrics need."""

    completion: list[float]
    makespan: float
    busy_time: float
    violation: float
    capacity_loss: float
    n_preemptions: int
    events: int
    segments: list[Segment] = field(default_factory=list)
    decisions: list[tuple] = field(default_factory=list)
    negotiations: list[tuple] = field(default_factory=list)
    owner_changes: list[tuple[int, float, bool]] = field(default_factory=list)


def first_epoch(time: float, interval: float, offset: float) -> int:
    """The smallest k with k·interval + offset >= time (epochs are computed as k·T + offset)."""
    k = max(0, math.ceil((time - offset) / interval))
    while k > 0 and (k - 1) * interval + offset >= time:
        k -= 1
    while k * interval + offset < time:
        k += 1
    return k


class Simulation:
    """One run; `simulate` is the entry point. `record` keeps run segments and owner-load
    changes, `observe` keeps per-epoch snapshots (for property tests); `skip_quiet_epochs`
    off processes every epoch (a reference for the skipping)."""

    def __init__(
        self,
        settings: Settings,
        tasks: Tasks,
        periods: Sequence[Iterator[tuple[float, bool]]] | None = None,
        record: bool = False,
        observe: bool = False,
        skip_quiet_epochs: bool = True,
    ):
        self.s = settings
        self.skip_quiet_epochs = skip_quiet_epochs
        self.tasks = tasks
        self.periods = periods
        self.record = record
        self.observe = observe
        n, m, count = settings.machines, len(settings.shares), len(tasks.user)
        self.n, self.m, self.count = n, m, count
        self.checkpointing = settings.policy == "osep_checkpoint"
        # tasks
        self.progress = [0.0] * count
        self.has_checkpoint = [False] * count
        self.first_start = [math.nan] * count
        self.run_start = [0.0] * count
        self.seg_start = [0.0] * count
        self.work_total = [0.0] * count
        self.work_left = [0.0] * count
        self.overhead = [0.0] * count
        self.version = [0] * count
        self.machine_of = [-1] * count
        self.completion = [math.nan] * count
        # machines
        self.state = [IDLE] * n
        self.task_on = [-1] * n
        self.reserved_for = [-1] * n
        self.rate = [1.0] * n
        self.loss_since: list[float | None] = [None] * n
        self.free = list(range(n))  # heap of idle, unreserved machines
        self.released: set[int] = set()  # idle machines holding a reservation
        # users
        self.queue: list[deque[int]] = [deque() for _ in range(m)]
        self.demand = [0] * m
        self.active = [0] * m
        self.reserved = [0] * m
        self.dispatching = [0] * m
        self.running: list[set[int]] = [set() for _ in range(m)]
        self.shortfall = [0] * m
        self.shortfall_total = 0
        self.priority = [PRIORITY_FLOOR] * m
        self.last_negotiation = 0.0
        # integrals and counters
        self.now = 0.0
        self.busy = 0.0
        self.violation = 0.0
        self.loss = 0.0
        self.preemptions = 0
        self.done = 0
        self.makespan = math.nan
        self.events = 0
        self.mutations = 0  # counts state changes, to skip epochs that cannot act
        self.heap: list[tuple] = []
        self.seq = 0
        self.out = Outcome([], math.nan, 0.0, 0.0, 0.0, 0, 0)

    # ----- bookkeeping -------------------------------------------------------------------
    def push(self, time: float, kind: int, *payload: int) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (time, kind, self.seq, *payload))

    def advance(self, time: float) -> None:
        """Integrate the share shortfall over [now, time]."""
        if self.shortfall_total:
            self.violation += self.shortfall_total * (time - self.now)
        self.now = time

    def update_shortfall(self, u: int) -> None:
        value = max(0, min(self.s.shares[u], self.demand[u]) - self.active[u])
        self.shortfall_total += value - self.shortfall[u]
        self.shortfall[u] = value

    def f(self, u: int) -> int:
        """Machines u is below its share, counting reserved and dispatching machines."""
        return self.s.shares[u] - self.active[u] - self.reserved[u] - self.dispatching[u]

    # ----- task life ---------------------------------------------------------------------
    def dispatch(self, u: int, machine: int) -> None:
        """Match u's queue head with a free machine; it starts after the dispatch delay."""
        self.mutations += 1
        task = self.queue[u].popleft()
        self.task_on[machine] = task
        if self.s.dispatch_delay == 0:
            self.start(task, machine)
            return
        self.state[machine] = DISPATCH
        self.dispatching[u] += 1
        self.push(self.now + self.s.dispatch_delay, START, machine)

    def start(self, task: int, machine: int) -> None:
        self.mutations += 1
        u = self.tasks.user[task]
        t = self.now
        self.state[machine] = RUN
        self.task_on[machine] = task
        self.machine_of[task] = machine
        self.active[u] += 1
        self.running[u].add(task)
        self.update_shortfall(u)
        if math.isnan(self.first_start[task]):
            self.first_start[task] = t
        overhead = self.s.restart_cost if self.has_checkpoint[task] else 0.0
        self.overhead[task] = overhead
        self.work_total[task] = self.work_left[task] = (
            overhead + self.tasks.duration[task] - self.progress[task]
        )
        self.run_start[task] = self.seg_start[task] = t
        if self.loss_since[machine] is not None:
            self.loss += t - self.loss_since[machine]
            self.loss_since[machine] = None
        self.schedule_completion(task, machine)

    def schedule_completion(self, task: int, machine: int) -> None:
        self.version[task] += 1
        rate = self.rate[machine]
        if rate > 0:
            self.push(self.now + self.work_left[task] / rate, COMPLETE, task, self.version[task])

    def stop_run(self, task: int, machine: int, outcome: str) -> float:
        """End the current run of a task; return the work it did (restart overhead included)."""
        t = self.now
        self.work_left[task] -= (t - self.seg_start[task]) * self.rate[machine]
        work = (
            self.work_total[task]
            if outcome == "done"
            else self.work_total[task] - max(0.0, self.work_left[task])
        )
        self.busy += t - self.run_start[task]
        u = self.tasks.user[task]
        self.active[u] -= 1
        self.running[u].discard(task)
        if self.record:
            self.out.segments.append(
                Segment(task, machine, self.run_start[task], t, self.overhead[task], work, outcome)
            )
        return work

    def complete(self, task: int, version: int) -> None:
        if version != self.version[task]:
            return
        self.mutations += 1
        machine = self.machine_of[task]
        self.stop_run(task, machine, "done")
        u = self.tasks.user[task]
        self.demand[u] -= 1
        self.update_shortfall(u)
        self.progress[task] = self.tasks.duration[task]
        self.completion[task] = self.makespan = self.now
        self.done += 1
        self.state[machine] = IDLE
        self.task_on[machine] = -1
        if self.s.claim_reuse and self.queue[u]:
            self.dispatch(u, machine)  # the user's claim on the machine is kept
        else:
            heapq.heappush(self.free, machine)

    def suspend(self, task: int, beneficiary: int) -> None:
        """Preempt a running task; its machine is reserved for the beneficiary."""
        self.mutations += 1
        machine = self.machine_of[task]
        self.version[task] += 1
        work = self.stop_run(task, machine, "checkpointed" if self.checkpointing else "killed")
        self.update_shortfall(self.tasks.user[task])
        self.preemptions += 1
        self.reserved_for[machine] = beneficiary
        self.reserved[beneficiary] += 1
        if not self.checkpointing:
            self.progress[task] = 0.0
            self.release(machine)
            return
        self.progress[task] += max(0.0, work - self.overhead[task])
        self.has_checkpoint[task] = True
        if self.s.checkpoint_cost > 0:
            self.state[machine] = CKPT
            self.busy += self.s.checkpoint_cost
            self.push(self.now + self.s.checkpoint_cost, CKPT_DONE, machine)
        else:
            self.release(machine)

    def release(self, machine: int) -> None:
        """A preempted machine becomes idle (still reserved); its task goes back to the head."""
        self.mutations += 1
        task = self.task_on[machine]
        self.queue[self.tasks.user[task]].appendleft(task)
        self.state[machine] = IDLE
        self.task_on[machine] = -1
        self.released.add(machine)
        self.loss_since[machine] = self.now

    def change_owner_load(self, machine: int, busy: bool) -> None:
        task = self.task_on[machine] if self.state[machine] == RUN else -1
        if task >= 0:
            self.work_left[task] -= (self.now - self.seg_start[task]) * self.rate[machine]
            self.work_left[task] = max(0.0, self.work_left[task])
            self.seg_start[task] = self.now
        self.rate[machine] = 1.0 - self.s.owner_load if busy else 1.0
        if task >= 0:
            self.schedule_completion(task, machine)
        if self.record:
            self.out.owner_changes.append((machine, self.now, busy))

    def next_owner_change(self, machine: int) -> None:
        time, busy = next(self.periods[machine])
        self.push(time, OWNER, machine, int(busy))

    # ----- policy epochs -----------------------------------------------------------------
    def decide(self) -> None:
        """OSEP decision epoch (with the fixes of the model document)."""
        m = self.m
        if self.observe:
            before = (self.now, tuple(self.demand), tuple(self.active), len(self.free))
        f = [self.f(u) for u in range(m)]
        r = [max(0, len(self.queue[u]) - self.reserved[u]) for u in range(m)]
        budget = self.s.maxt
        preempted = 0
        while True:
            best, best_f = -1, 0
            for u in range(m):
                if r[u] > 0 and f[u] > best_f:
                    best, best_f = u, f[u]
            if best < 0:
                break
            if self.free:
                self.mutations += 1
                machine = heapq.heappop(self.free)
                self.reserved_for[machine] = best
                self.reserved[best] += 1
                self.released.add(machine)
                f[best] -= 1
                r[best] -= 1
                continue
            if budget == 0:
                break
            victim, victim_f = -1, 0
            for u in range(m):
                if f[u] < victim_f and self.active[u] > 0:
                    victim, victim_f = u, f[u]
            if victim < 0:
                break
            task = max(
                self.running[victim],
                key=lambda j: (self.run_start[j], self.first_start[j], j),
            )
            self.suspend(task, best)
            f[victim] += 1
            f[best] -= 1
            r[best] -= 1
            budget -= 1
            preempted += 1
        if self.observe:
            self.out.decisions.append((*before, preempted, self.s.maxt))

    def negotiate(self) -> None:
        if self.s.policy == "fair_share":
            self.negotiate_fair_share()
        else:
            self.negotiate_osep()
        if self.observe:
            queued = tuple(len(q) for q in self.queue)
            self.out.negotiations.append(
                (self.now, tuple(self.demand), tuple(self.active), queued, len(self.free))
            )

    def negotiate_osep(self) -> None:
        for machine in sorted(self.released):
            u = self.reserved_for[machine]
            self.reserved_for[machine] = -1
            self.reserved[u] -= 1
            self.released.discard(machine)
            if self.queue[u]:
                self.dispatch(u, machine)
            else:
                self.mutations += 1
                heapq.heappush(self.free, machine)
        while self.free:
            best, best_f = -1, -math.inf
            for u in range(self.m):
                if self.queue[u] and self.f(u) > best_f:
                    best, best_f = u, self.f(u)
            if best < 0:
                break
            self.dispatch(best, heapq.heappop(self.free))

    def age_priorities(self, time: float) -> None:
        """Fair-Share priority update of a negotiation epoch at `time`."""
        elapsed = time - self.last_negotiation
        self.last_negotiation = time
        self.priority = update_priorities(self.priority, self.active, elapsed, self.s.half_life)

    def negotiate_fair_share(self) -> None:
        self.age_priorities(self.now)
        if not self.free:
            return
        ready = [len(q) for q in self.queue]
        if not any(ready):
            return
        if self.s.share_weighted:
            effective = [
                self.priority[u] / p if p > 0 else math.inf for u, p in enumerate(self.s.shares)
            ]
        else:
            effective = self.priority
        for u in fair_share_order(len(self.free), ready, effective):
            self.dispatch(u, heapq.heappop(self.free))

    # ----- main loop ---------------------------------------------------------------------
    def simulate(self) -> Outcome:
        tasks = self.tasks
        order = sorted(range(self.count), key=lambda j: (tasks.submit[j], j))
        if self.periods is not None and self.s.owner_load > 0:
            for machine in range(self.n):
                self.next_owner_change(machine)
        interval, offset = self.s.interval, self.s.offset
        fair = self.s.policy == "fair_share"
        k_decide = k_negotiate = 0
        quiet_decide = quiet_negotiate = -1  # mutation count at the last no-op epoch
        submitted = 0
        heap = self.heap
        while self.done < self.count:
            self.events += 1
            time, kind = heap[0][:2] if heap else (math.inf, COMPLETE)
            if submitted < self.count:
                time, kind = min((time, kind), (tasks.submit[order[submitted]], SUBMIT))
            quiet = quiet_decide == quiet_negotiate == self.mutations
            if quiet and self.skip_quiet_epochs and time < math.inf:
                # Both epochs did nothing and nothing changed since: every epoch before the
                # next event would do nothing too (Fair-Share still ages its priorities).
                k_decide = max(k_decide, first_epoch(time, interval, 0.0))
                k_skip = max(k_negotiate, first_epoch(time, interval, offset))
                if fair:
                    for k in range(k_negotiate, k_skip):
                        self.age_priorities(k * interval + offset)
                k_negotiate = k_skip
            time, kind = min((time, kind), (k_decide * interval, DECIDE))
            time, kind = min((time, kind), (k_negotiate * interval + offset, NEGOTIATE))
            self.advance(time)
            if kind == SUBMIT:
                task = order[submitted]
                submitted += 1
                u = tasks.user[task]
                self.demand[u] += 1
                self.queue[u].append(task)
                self.update_shortfall(u)
                self.mutations += 1
            elif kind == DECIDE:
                k_decide += 1
                before = self.mutations
                if not fair:
                    self.decide()
                if self.mutations == before:
                    quiet_decide = before
            elif kind == NEGOTIATE:
                k_negotiate += 1
                before = self.mutations
                self.negotiate()
                if self.mutations == before:
                    quiet_negotiate = before
            else:
                _, _, _, *payload = heapq.heappop(heap)
                if kind == COMPLETE:
                    self.complete(*payload)
                elif kind == CKPT_DONE:
                    self.release(payload[0])
                elif kind == START:
                    machine = payload[0]
                    task = self.task_on[machine]
                    self.dispatching[tasks.user[task]] -= 1
                    self.start(task, machine)
                else:
                    self.change_owner_load(payload[0], bool(payload[1]))
                    self.next_owner_change(payload[0])
        for since in self.loss_since:
            if since is not None:
                self.loss += self.makespan - since
        out = self.out
        out.completion = self.completion
        out.makespan = self.makespan
        out.busy_time = self.busy
        out.violation = self.violation
        out.capacity_loss = self.loss
        out.n_preemptions = self.preemptions
        out.events = self.events
        return out
