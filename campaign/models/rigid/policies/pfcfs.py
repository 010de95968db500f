"""Preemptive FCFS (list-scheduling.md section 5.2): jobs start in arrival order; a wide job
at the head that waited ``delay`` seconds suspends enough running jobs (its victims) and runs
on their processors, alternating with them every ``slice`` seconds for at most
``max_preemptions`` switches. Jobs keep the processors of their first start for life.

Most passes change nothing. A pass can start, suspend or resume a job only after a job ended
that frees what the handler waits for (any job while h waits or the queue's head does; h while
it runs; the last job holding h's processors while h is suspended), after an arrival while
nothing waits, or at the handler's timer (``site.alarm``); every other pass returns at once
(``PfcfsOptions.reference``: none does). The free processors are a sorted list;
only the wide job being handled shares processors (with the jobs it took them from), and those
are counted apart, so a job that starts or ends costs no loop over its processors. Every job's
processors go into one flat list, and only the executions of the jobs suspended are tuples:
a run allocates nothing that lasts per job (``executions`` builds them all when read).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from campaign.models.rigid.executions import Executions
from campaign.models.rigid.policies.base import Policy, PolicyOptions

IDLE, WAIT, RUN_WIDE, RUN_SMALL = "idle", "wait", "run_wide", "run_small"
INF = math.inf


@dataclass(frozen=True)
class PfcfsParams:
    """The parameters of section 5.2 (defaults: preset pfcfs1)."""

    wide: float = 0.5
    """x: a job is wide iff size > x * processors."""
    max_preemptions: int | None = None
    """n: switches per wide job (None: no limit)."""
    delay: float = 600.0
    """D: wait of a wide job at the head before it preempts."""
    slice: float | None = 600.0
    """G: gang length between switches (None: the delay D)."""
    penalty: float = 0.0
    """s: time a switch costs the jobs it makes run."""
    preempt: str = "greedy"
    """Victims: ``greedy`` (few jobs) or ``all`` (every running job)."""
    wait_half: bool = False
    """Start a wide job's clock only once half the processors are free."""


PRESETS: dict[str, PfcfsParams] = {
    "pfcfs1": PfcfsParams(0.5, None, 600.0, 600.0),
    "pfcfs2": PfcfsParams(0.5, 2, 60.0, 60.0),
    "pfcfs3": PfcfsParams(0.5, 1, 600.0, 600.0),
    "theory": PfcfsParams(0.5, None, 600.0, None, preempt="all", wait_half=True),
}
"""Section 5.4 (theory: the slice is the delay, whatever delay is given)."""


@dataclass(frozen=True)
class PfcfsOptions(PolicyOptions):
    params: PfcfsParams = PRESETS["pfcfs1"]
    """The parameters of section 5.2."""


def choose_victims(
    size: Sequence[int], running: dict[int, float], need: int, every: bool
) -> list[int]:
    """The running jobs a wide job suspends to get ``need`` more processors: ``every`` one
    (by first start), or else few: the smallest job that gives what is still needed (ties:
    the latest started), or, when none does, the largest (ties: the earliest started)."""
    if every:
        return sorted(running, key=lambda job: (running[job], job))
    candidates = set(running)
    chosen = []
    while need > 0:
        fits = [job for job in candidates if size[job] >= need]
        if fits:
            pick = min(fits, key=lambda job: (size[job], -running[job], -job))
        else:
            pick = max(candidates, key=lambda job: (size[job], running[job], job))
        chosen.append(pick)
        candidates.discard(pick)
        need -= size[pick]
    return chosen


