"""Run tasks on Dask as a bag of tasks: batching, retries, failure capture and progress.

Tasks are grouped into batches so that per-task scheduling overhead stays small: the first
batches hold one task each, and once task durations are measured a batch is sized to run for
about `TARGET_BATCH_SECONDS`, never so large that the tail of the campaign leaves workers idle.
Every finished batch is handed to a callback (which stores it durably) before it counts.

The driver also watches the cluster: the number of batches in flight follows workers joining
and leaving, it waits (up to a limit) while there are none, it stops tasks that run past a
per-task timeout, and it turns a lost scheduler into one clear error, after every finished
result has been stored.
"""

from __future__ import annotations

import logging
import math
import os
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from campaign.errors import CampaignError
from campaign.models import load_model
from campaign.progress import Progress

TARGET_BATCH_SECONDS = 0.5
BATCHES_PER_WORKER = 2
POLL_SECONDS = 1.0  # how often the driver looks at the workers
WAIT_WORKERS_SECONDS = 60.0  # default wait for a first worker, and for one after all left
STOPPED_EXIT_CODE = 70

log = logging.getLogger("campaign")


# -- worker side --------------------------------------------------------------------------------
@lru_cache(maxsize=16)
def _model(name: str):
    return load_model(name)


# batch key -> (index of the task it is running, time.monotonic() when that task started)
_RUNNING: dict[str, tuple[int, float]] = {}


def run_batch(
    model_name: str, items: list[tuple[str, dict[str, Any], int]], batch: str | None = None
) -> list[dict]:
    """Run a batch of (key, params, seed) on a worker; a model error fails only its task.

    While it runs, `running_tasks` tells the driver which task of `batch` is running and for
    how long, so that the driver can time out one task rather than a whole batch.
    """
    model = _model(model_name)
    results = []
    try:
        for index, (key, params, seed) in enumerate(items):
            if batch is not None:
                _RUNNING[batch] = (index, time.monotonic())
            start = time.perf_counter()
            try:
                raw = model(params, seed)
                metrics = {str(name): _as_float(name, value) for name, value in raw.items()}
                result = {"key": key, "status": "ok", "metrics": metrics}
            except Exception as error:  # a model's failure is data, not a crash of the campaign
                result = {
                    "key": key,
                    "status": "failed",
                    "error": f"{type(error).__name__}: {error}",
                    "traceback": traceback.format_exc(),
                }
            result["elapsed"] = time.perf_counter() - start
            results.append(result)
    finally:
        if batch is not None:
            _RUNNING.pop(batch, None)
    return results


def running_tasks() -> dict[str, tuple[int, float]]:
    """On a worker: for each batch running there, its current task's index and seconds run."""
    now = time.monotonic()
    return {batch: (index, now - started) for batch, (index, started) in dict(_RUNNING).items()}


def end_worker_process() -> None:
    """On a worker: exit at once.

    A thread stuck in a model cannot be interrupted, so its whole process is ended; the
    worker's nanny (the default for `dask worker` and every cluster this tool starts) starts
    a fresh one, which joins the scheduler as a new worker.
    """
    os._exit(STOPPED_EXIT_CODE)


def _as_float(name: str, value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        and not hasattr(value, "__float__")
    ):
        raise TypeError(f"metric {name!r} is not a number: {value!r}")
    return float(value)


# -- driver side ---------------------------------------------------------------------------------
@dataclass
class Item:
    """A task waiting to run: what the worker needs, plus what the ledger record carries."""

    key: str
    params: dict[str, Any]
    seed: int
    meta: dict[str, Any]
    attempts: int = 0


@dataclass
class Outcome:
    ok: int = 0
    failed: int = 0
    failed_keys: list[str] = field(default_factory=list)
    timed_out: list[str] = field(default_factory=list)
    requeued: int = 0  # tasks sent again because a batchmate timed out (not counted as tries)
    stopped_workers: int = 0


class BatchSizer:
    """Sizes batches from measured task durations so batches last about the target time."""

    def __init__(self, slots: int, target: float = TARGET_BATCH_SECONDS):
        self.slots = slots
        self.target = target
        self.seconds = 0.0
        self.count = 0

    def observe(self, elapsed: Iterable[float]) -> None:
        for value in elapsed:
            self.seconds += value
            self.count += 1

    def size(self, remaining: int) -> int:
        if self.count == 0:
            return 1
        mean = max(self.seconds / self.count, 1e-6)
        by_time = max(1, int(self.target / mean))
        by_tail = max(1, math.ceil(remaining / (self.slots * BATCHES_PER_WORKER)))
        return max(1, min(by_time, by_tail, remaining))


