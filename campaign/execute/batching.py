"""What the driver queues and counts: tasks (`Item`), the tally of a dispatch (`Outcome`),
batch sizes from measured task durations (`BatchSizer`) and pending tasks per input group
(`GroupedQueue`), kept apart from Dask so they can be reasoned about alone."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

# how long a batch runs: each landed batch costs the driver about a millisecond whatever it
# holds (a submission, a ledger file written and synced), so a batch holds enough tasks to
# spread that (100 tasks of 50 ms), as many on 8 slots as on 500: the driver's CPU per task is
# then the same on a few slots as on hundreds; yet short enough that a batch lost with its
# worker or the driver costs seconds, not minutes
TARGET_BATCH_SECONDS = 5.0
BATCHES_PER_WORKER = 2  # batches in flight per slot: one running, one waiting behind it
# batches landing per second at most, whatever the number of slots: each costs the driver and
# the scheduler about a millisecond, so batches run longer than the target on many slots
MAX_BATCHES_PER_SECOND = 100
FEED_AHEAD = 100_000  # items drawn ahead of those taken (see `GroupedQueue.feed`)


@dataclass
class Item:
    """A task waiting to run: what the worker needs, plus what the ledger record carries."""

    key: str
    params: dict[str, Any]
    seed: int
    meta: dict[str, Any]
    attempts: int = 0
    group: Any = None  # tasks with the same heavy inputs share a group (see `dispatch`)
    copies: int = 0  # copies of this task in batches in flight (more than one when replicated)
    done: bool = False  # its final record is stored
    suspect: bool = False  # its worker died while it was there: it runs in halves, then alone
    deaths: int = 0  # times its worker died while it ran alone there
    # digests of the files a Python model's inputs() names for its params, as the plan took
    # them: the worker computes only with the same content (`campaign.execute.model_inputs`)
    digests: tuple[str, ...] = ()


@dataclass
class Outcome:
    ok: int = 0
    failed: int = 0
    timed_out: list[str] = field(default_factory=list)
    # tasks sent again, not counted as tries: batchmates of a timed-out task, and tasks of a
    # worker closed on purpose or that never reached the worker they were sent to
    requeued: int = 0
    stopped_workers: int = 0
    stolen: int = 0  # unstarted tasks moved to idle workers at the tail of the campaign
    replicated: int = 0  # copies of straggling tasks sent to idle workers
    replicas_won: int = 0  # tasks whose stored result came from such a copy
    worker_deaths: int = 0  # worker processes that died holding tasks of this campaign
    resent: int = 0  # tasks sent again because their worker died (not counted as tries)


class BatchSizer:
    """Sizes batches from measured task durations so batches last about the target time.

    The target grows with the slots (`MAX_BATCHES_PER_SECOND`). Before any duration is known,
    batches hold one task and one goes to each slot. Once what is left fits in one round of
    batches (one per slot and one waiting behind it), it is shared out equally among that
    round, not in ever smaller batches; an idle slot then steals from the longest batches
    (`campaign.execute.tail`).
    """

    def __init__(self, slots: int, target: float = TARGET_BATCH_SECONDS, fixed: int | None = None):
        self.slots = slots
        self.target = target
        self.fixed = fixed  # tasks per batch, whatever their durations (None: measured)
        self.seconds = 0.0
        self.count = 0
        self.last_round: int | None = None  # the size of the last round's batches, once in it

    def observe(self, elapsed: Iterable[float]) -> None:
        for value in elapsed:
            self.seconds += value
            self.count += 1

    def target_seconds(self) -> float:
        """How long a batch should run: the target, or longer on so many slots that batches
        of the target would land more often than `MAX_BATCHES_PER_SECOND`."""
        return max(self.target, self.slots / MAX_BATCHES_PER_SECOND)

    def in_flight(self) -> int:
        """How many batches to keep in flight: one per slot until a duration is known (the
        first batches hold one task each), then `BATCHES_PER_WORKER` per slot."""
        if self.fixed is None and self.count == 0:
            return max(1, self.slots)
        return max(1, self.slots) * BATCHES_PER_WORKER

    def size(self, remaining: int) -> int:
        if self.fixed is not None:
            return max(1, min(self.fixed, remaining))
        if self.count == 0:
            return 1
        mean = max(self.seconds / self.count, 1e-6)
        by_time = max(1, int(self.target_seconds() / mean))
        round_size = max(1, self.slots) * BATCHES_PER_WORKER
        if remaining > round_size * by_time:
            self.last_round = None
            return by_time
        if self.last_round is None:
            self.last_round = math.ceil(remaining / round_size)
        return max(1, min(by_time, self.last_round, remaining))


class GroupedQueue:
    """Pending items in one queue per input group, groups in order of first arrival.

    Items fed from an iterator (`feed`) are drawn from it as they are taken, at most
    `FEED_AHEAD` ahead: a million tasks are never held as a million items at once. They
    count as pending from the start (batch sizes follow from all that is left)."""

    def __init__(self) -> None:
        self.queues: dict[Any, deque[Item]] = {}
        self.count = 0  # items in the queues
        self.unfed: Iterator[Item] = iter(())
        self.left = 0  # items the iterator has yet to give

    def __len__(self) -> int:
        return self.count + self.left

    def __bool__(self) -> bool:
        return self.count + self.left > 0

    def feed(self, items: Collection[Item]) -> None:
        """Queue ``items``, drawing them as they are taken (all at once when few)."""
        self.unfed, self.left = iter(items), len(items)
        self._draw(0)

    def _draw(self, wanted: int) -> None:
        """Draw fed items until ``wanted`` (or `FEED_AHEAD`) are queued or none are left."""
        while self.left and self.count < max(wanted, FEED_AHEAD):
            self.left -= 1
            self.append(next(self.unfed))

    def _queue(self, group: Any) -> deque[Item]:
        queue = self.queues.get(group)
        if queue is None:
            queue = self.queues[group] = deque()
        return queue

    def append(self, item: Item) -> None:
        self._queue(item.group).append(item)
        self.count += 1

    def extend(self, items: Iterable[Item]) -> None:
        for item in items:
            self.append(item)

    def appendleft(self, item: Item) -> None:
        self._queue(item.group).appendleft(item)
        self.count += 1

    def extendleft(self, items: Iterable[Item]) -> None:
        for item in items:
            self.appendleft(item)

    def groups(self) -> list[Any]:
        """Groups with pending items, in order."""
        return [group for group, queue in self.queues.items() if queue]

    def size_of(self, group: Any) -> int:
        queue = self.queues.get(group)
        return len(queue) if queue else 0

    def take(self, size: int, group: Any = None) -> list[Item]:
        """Up to ``size`` items of ``group`` (default: the first group with items)."""
        self._draw(size)
        if group is None:
            group = next(g for g, queue in self.queues.items() if queue)
        queue = self.queues[group]
        batch = [queue.popleft() for _ in range(min(size, len(queue)))]
        self.count -= len(batch)
        if not queue:
            del self.queues[group]
        self._draw(0)
        return batch
