"""The batches in flight: where each was sent, and reading them back as they finish.

The driver's bookkeeping, apart from its event loop: a batch sent is counted on its worker
(and on every task it holds, `Item.copies`) until it lands (finished, cancelled, timed out or
died with its worker).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from campaign.execute.batching import Item
from campaign.execute.worker import run_batch


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
        self.scheduler = scheduler  # around every call to the scheduler
        self.resources = {"resources": dict(resources)} if resources else {}
        self.in_flight: dict[Any, list[Item]] = {}
        # results are read in the background as batches finish: reading the results of a
        # batch whose worker died meanwhile would wait for Dask to run it again
        self.completed = as_completed(with_results=True, raise_errors=False)
        self.target: dict[str, str] = {}  # batch key -> the worker it was sent to
        self.sent_to: dict[str, int] = {}  # worker -> batches in flight sent to it
        self.replicas: set[str] = set()  # keys of batches that copy a straggling task
        # keys of batches cancelled while they may still run: a cancelled task's thread goes
        # on, so one stuck past the timeout still has its worker process ended
        self.abandoned: set[str] = set()
        self.strict: set[str] = set()  # keys of batches that may run only on their worker
        self.alone: dict[str, str] = {}  # worker -> key of the batch running alone there

    def send(self, batch: list[Item], worker: str | None, strict: bool) -> Any:
        """Submit a batch (to ``worker``, only there when ``strict``); its future."""
        payload = [
            (item.key, item.params, item.seed, item.meta.get("replicate", 0)) for item in batch
        ]
        key = f"campaign-{uuid.uuid4().hex}"
        placement = (
            {} if worker is None else {"workers": [worker], "allow_other_workers": not strict}
        )
        with self.scheduler():
            future = self.client.submit(
                run_batch,
                self.model_name,
                payload,
                key,
                pure=False,
                key=key,
                **placement,
                **self.resources,
            )
        for item in batch:
            item.copies += 1
        self.in_flight[future] = batch
        self.completed.add(future)
        if worker is not None:
            self.target[key] = worker
            self.sent_to[worker] = self.sent_to.get(worker, 0) + 1
            if strict:
                self.strict.add(key)
        return future

    def landed(self, future: Any) -> None:
        """A batch left the flight (finished, cancelled, timed out or died with its worker)."""
        worker = self.target.pop(future.key, None)
        self.strict.discard(future.key)
        if worker is not None:
            self.sent_to[worker] -= 1
            if self.alone.get(worker) == future.key:
                del self.alone[worker]

    def next_done(self, until: float) -> tuple[Any, Any] | None:
        """The next finished batch and its result (or error), or None at `until` (the driver
        then looks at workers)."""
        # as_completed notifies this condition after queueing each finished future
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
                    condition.wait(timeout=min(remaining, 0.1))
        return next(self.completed)

    def drop_finished_copies(self) -> None:
        """Cancel batches in flight whose every task has a stored result from another copy."""
        for other in [f for f, batch in self.in_flight.items() if all(i.done for i in batch)]:
            for item in self.in_flight.pop(other):
                item.copies -= 1
            self.landed(other)
            other.cancel()
            self.abandoned.add(other.key)
