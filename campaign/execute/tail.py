"""Tail decisions: what idle workers take once nothing is left to send.

Pure functions over a snapshot of the dispatch (the batches in flight and their tasks, what
each worker reports running, the batches of workers that do not answer, the idle workers, the
mean task time), so that the choices can be
checked without a cluster; the driver applies the decisions it gets back.

Workers are asked what they run only about the batches worth it (`tail_questions`): those
estimated to hold the most tasks not started, and those late enough to hold a straggler (or
to be held by a worker that does not answer). The estimates come from where the driver
placed each batch and when it started there (`Standing`), so a question costs one worker
one message, however many workers there are.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from campaign.execute.batching import Item

STRAGGLER_FACTOR = 3.0  # a task running this many times the mean task time is a straggler


@dataclass(frozen=True)
class TailSnapshot:
    """The dispatch as the driver last saw it.

    `batches`: batch key -> its tasks, for every batch in flight, in the order they were sent.
    `running`: batch key -> (its worker, index of the task it runs, seconds that task ran), as
    the workers report them; index -1 for a batch waiting on its worker (none started).
    `idle`: the free slots to give work to, in order, each as its worker (a worker with two
    free slots twice). `mean`: the mean task time so far (infinite before any task finished:
    nothing is a straggler then). `silent`: keys of the batches held by workers that did not
    answer (stopped, cut off): no telling which of their tasks ran, nor whether any ever
    will.
    """

    batches: Mapping[str, Sequence[Item]]
    running: Mapping[str, tuple[str, int, float]]
    idle: Sequence[str]
    mean: float
    silent: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Steal:
    """Move `items` (not started) of `batch`, running on `worker`, to the idle worker `to`;
    `worker` is told to skip them."""

    to: str
    batch: str
    worker: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Copy:
    """Copy the straggling task `item` to the idle worker `to`; the first result wins."""

    to: str
    item: Item

    @property
    def items(self) -> tuple[Item, ...]:
        """The tasks this decision copies: the straggler alone."""
        return (self.item,)


@dataclass(frozen=True)
class Rescue:
    """Copy the unfinished tasks `items` of `batch`, held by a worker that does not answer, to
    the idle worker `to`; the first result of each wins."""

    to: str
    batch: str
    items: tuple[Item, ...]


def tail_decisions(snapshot: TailSnapshot) -> list[Steal | Copy | Rescue]:
    """For each idle worker in turn: a copy of every unfinished task of the silent batch with
    the most of them (a worker that does not answer may never finish them), or else a share
    of the unstarted tasks of a running batch (work stealing), or else a copy of the task
    running longest past `STRAGGLER_FACTOR` times the mean (a straggling worker); nothing once
    none is left.

    The idle workers that steal from one batch and the worker running it share its unstarted
    tasks equally (`_shares`): all of them finish together, where taking half of what is left
    one thief after another would give the first thief half of the work and leave the others
    to steal from it again. Each idle worker joins the batch where its share would be
    largest. Only tasks with one copy in flight count, and a task that died with a worker is
    never copied (it runs alone). The copies each decision adds are counted for the next
    worker.
    """
    added: dict[int, int] = {}  # id(item) -> copies the decisions so far add

    def copies(item: Item) -> int:
        return item.copies + added.get(id(item), 0)

    stealable = _stealable(snapshot, copies)
    thieves: dict[str, list[str]] = {}  # batch key -> the idle workers stealing from it
    chosen: list[Copy | Rescue | str] = []  # per idle worker: its decision, or a batch key
    for idle_worker in snapshot.idle:
        decision: Copy | Rescue | str | None = _rescue(snapshot, idle_worker, copies)
        if decision is None:
            decision = _joined(stealable, thieves)
        if decision is None:
            decision = _straggler(snapshot, idle_worker, copies)
        if decision is None:
            break
        if isinstance(decision, str):
            thieves.setdefault(decision, []).append(idle_worker)
        else:
            for item in decision.items:
                added[id(item)] = added.get(id(item), 0) + 1
        chosen.append(decision)
    steals = {
        key: iter(_shares(stealable[key][1], key, stealable[key][0], takers))
        for key, takers in thieves.items()
    }
    return [next(steals[c]) if isinstance(c, str) else c for c in chosen]


def _rescue(snapshot: TailSnapshot, to: str, copies: Callable[[Item], int]) -> Rescue | None:
    """A copy of every unfinished task of the silent batch with the most of them."""
    rescue: tuple[str, list[Item]] | None = None
    for key in sorted(snapshot.silent):
        rest = [i for i in snapshot.batches.get(key, ()) if _copyable(i, copies(i))]
        if len(rest) > (len(rescue[1]) if rescue else 0):
            rescue = (key, rest)
    return None if rescue is None else Rescue(to, rescue[0], tuple(rescue[1]))


def _reported(
    snapshot: TailSnapshot,
) -> Iterator[tuple[str, Sequence[Item], tuple[str, int, float]]]:
    """(key, tasks, what its worker reports) of each batch a worker that answers reported."""
    for key, batch in snapshot.batches.items():
        if key in snapshot.running and key not in snapshot.silent:
            yield key, batch, snapshot.running[key]


def _stealable(
    snapshot: TailSnapshot, copies: Callable[[Item], int]
) -> dict[str, tuple[str, list[Item]]]:
    """Batch key -> (its worker, its unstarted tasks with one copy in flight), for the running
    batches of workers that answer."""
    stealable = {}
    for key, batch, (worker, index, _) in _reported(snapshot):
        rest = [i for i in batch[index + 1 :] if not i.done and copies(i) == 1]
        if rest:
            stealable[key] = (worker, rest)
    return stealable


def _joined(
    stealable: Mapping[str, tuple[str, list[Item]]], thieves: Mapping[str, list[str]]
) -> str | None:
    """The batch where one more thief's share would be largest (its unstarted tasks over its
    worker, its thieves and this one), among those with a task left for one more thief."""
    best: tuple[float, str] | None = None
    for key, (_, rest) in stealable.items():
        taking = len(thieves.get(key, ())) + 1
        if len(rest) < taking:
            continue
        share = len(rest) / (taking + 1)
        if best is None or share > best[0]:
            best = (share, key)
    return None if best is None else best[1]


def _shares(rest: Sequence[Item], batch: str, worker: str, takers: Sequence[str]) -> list[Steal]:
    """Split the unstarted tasks ``rest`` of ``batch`` into equal runs: the first stays with its
    ``worker`` (it runs them in order; the smaller run where they do not divide evenly, as it
    also finishes the task it runs), each following run goes to one of ``takers``."""
    kept = len(rest) // (len(takers) + 1)
    taken = len(rest) - kept
    steals, start = [], kept
    for n, to in enumerate(takers):
        size = taken // len(takers) + (1 if n < taken % len(takers) else 0)
        steals.append(Steal(to, batch, worker, tuple(rest[start : start + size])))
        start += size
    return steals


def _straggler(snapshot: TailSnapshot, to: str, copies: Callable[[Item], int]) -> Copy | None:
    """A copy of the task running longest past `STRAGGLER_FACTOR` times the mean."""
    straggler: tuple[float, Item] | None = None
    for _, batch, (_, index, elapsed) in _reported(snapshot):
        if index < 0:  # waiting on its worker: nothing runs
            continue
        current = batch[index]
        slow = elapsed > STRAGGLER_FACTOR * snapshot.mean
        if not current.done and copies(current) == 1 and slow and not current.suspect:
            if straggler is None or elapsed > straggler[0]:
                straggler = (elapsed, current)
    return None if straggler is None else Copy(to, straggler[1])


def _copyable(item: Item, copies: int) -> bool:
    """Whether a task may be copied: unfinished, with one copy in flight, and not one that died
    with a worker (it runs alone)."""
    return not item.done and copies == 1 and not item.suspect


@dataclass(frozen=True)
class Standing:
    """Where a batch in flight stands, as the driver estimates it: `size` tasks, sent to
    `worker`; it started task `index` at `since` (from the worker's last report, or when the
    batch got a slot there: then index 0), or waits behind other batches (`since` None)."""

    key: str
    worker: str
    size: int
    since: float | None
    index: int = 0

    def at(self, now: float, mean: float) -> float:
        """The index of the task it runs now, by the mean task time (-1: none started)."""
        if self.since is None:
            return -1
        if not math.isfinite(mean) or mean <= 0:
            return self.index
        return min(self.size - 1, self.index + (now - self.since) // mean)

    def unstarted(self, now: float, mean: float) -> int:
        return int(self.size - 1 - self.at(now, mean))

    def late(self, now: float, mean: float) -> float:
        """Seconds past the time it should have ended by the mean task time."""
        if self.since is None or not math.isfinite(mean):
            return -math.inf
        return now - (self.since + (self.size - self.index) * mean)


def tail_questions(
    standings: Iterable[Standing],
    idle: int,
    mean: float,
    now: float,
    not_before: Mapping[str, float],
) -> list[Standing]:
    """The batches to ask their workers about, at most one per ``idle`` slot: those estimated
    to hold the most tasks not started (work to steal), then those later than a straggler
    would make them (`STRAGGLER_FACTOR` times the mean past their end), latest first, unless
    asked about too recently (``not_before``: batch key -> time)."""
    if idle <= 0:
        return []
    stealable, late = [], []
    for standing in standings:
        unstarted = standing.unstarted(now, mean)
        if unstarted > 0:
            stealable.append((-unstarted, standing.key, standing))
            continue
        behind = standing.late(now, mean)
        if behind > (STRAGGLER_FACTOR - 1) * mean and not_before.get(standing.key, 0) <= now:
            late.append((-behind, standing.key, standing))
    chosen = [standing for *_, standing in heapq.nsmallest(idle, stealable)]
    return chosen + [standing for *_, standing in heapq.nsmallest(idle - len(chosen), late)]
