"""The batches in flight: where each was sent, where it stands there, and reading them back.

The driver's bookkeeping, apart from its event loop: every batch goes to a worker the driver
chose (`Placement`) and may run only there, so the driver knows, without asking anyone, which
batches each worker holds and in what order it runs them (a worker runs its batches in the
order they came, as many at once as it has slots: `Lane`). From that it knows which workers
have a free slot, and estimates when each batch started; the workers are asked only about the
batches these estimates single out (`campaign.execute.tail`).

A batch sent is counted on its worker (and on every task it holds, `Item.copies`) until it
lands (finished, cancelled, timed out or died with its worker).
"""

from __future__ import annotations

import heapq
import pickle
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from campaign.execute.batching import Item
from campaign.execute.worker import run_batch


@dataclass
class Lane:
    """One worker's batches: those running (one per slot) and those waiting, in order."""

    running: set[str] = field(default_factory=set)
    waiting: deque[str] = field(default_factory=deque)


class Flight:
    """The batches in flight and where they are."""

    def __init__(
        self,
        client: Any,
        model_name: Any,
        scheduler: Callable[[], AbstractContextManager[None]],
        resources: Mapping[str, float] | None = None,
    ):
        from distributed import as_completed

        self.client = client
        self.model_name = model_name
        self.run = uuid.uuid4().hex[:12]  # begins each batch's key (`process_tree.end_run`)
        self.scheduler = scheduler  # around every call to the scheduler
        self.resources = {"resources": dict(resources)} if resources else {}
        self.in_flight: dict[Any, list[Item]] = {}
        # results are read in the background as batches finish: reading the results of a
        # batch whose worker died meanwhile would wait for Dask to run it again
        self.completed = as_completed(with_results=True, raise_errors=False)
        self.target: dict[str, str] = {}  # batch key -> the worker it was sent to
        self.sent_to: dict[str, int] = {}  # worker -> batches in flight sent to it
        self.slots: dict[str, int] = {}  # worker -> batches it runs at once
        self.lanes: dict[str, Lane] = {}  # worker -> its batches, running and waiting
        self.sent_at: dict[str, float] = {}  # batch key -> when it was sent
        # batch key -> (when, index): the batch started task `index` at `when` (estimated
        # from its lane, or as its worker last reported); no entry: waiting on its worker
        self.progress: dict[str, tuple[float, int]] = {}
        self.keeps: dict[str, int] = {}  # batch key -> tasks it runs itself (others stolen)
        self.replicas: set[str] = set()  # keys of batches that copy a straggling task
        # batches cancelled while they may still run -> their worker: a cancelled task's
        # thread goes on, so one stuck past the timeout still has its worker process ended
        self.abandoned: dict[str, str] = {}
        self.strict: set[str] = set()  # keys of batches that may run only on their worker
        self.alone: dict[str, str] = {}  # worker -> key of the batch running alone there
        # (batches in flight per slot, worker, batches in flight) of each worker, pushed at
        # every change and dropped once stale: the least loaded worker in log(workers) time
        self.loads: list[tuple[float, str, int]] = []

    def send(self, batch: list[Item], worker: str, strict: bool = True) -> Any:
        """Submit a batch to ``worker`` (only there when ``strict``, as every batch is now); its
        future. The tasks travel as one opaque payload: Dask then has nothing to look through
        for futures, which cost more than the rest of a submission for a batch of many."""
        payload = [
            (item.key, item.params, item.seed, item.meta.get("replicate", 0), item.digests)
            if item.digests
            else (item.key, item.params, item.seed, item.meta.get("replicate", 0))
            for item in batch
        ]
        key = f"campaign-{self.run}-{uuid.uuid4().hex}"
        with self.scheduler():
            future = self.client.submit(
                run_batch,
                self.model_name,
                packed(payload),
                key,
                pure=False,
                key=key,
                workers=[worker],
                allow_other_workers=not strict,
                **self.resources,
            )
        for item in batch:
            item.copies += 1
        self.in_flight[future] = batch
        self.completed.add(future)
        if strict:
            self.strict.add(key)
        self._place(key, worker)
        return future

    def _place(self, key: str, worker: str) -> None:
        """Count a batch on its worker: running when a slot is free there, else waiting."""
        now = time.monotonic()
        self.target[key] = worker
        self.sent_at[key] = now
        self.sent_to[worker] = self.sent_to.get(worker, 0) + 1
        self._load_changed(worker)
        lane = self.lanes.setdefault(worker, Lane())
        if len(lane.running) < self.slots.get(worker, 1):
            lane.running.add(key)
            self.progress[key] = (now, 0)
        else:
            lane.waiting.append(key)

    def landed(self, future: Any) -> None:
        """A batch left the flight (finished, cancelled, timed out or died with its worker):
        its slot goes to the next batch waiting on its worker."""
        key = future.key
        worker = self.target.pop(key, None)
        self.strict.discard(key)
        self.sent_at.pop(key, None)
        self.progress.pop(key, None)
        self.keeps.pop(key, None)
        if worker is None:
            return
        self.sent_to[worker] -= 1
        self._load_changed(worker)
        if self.alone.get(worker) == key:
            del self.alone[worker]
        lane = self.lanes.get(worker)
        if lane is None:
            return
        lane.running.discard(key)
        now = time.monotonic()
        while lane.waiting and len(lane.running) < self.slots.get(worker, 1):
            following = lane.waiting.popleft()
            if self.target.get(following) == worker:  # still in flight there
                lane.running.add(following)
                self.progress[following] = (now, 0)

    def moved(self, future: Any, worker: str) -> None:
        """Dask runs a batch on another worker than the gone one it was sent to."""
        self.landed(future)
        self._place(future.key, worker)

    def set_slots(self, slots: Mapping[str, int]) -> None:
        """The workers as last seen and the batches each runs at once (its threads, or fewer
        when what a task asks of it allows fewer)."""
        self.slots = dict(slots)
        sent_to = self.sent_to
        self.loads = [(sent_to.get(w, 0) / n, w, sent_to.get(w, 0)) for w, n in slots.items()]
        heapq.heapify(self.loads)

    def _load_changed(self, worker: str) -> None:
        slots = self.slots.get(worker)
        if slots:
            sent = self.sent_to.get(worker, 0)
            heapq.heappush(self.loads, (sent / slots, worker, sent))

    def least_loaded(self, excluded: set[str]) -> str | None:
        """The worker with the fewest batches in flight per slot (ties: the first by name),
        among those not ``excluded``; None when there is none."""
        loads, aside = self.loads, []
        found = None
        while loads:
            _, worker, sent = loads[0]
            if worker not in self.slots or sent != self.sent_to.get(worker, 0):
                heapq.heappop(loads)  # stale: the worker left, or its load changed since
            elif worker in excluded:
                aside.append(heapq.heappop(loads))
            else:
                found = worker
                break
        for entry in aside:
            heapq.heappush(loads, entry)
        return found

    def free_slots(self, worker: str) -> int:
        """Slots of ``worker`` that run none of this dispatch's batches."""
        lane = self.lanes.get(worker)
        busy = len(lane.running) if lane is not None else 0
        return max(0, self.slots.get(worker, 1) - busy)

    def reported(self, worker: str, batches: Mapping[str, tuple[int, float]]) -> None:
        """What ``worker`` says it runs (`running_tasks`): the batches' progress, exactly (index
        -1: the batch waits there)."""
        now = time.monotonic()
        for key, (index, elapsed) in batches.items():
            if self.target.get(key) != worker:
                continue
            if index < 0:  # waiting there behind other batches
                self.progress.pop(key, None)
            else:
                self.progress[key] = (now - elapsed, index)

    def next_done(self, until: float) -> tuple[Any, Any] | None:
        """The next finished batch and its result (or error), or None at `until` (the driver
        then looks at workers)."""
        # as_completed notifies this condition (holding it) after queueing each finished
        # future, and the queue is checked holding it too: no landing is missed, so the wait
        # lasts until `until` (at most the driver's poll) instead of waking to look again
        condition = getattr(self.completed, "thread_condition", None)
        while not self.completed.has_ready():
            remaining = until - time.monotonic()
            if remaining <= 0 or not self.in_flight:
                return None
            if condition is None:  # pragma: no cover - other distributed versions
                time.sleep(min(remaining, 0.002))
                continue
            with condition:
                if not self.completed.has_ready():
                    condition.wait(timeout=remaining)
        return next(self.completed)

    def ready(self) -> bool:
        """Whether another finished batch can be read at once."""
        return self.completed.has_ready()

    def abandon(self, future: Any) -> None:
        """Cancel a batch that may still run on its worker (remembered until it ends there)."""
        worker = self.target.get(future.key)
        self.landed(future)
        future.cancel()
        if worker is not None:
            self.abandoned[future.key] = worker

    def drop_finished_copies(self) -> None:
        """Cancel batches in flight whose every task has a stored result from another copy."""
        for other in [f for f, batch in self.in_flight.items() if all(i.done for i in batch)]:
            for item in self.in_flight.pop(other):
                item.copies -= 1
            self.abandon(other)


def packed(payload: list[tuple]) -> bytes | list[tuple]:
    """A batch's tasks as one pickle (``run_batch`` unpacks it); as they are when they cannot
    be pickled without Dask's help (cloudpickle)."""
    try:
        return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return payload