def dispatch(
    client: Any,
    model_name: str,
    items: list[Item],
    store: Callable[[list[dict[str, Any]]], None],
    retries: int,
    progress: Progress,
    *,
    task_timeout: float | None = None,
    wait_workers: float = WAIT_WORKERS_SECONDS,
    say: Callable[[str], None] | None = None,
) -> Outcome:
    """Run every item on the cluster; store each finished batch before counting it.

    `task_timeout` (seconds) fails a task that runs longer, ends its worker process (a thread
    cannot be interrupted) and sends its batchmates again. `wait_workers` (seconds, may be
    infinite) is how long to wait while the cluster has no worker, at the start or later.
    A lost scheduler raises `CampaignError` after everything finished has been stored.
    """
    driver = _Driver(client, model_name, store, retries, progress, task_timeout, wait_workers, say)
    return driver.run(items)


class _Driver:
    """The state of one dispatch: pending items, batches in flight, workers as last seen."""

    def __init__(
        self,
        client: Any,
        model_name: str,
        store: Callable[[list[dict[str, Any]]], None],
        retries: int,
        progress: Progress,
        task_timeout: float | None,
        wait_workers: float,
        say: Callable[[str], None] | None,
    ):
        from distributed import as_completed

        self.client = client
        self.model_name = model_name
        self.store = store
        self.retries = retries
        self.progress = progress
        self.task_timeout = task_timeout
        self.wait_workers = wait_workers
        self.say = say or (lambda message: None)
        self.pending: deque[Item] = deque()
        self.in_flight: dict[Any, list[Item]] = {}
        self.outcome = Outcome()
        self.completed = as_completed()
        self.threads: dict[str, int] | None = None
        self.sizer = BatchSizer(1)
        self.poll = POLL_SECONDS if task_timeout is None else min(POLL_SECONDS, task_timeout / 4)

    # -- the loop ---------------------------------------------------------------------------
    def run(self, items: list[Item]) -> Outcome:
        self.pending.extend(items)
        next_poll = 0.0
        while self.pending or self.in_flight:
            if time.monotonic() >= next_poll:
                self._watch_workers()
                if self.task_timeout is not None and self.in_flight:
                    self._stop_stuck_tasks()
                next_poll = time.monotonic() + self.poll
            self._submit_more()
            future = self._next_done(next_poll)
            if future is not None and future in self.in_flight:
                self._finish(future)
        return self.outcome

    def _next_done(self, until: float) -> Any | None:
        """The next finished batch, or None at `until` (the driver then looks at workers)."""
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

    def _submit_more(self) -> None:
        slots = self.sizer.slots
        while self.pending and len(self.in_flight) < slots * BATCHES_PER_WORKER:
            size = self.sizer.size(len(self.pending))
            batch = [self.pending.popleft() for _ in range(min(size, len(self.pending)))]
            payload = [(item.key, item.params, item.seed) for item in batch]
            key = f"campaign-{uuid.uuid4().hex}"
            try:
                future = self.client.submit(
                    run_batch, self.model_name, payload, key, pure=False, key=key
                )
            except (OSError, CancelledError, RuntimeError) as error:
                raise self._lost(error) from None
            self.in_flight[future] = batch
            self.completed.add(future)

    def _finish(self, future: Any) -> None:
        batch = self.in_flight.pop(future)
        results = self._collect(future, batch)
        final: list[dict[str, Any]] = []
        for item, result in zip(batch, results):
            item.attempts += 1
            if result["status"] != "ok" and item.attempts <= self.retries:
                self.pending.append(item)
                continue
            final.append(self._record(item, result))
        self.sizer.observe(r.get("elapsed", 0.0) for r in results if r["status"] == "ok")
        self._store(final)
        future.release()

    def _record(self, item: Item, result: dict[str, Any]) -> dict[str, Any]:
        return {**item.meta, **result, "seed": item.seed, "attempts": item.attempts}

    def _store(self, final: list[dict[str, Any]]) -> None:
        if not final:
            return
        self.store(final)
        ok = sum(record["status"] == "ok" for record in final)
        for record in final:
            if record["status"] != "ok":
                self.outcome.failed_keys.append(record["key"])
        self.outcome.ok += ok
        self.outcome.failed += len(final) - ok
        self.progress.update(ok=ok, failed=len(final) - ok)

    def _collect(self, future: Any, batch: list[Item]) -> list[dict[str, Any]]:
        """The batch's results, or one failure per task when its worker died running it."""
        from distributed.scheduler import KilledWorker

        try:
            return future.result()
        except KilledWorker as error:
            message = f"KilledWorker: the worker process died while running this task ({error})"
            return [
                {"key": item.key, "status": "failed", "error": message, "traceback": ""}
                for item in batch
            ]
        except (CancelledError, OSError) as error:
            raise self._lost(error) from None
        except Exception as error:  # the batch itself could not run (e.g. model not importable)
            message = f"{type(error).__name__}: {error}"
            return [
                {"key": item.key, "status": "failed", "error": message, "traceback": ""}
                for item in batch
            ]

    def _lost(self, error: BaseException) -> CampaignError:
        address = getattr(getattr(self.client, "scheduler", None), "address", "?")
        saved = self.outcome.ok + self.outcome.failed
        return CampaignError(
            f"lost the Dask scheduler at {address} ({type(error).__name__}); the {saved} "
            "results finished in this run are saved: run the same command again (with a "
            "running scheduler) to finish the rest"
        )

    # -- workers ----------------------------------------------------------------------------
    def _nthreads(self) -> dict[str, int]:
        try:
            return dict(self.client.nthreads())
        except (OSError, CancelledError, RuntimeError) as error:
            raise self._lost(error) from None

    def _watch_workers(self) -> None:
        """Follow workers joining and leaving; wait while there are none."""
        threads = self._nthreads()
        if not threads:
            threads = self._wait_for_workers()
        if self.threads is not None and threads != self.threads:
            joined = len(set(threads) - set(self.threads))
            left = len(set(self.threads) - set(threads))
            self.say(
                f"Dask workers: {len(threads)} ({sum(threads.values())} threads); "
                f"{joined} joined, {left} left"
            )
        self.threads = threads
        self.sizer.slots = max(1, sum(threads.values()))

    def _wait_for_workers(self) -> dict[str, int]:
        address = getattr(self.client.scheduler, "address", "?")
        limit = "no limit" if math.isinf(self.wait_workers) else f"{self.wait_workers:g} s"
        what = "to join" if self.threads is None else "after all workers left"
        self.say(f"waiting for Dask workers {what} at {address} (--wait-workers: {limit})")
        deadline = time.monotonic() + self.wait_workers
        while True:
            threads = self._nthreads()
            if threads:
                return threads
            if time.monotonic() >= deadline:
                saved = self.outcome.ok + self.outcome.failed
                raise CampaignError(
                    f"no Dask worker at {address} for {self.wait_workers:g} s (--wait-workers); "
                    f"the {saved} results finished in this run are saved: start workers "
                    "(see cluster/README.md) and run the same command again"
                )
            time.sleep(0.2)

    # -- timeouts ---------------------------------------------------------------------------
    def _stop_stuck_tasks(self) -> None:
        """Fail each task running past the timeout, resend its batchmates, end its worker."""
        try:
            reports = self.client.run(running_tasks, on_error="ignore")
        except (OSError, CancelledError, RuntimeError) as error:
            raise self._lost(error) from None
        by_key = {future.key: future for future in self.in_flight}
        stop = set()
        requeued = self.outcome.requeued
        for worker, batches in reports.items():
            if not isinstance(batches, dict):
                continue
            for key, (index, elapsed) in batches.items():
                future = by_key.get(key)
                if elapsed <= self.task_timeout or future is None or future.done():
                    continue
                self._time_out(future, index, elapsed)
                stop.add(worker)
        if stop:
            self.outcome.stopped_workers += len(stop)
            self.say(
                f"ending {len(stop)} worker process(es) stuck past --task-timeout "
                f"{self.task_timeout:g} s ({self.outcome.requeued - requeued} tasks of their "
                "batches sent again); their nannies start fresh ones"
            )
            try:
                self.client.run(end_worker_process, workers=sorted(stop), on_error="ignore")
            except (OSError, CancelledError, RuntimeError) as error:
                raise self._lost(error) from None

    def _time_out(self, future: Any, index: int, elapsed: float) -> None:
        batch = self.in_flight.pop(future)
        future.cancel()
        stuck = batch[index]
        stuck.attempts += 1
        result = {
            "key": stuck.key,
            "status": "failed",
            "error": f"TimeoutError: timed out: the task ran longer than --task-timeout "
            f"{self.task_timeout:g} s (stopped after {elapsed:.1f} s)",
            "traceback": "",
            "elapsed": elapsed,
        }
        others = batch[:index] + batch[index + 1 :]
        self.pending.extendleft(reversed(others))
        self.outcome.requeued += len(others)
        self.outcome.timed_out.append(stuck.key)
        self._store([self._record(stuck, result)])
