"""Tail decisions: what idle workers take once nothing is left to send.

Pure functions over a snapshot of the dispatch (the batches in flight and their tasks, what
each worker reports running, the idle workers, the mean task time), so that the choices can be
checked without a cluster; the driver applies the decisions it gets back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from campaign.execute.batching import Item

STRAGGLER_FACTOR = 3.0  # a task running this many times the mean task time is a straggler


@dataclass(frozen=True)
class TailSnapshot:
    """The dispatch as the driver last saw it.

    `batches`: batch key -> its tasks, for every batch in flight, in the order they were sent.
    `running`: batch key -> (its worker, index of the task it runs, seconds that task ran), as
    the workers report them. `idle`: workers to give work to, in order. `mean`: the mean task
    time so far (infinite before any task finished: nothing is a straggler then).
    """

    batches: Mapping[str, Sequence[Item]]
    running: Mapping[str, tuple[str, int, float]]
    idle: Sequence[str]
    mean: float


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


def tail_decisions(snapshot: TailSnapshot) -> list[Steal | Copy]:
    """For each idle worker in turn: half of the unstarted tasks of the batch with the most of
    them (work stealing), or else a copy of the task running longest past `STRAGGLER_FACTOR`
    times the mean (a straggling worker); nothing once neither is left.

    Only tasks with one copy in flight count, and a task that died with a worker is never
    copied (it runs alone). The copies each decision adds are counted for the next worker.
    """
    added: dict[int, int] = {}  # id(item) -> copies the decisions so far add

    def copies(item: Item) -> int:
        return item.copies + added.get(id(item), 0)

    decisions: list[Steal | Copy] = []
    for idle_worker in snapshot.idle:
        steal: tuple[str, str, list[Item]] | None = None
        straggler: tuple[float, Item] | None = None
        for key, batch in snapshot.batches.items():
            if key not in snapshot.running:
                continue
            worker, index, elapsed = snapshot.running[key]
            rest = [i for i in batch[index + 1 :] if not i.done and copies(i) == 1]
            if len(rest) > (len(steal[2]) if steal else 0):
                steal = (worker, key, rest)
            current = batch[index]
            slow = elapsed > STRAGGLER_FACTOR * snapshot.mean
            if not current.done and copies(current) == 1 and slow and not current.suspect:
                if straggler is None or elapsed > straggler[0]:
                    straggler = (elapsed, current)
        if steal is not None:
            worker, batch_key, rest = steal
            taken = tuple(rest[len(rest) // 2 :])
            decisions.append(Steal(idle_worker, batch_key, worker, taken))
            for item in taken:
                added[id(item)] = added.get(id(item), 0) + 1
        elif straggler is not None:
            decisions.append(Copy(idle_worker, straggler[1]))
            added[id(straggler[1])] = added.get(id(straggler[1]), 0) + 1
        else:
            break
    return decisions
