"""The state of one dispatch and its calls out: to the scheduler, to the store, to the user.

Everything the driver's parts share lives here: the queues of tasks to send, the batches in
flight, the workers as last seen, and the tally. The parts (`placement`, `reading`,
`finishing`, `recovery`, the driver's loop) change it by applying decisions that pure
functions compute; every call to the scheduler goes through `Shell.scheduler`, so that a lost
scheduler ends the run with one error, after every finished result has been stored.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import CancelledError
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from campaign.errors import CampaignError
from campaign.execute.batching import BatchSizer, GroupedQueue, Item, Outcome
from campaign.execute.calls import WorkerCalls
from campaign.execute.deaths import Death
from campaign.execute.execution_options import ExecutionOptions
from campaign.execute.flight import Flight
from campaign.plan.sources import model_engine
from campaign.render.progress import Progress

POLL_SECONDS = 1.0  # how often the driver looks at the workers
# what a call to the scheduler raises when the scheduler is gone (or the client closed)
LOST_SCHEDULER_ERRORS = (OSError, CancelledError, RuntimeError)


def lost_scheduler(address: str, saved: int, error: BaseException) -> CampaignError:
    """The one error a lost scheduler ends a run with, whatever call or result found it."""
    return CampaignError(
        f"lost the Dask scheduler at {address} ({type(error).__name__}); the {saved} "
        "results finished in this run are saved: run the same command again (with a "
        "running scheduler) to finish the rest"
    )


@contextmanager
def scheduler_calls(lost: Callable[[BaseException], CampaignError]) -> Iterator[None]:
    """Around calls to the scheduler: one failing because the scheduler is gone (or the
    client closed) raises ``lost(error)`` instead, its traceback left out (it says nothing
    more)."""
    try:
        yield
    except LOST_SCHEDULER_ERRORS as error:
        raise lost(error) from None


def worker_slots(
    threads: Mapping[str, int],
    held: Mapping[str, Mapping[str, float]],
    asked: Mapping[str, float] | None,
) -> dict[str, int]:
    """How many batches each worker runs at once: its threads, or fewer when what each task
    asks (``asked``, Dask resources) fits fewer times in what the worker holds (``held``);
    a worker that cannot hold one task is left out (a batch sent there would never run)."""
    slots = {}
    for worker, count in threads.items():
        if asked:
            have = held.get(worker) or {}
            fits = [int(have.get(name, 0) // need) for name, need in asked.items() if need > 0]
            count = min([count, *fits])
        if count > 0:
            slots[worker] = count
    return slots


class Shell:
    """The state of one dispatch: pending items, batches in flight, workers as last seen."""

    def __init__(
        self,
        client: Any,
        model_name: str,
        store: Callable[[list[dict[str, Any]]], None],
        options: ExecutionOptions,
        progress: Progress,
        say: Callable[[str], None] | None = None,
        code: str | None = None,
    ):
        self.client = client
        self.model_name = model_name
        self.store = store
        self.options = options
        self.retries = options.retries
        self.progress = progress
        self.task_timeout = options.task_timeout
        self.wait_workers = options.wait_workers
        self.say = say or (lambda message: None)
        self.pending = GroupedQueue()
        self.unstored: list[dict[str, Any]] = []  # final records to store (`flush`)
        # the batches in flight
        self.flight = Flight(client, model_name, self.scheduler, options.resources)
        self.outcome = Outcome()
        self.threads: dict[str, int] | None = None
        self.held: dict[str, dict[str, float]] = {}  # worker -> its Dask resources (if asked)
        self.sizer = BatchSizer(1)
        self.sizer.fixed = options.batch_size
        timeout = options.task_timeout
        self.poll = POLL_SECONDS if timeout is None else min(POLL_SECONDS, timeout / 4)
        self.replicate_tail = options.replicate_tail
        self.locality = options.locality
        self.code = code  # the digest of the model's code results must come from
        self.owned: dict[str, list[Any]] = {}  # worker -> groups it was given (warm caches)
        self.halves: deque[list[Item]] = deque()  # batches that died with a worker, halved
        self.lone: deque[Item] = deque()  # tasks that died with a worker, to run alone
        self.draining: set[str] = set()  # workers given nothing new until they are free
        self.ended: set[str] = set()  # workers this driver ended (tasks past the timeout)
        self.deaths: dict[str, Death | None] = {}  # worker -> the scheduler's record of it
        self.engine = model_engine(model_name)  # what a worker must run for its results to count
        self.refused: dict[str, str] = {}  # worker -> how its engine differs from this one's
        self.calls = WorkerCalls(client)  # questions to workers, each waited for a bounded time

    def waiting(self) -> bool:
        """Whether tasks wait to be sent (new ones, or ones that died with a worker)."""
        return bool(self.pending or self.halves or self.lone)

    def live(self) -> dict[str, int]:
        """The workers as last seen, less those known to have died since."""
        return {w: n for w, n in (self.threads or {}).items() if w not in self.deaths}

    def usable(self) -> dict[str, int]:
        """The live workers to give work to: those running this process's engine, less those
        that have not answered the driver's last question (work sent there would wait)."""
        silent = self.calls.silent
        return {w: n for w, n in self.live().items() if w not in self.refused and w not in silent}

    def not_to_use(self) -> set[str]:
        """The workers to send no new batch to: kept free for a task to run alone (or running
        one), running another engine, silent or dead."""
        flight = self.flight
        return (
            self.draining.union(flight.alone, self.refused, self.calls.silent) | self.deaths.keys()
        )

    def nthreads(self) -> dict[str, int]:
        with self.scheduler():
            return dict(self.client.nthreads())

    def record(self, item: Item, result: dict[str, Any], worker: str = "") -> dict[str, Any]:
        record = {**item.meta, **result, "seed": item.seed, "attempts": item.attempts}
        if worker:
            record["worker"] = worker
        return record

    def keep(self, final: list[dict[str, Any]]) -> None:
        """Hold final records to store with the others of the batches landing at once
        (`flush`): one call to the store, one write to disk, for them all."""
        self.unstored.extend(final)

    def flush(self) -> None:
        """Store the final records held, then count them (a result counts once stored)."""
        final, self.unstored = self.unstored, []
        if not final:
            return
        self.store(final)
        ok = sum(record["status"] == "ok" for record in final)
        self.outcome.ok += ok
        self.outcome.failed += len(final) - ok
        self.progress.update(ok=ok, failed=len(final) - ok)

    def saved(self) -> int:
        """How many results this run has stored, every one held stored first (the number a
        stop says)."""
        self.flush()
        return self.outcome.ok + self.outcome.failed

    def scheduler(self) -> AbstractContextManager[None]:
        """Around every call to the scheduler (see `scheduler_calls`)."""
        return scheduler_calls(self.lost)

    def lost(self, error: BaseException) -> CampaignError:
        address = getattr(getattr(self.client, "scheduler", None), "address", "?")
        return lost_scheduler(address, self.saved(), error)