class Pfcfs(Policy):
    name = "pfcfs"
    preemptive = True
    options_type = PfcfsOptions

    @classmethod
    def create(cls, site, options: PfcfsOptions) -> Policy:
        return cls(site, options.params, options.reference)

    def __init__(self, site, params: PfcfsParams, every_pass: bool = False) -> None:
        super().__init__(site)
        self.params = params
        m = site.processors
        self._wide = params.wide * m
        self._limit = math.inf if params.max_preemptions is None else params.max_preemptions
        self._gang = params.delay if params.slice is None else params.slice
        self._every_pass = every_pass
        self._size = site.size
        self.free = list(range(m))
        """The free processors (not held by a running or suspended job), ascending."""
        self.shared: dict[int, int] = {}
        """Processors held by two jobs, the wide job h and the job it took them from (the
        value); empty whenever no wide job shares."""
        self.placed: list[int] = []
        """The processors of every job started, job after job, each job's ascending."""
        self.offset: dict[int, int] = {}
        """Where each job's processors begin in ``placed`` (h: the ones it runs on)."""
        self.running: dict[int, float] = {}
        """Executing jobs and their first start."""
        self.suspended: dict[int, float] = {}
        """Suspended jobs and their first start."""
        self.mode = IDLE
        self.head: int | None = None
        self.clock: float | None = None
        self.victims: list[int] = []
        self.switches = 0
        self.end = math.inf
        self.due = math.inf
        """The handler's timer (clock + D, or end), whether or not it is still to come."""
        self.dirty = True
        """Whether the next pass may change something before ``due``: a job ended, or nothing
        waits and an arrival may start."""
        self.n_preemptions = 0
        self.preempted: set[int] = set()
        self.runs: dict[int, tuple[float, ...]] = {}
        """Begin, end, begin, end, ... of the executions of every job suspended or started
        late (the last end missing while it runs); any other job executes once, from its
        first start to its end."""

    # ------------------------------------------------------------------ processors
    def _procs(self, job: int) -> list[int]:
        """The processors of a job started (ascending)."""
        at = self.offset[job]
        return self.placed[at : at + self.site.size[job]]

    def _take(self, job: int, t: float, need: int) -> None:
        """Start ``job`` from the queue on the ``need`` lowest free processors."""
        free = self.free
        self.offset[job] = len(self.placed)
        self.placed += free[:need]
        del free[:need]
        self.running[job] = t
        self.site.start_job(job, t)

    def _suspend(self, jobs: list[int], t: float) -> None:
        running = self.running
        suspended = self.suspended
        runs = self.runs
        moves = self.site.moves
        preempted = self.preempted
        for job in jobs:
            first = suspended[job] = running.pop(job)
            preempted.add(job)
            moves.append((job, None))
            times = runs.get(job)
            runs[job] = (first, t) if times is None else times + (t,)
        self.n_preemptions += len(jobs)

    def _resume(self, jobs: list[int], t: float) -> None:
        at = t + self.params.penalty
        running = self.running
        suspended = self.suspended
        runs = self.runs
        moves = self.site.moves
        for job in jobs:
            running[job] = suspended.pop(job)
            moves.append((job, at))
            runs[job] += (at,)

    def executions(self, start, end) -> Executions:
        return Executions(start, end, self.site.size, self.placed, self.offset, self.runs)

    # ------------------------------------------------------------------ events
    def completed(self, job: int, t: float, planned: float) -> None:
        del self.running[job]
        times = self.runs.get(job)
        if times is not None:
            self.runs[job] = times + (t,)
        at = self.offset[job]
        procs = self.placed[at : at + self._size[job]]
        free = self.free
        shared = self.shared
        if shared:
            for p in procs:
                if p in shared:  # the other holder keeps it
                    del shared[p]
                else:
                    free.append(p)
        else:
            free += procs
        free.sort()  # one merge of two sorted runs
        self.site.free = len(free)
        # What the next pass looks at: while h runs, its end; while its victims run, whether
        # one still holds h's processors; else whether the head (or h) fits.
        mode = self.mode
        if mode == RUN_WIDE:
            if job == self.head:
                self.dirty = True
        elif mode == RUN_SMALL:
            if not shared:
                self.dirty = True
        else:
            self.dirty = True

    def _next_end(self, t: float) -> float:
        return t + self._gang if self.switches < self._limit else math.inf

    def select(self, t: float) -> list[int]:
        if not self.dirty and t < self.due and not self._every_pass:
            return []  # nothing ended, no arrival can start: the pass would change nothing
        if self.mode == IDLE and not self.site.queue:
            return []  # nothing waits (the next pass looks again: an arrival may start)
        started: list[int] = []
        while True:
            mode = self.mode
            if mode == IDLE:
                if not self._start_small(t, started):
                    return started
                again = self._wait(t, started)
            elif mode == WAIT:
                again = self._wait(t, started)
            elif mode == RUN_WIDE:
                again = self._run_wide(t)
            else:
                again = self._run_small(t)
            if not again:
                break
        self._set_timer(t)
        return started

    def _start_small(self, t: float, started: list[int]) -> bool:
        """IDLE: start the queue's small jobs in order while they fit (`_take`, inlined).
        Whether the head is wide (now the job handled, WAIT); otherwise the pass is over."""
        site = self.site
        size = site.size
        queue = site.queue
        free = self.free
        wide = self._wide
        placed = self.placed
        offset = self.offset
        running = self.running
        start_job = site.start_job
        k = len(started)
        waiting = len(queue)
        while k < waiting:
            h = queue[k]
            need = size[h]
            if need > wide or need > len(free):
                break
            offset[h] = len(placed)
            placed += free[:need]
            del free[:need]
            running[h] = t
            start_job(h, t)
            started.append(h)
            k += 1
        else:  # nothing waits: the next pass looks again, an arrival may start
            site.free = len(free)
            self.dirty = True
            return False
        if need <= wide:  # the head waits for processors
            site.free = len(free)
            self.dirty = False
            return False
        self.mode, self.head, self.clock = WAIT, h, None
        return True

    def _wait(self, t: float, started: list[int]) -> bool:
        """WAIT: the wide head starts once it fits, or preempts once it waited D. Whether the
        pass goes on (h started: back to the queue)."""
        h = self.head
        free = self.free
        if self.clock is None:
            if self.params.wait_half and len(free) < self.site.processors / 2:
                return False
            self.clock = t
        need = self.site.size[h]
        if need <= len(free):
            self._take(h, t, need)
            started.append(h)
            self._idle()
            return True
        if self._limit >= 1 and t >= self.clock + self.params.delay:
            self._preempt_for(h, t)
            started.append(h)
        return False

    def _run_wide(self, t: float) -> bool:
        """RUN_WIDE: h runs on its victims' processors; at the end of its slice they switch.
        Whether the pass goes on (h done: its victims resume, back to the queue)."""
        h = self.head
        if h not in self.running:  # h is done (K)
            self._resume(self.victims, t)
            self._idle()
            return True
        if t >= self.end:
            self._suspend([h], t)
            self._resume(self.victims, t)
            self.switches += 1
            self.mode = RUN_SMALL
            self.end = self._next_end(t)
        return False

    def _run_small(self, t: float) -> bool:
        """RUN_SMALL: every job but h runs, so h's processors are shared iff a running job
        holds one of them. Whether the pass goes on (none does: h resumes, back to the
        queue)."""
        h = self.head
        if not self.shared:  # F
            self._resume([h], t)
            self._idle()
            return True
        if t >= self.end:
            running = self.running
            if self.params.preempt == "all":
                victims = list(running)
            else:  # the running jobs holding h's processors
                victims = list(set(self.shared.values()))
            victims.sort(key=lambda job: (running[job], job))
            self._suspend(victims, t)
            self._resume([h], t)
            self.victims = victims
            self.switches += 1
            self.mode = RUN_WIDE
            self.end = self._next_end(t)
        return False

    def _set_timer(self, t: float) -> None:
        """Handling a wide job: the timer; the next pass looks earlier only if a job ends."""
        site = self.site
        site.free = len(self.free)
        if self.mode == WAIT:
            clock = self.clock
            due = clock + self.params.delay if clock is not None and self._limit >= 1 else INF
        else:
            due = self.end
        self.due = due
        site.alarm = due if t < due < INF else None
        self.dirty = False

    def _idle(self) -> None:
        """h started or done: back to the queue, no timer."""
        self.mode = IDLE
        self.end = self.due = INF
        self.site.alarm = None

    def _preempt_for(self, h: int, t: float) -> None:
        """WAIT: h has waited D; suspend its victims and start it on all free processors,
        then on the victims' (in selection order, each ascending), the first size_h."""
        need = self.site.size[h]
        free = self.free
        victims = choose_victims(
            self.site.size, self.running, need - len(free), self.params.preempt == "all"
        )
        self._suspend(victims, t)
        taken = [(p, job) for job in victims for p in self._procs(job)][: need - len(free)]
        self.shared.update(taken)
        procs = free + [p for p, _ in taken]
        free.clear()  # h needs more than the free processors
        self.offset[h] = len(self.placed)
        self.placed += sorted(procs)
        self.running[h] = t
        self.site.start_job(h, t)
        if self.params.penalty > 0:
            self._start_late(h, t)
        self.victims = victims
        self.switches = 1
        self.mode = RUN_WIDE
        self.end = self._next_end(t)

    def _start_late(self, job: int, t: float) -> None:
        """A wide job started by a switch runs from t + penalty (not a preemption)."""
        at = t + self.params.penalty
        self.site.moves.append((job, None))
        self.site.moves.append((job, at))
        self.runs[job] = (at,)
