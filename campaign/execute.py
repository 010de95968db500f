"""Run tasks on Dask as a bag of tasks: batching, retries, failure capture and progress.

Tasks are grouped into batches so that per-task scheduling overhead stays small: the first
batches hold one task each, and once task durations are measured a batch is sized to run for
about `TARGET_BATCH_SECONDS`, never so large that the tail of the campaign leaves workers idle.
Every finished batch is handed to a callback (which stores it durably) before it counts.
"""

from __future__ import annotations

import logging
import math
import os
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from campaign.errors import CampaignError
from campaign.models import load_model
from campaign.progress import Progress

TARGET_BATCH_SECONDS = 0.5
BATCHES_PER_WORKER = 2

log = logging.getLogger("campaign")


# -- worker side --------------------------------------------------------------------------------
@lru_cache(maxsize=16)
def _model(name: str):
    return load_model(name)


def run_batch(model_name: str, items: list[tuple[str, dict[str, Any], int]]) -> list[dict]:
    """Run a batch of (key, params, seed) on a worker; a model error fails only its task."""
    model = _model(model_name)
    results = []
    for key, params, seed in items:
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
    return results


def _as_float(name: str, value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        and not hasattr(value, "__float__")
    ):
        raise TypeError(f"metric {name!r} is not a number: {value!r}")
    return float(value)


# -- cluster -----------------------------------------------------------------------------------
def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@contextmanager
def open_client(
    scheduler: str | None = None, workers: int | None = None, say: Callable[[str], None] = print
) -> Iterator[Any]:
    """A Dask client: to an existing scheduler, or to an embedded cluster on 127.0.0.1."""
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as error:
            raise CampaignError(
                f"cannot reach the Dask scheduler at {scheduler}: {error}"
            ) from None
        try:
            nworkers = len(client.scheduler_info().get("workers", {}))
            say(
                f"Dask scheduler {scheduler} ({nworkers} workers); "
                f"dashboard {client.dashboard_link}"
            )
            yield client
        finally:
            client.close()
        return
    count = workers or default_workers()
    cluster = LocalCluster(
        n_workers=count,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
    )
    try:
        client = Client(cluster)
        try:
            say(f"Local Dask cluster: {count} worker processes; dashboard {client.dashboard_link}")
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def worker_slots(client: Any) -> int:
    """How many tasks the cluster runs at once (threads over all workers), at least one."""
    info = client.scheduler_info()
    return max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))


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
) -> Outcome:
    """Run every item on the cluster; store each finished batch before counting it."""
    from distributed import as_completed
    from distributed.client import FutureCancelledError

    pending: deque[Item] = deque(items)
    slots = worker_slots(client)
    sizer = BatchSizer(slots)
    in_flight: dict[Any, list[Item]] = {}
    outcome = Outcome()
    completed = as_completed()

    def submit_more() -> None:
        while pending and len(in_flight) < slots * BATCHES_PER_WORKER:
            size = sizer.size(len(pending))
            batch = [pending.popleft() for _ in range(min(size, len(pending)))]
            payload = [(item.key, item.params, item.seed) for item in batch]
            future = client.submit(
                run_batch, model_name, payload, pure=False, key=f"campaign-{uuid.uuid4().hex}"
            )
            in_flight[future] = batch
            completed.add(future)

    submit_more()
    while in_flight:
        try:
            future = next(completed)
        except StopIteration:  # pragma: no cover - as_completed drained while work remains
            break
        batch = in_flight.pop(future)
        results = _collect(future, batch, FutureCancelledError)
        final: list[dict[str, Any]] = []
        for item, result in zip(batch, results):
            item.attempts += 1
            if result["status"] != "ok" and item.attempts <= retries:
                pending.append(item)
                continue
            final.append({**item.meta, **result, "seed": item.seed, "attempts": item.attempts})
        sizer.observe(r.get("elapsed", 0.0) for r in results if r["status"] == "ok")
        if final:
            store(final)
            for record in final:
                if record["status"] == "ok":
                    outcome.ok += 1
                else:
                    outcome.failed += 1
                    outcome.failed_keys.append(record["key"])
            progress.update(
                ok=sum(r["status"] == "ok" for r in final),
                failed=sum(r["status"] != "ok" for r in final),
            )
        future.release()
        submit_more()
    return outcome


def _collect(future: Any, batch: list[Item], cancelled_error: type) -> list[dict[str, Any]]:
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
    except (cancelled_error, OSError) as error:
        raise CampaignError(
            f"lost the Dask scheduler ({type(error).__name__}); finished results are saved, "
            "run the same command again to finish the rest"
        ) from None
    except Exception as error:  # the batch itself could not run (e.g. model not importable)
        message = f"{type(error).__name__}: {error}"
        return [
            {"key": item.key, "status": "failed", "error": message, "traceback": ""}
            for item in batch
        ]
