"""Run tasks on Dask as a bag of tasks: batching, retries, failure capture and progress.

Tasks are grouped into batches so that per-task scheduling overhead stays small: the first
batches hold one task each, and once task durations are measured a batch is sized to run for
about `TARGET_BATCH_SECONDS`, never so large that the tail of the campaign leaves workers idle.
Every finished batch is handed to a callback (which stores it durably) before it counts.

The driver also watches the cluster: the number of batches in flight follows workers joining
and leaving, it waits (up to a limit) while there are none, it stops tasks that run past a
per-task timeout, and it turns a lost scheduler into one clear error, after every finished
result has been stored.

A worker process that dies (a task calling ``os._exit``, a crash in native code, memory) takes
the batches it held with it, and nothing says which of their tasks ended it. None of them
counts as tried: a batch that died with its worker is sent again in two halves, and a single
task on its own, alone on a worker kept free for it. Only a task whose worker dies while it
runs alone there (the scheduler's record of the death names it as the one task the worker
held) is charged a try, and fails once its tries are spent; its batchmates run again
elsewhere and end as in an undisturbed run.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from campaign.errors import CampaignError
from campaign.execute.batching import BATCHES_PER_WORKER, BatchSizer, GroupedQueue, Item, Outcome
from campaign.execute.calls import WorkerCalls
from campaign.execute.deaths import (
    Charge,
    Death,
    Moved,
    Requeue,
    SendAgain,
    charged_result,
    death_record,
    died_with,
    resend_parts,
    stale_batch,
)
from campaign.execute.flight import Flight
from campaign.execute.inputs import ship_inputs
from campaign.execute.options import ExecutionOptions
from campaign.execute.tail import Copy, Rescue, Steal, TailSnapshot, tail_decisions
from campaign.execute.timeouts import TimeoutSnapshot, timed_out_result, timeout_decisions
from campaign.execute.worker import end_worker_process, running_tasks, skip_tasks
from campaign.plan.sources import engine_identity, identity_differences
from campaign.render.progress import Progress
from campaign.spec.command import CommandSpec

POLL_SECONDS = 1.0  # how often the driver looks at the workers
TAIL_POLL_SECONDS = 0.2  # how often, once nothing is left to send (tail replication)
# what a call to the scheduler raises when the scheduler is gone (or the client closed)
LOST_SCHEDULER_ERRORS = (OSError, CancelledError, RuntimeError)

log = logging.getLogger("campaign")


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


def dispatch(
    client: Any,
    model_name: str | CommandSpec,
    items: list[Item],
    store: Callable[[list[dict[str, Any]]], None],
    options: ExecutionOptions,
    progress: Progress,
    *,
    say: Callable[[str], None] | None = None,
    code: str | None = None,
) -> Outcome:
    """Run every item on the cluster; store each finished batch before counting it.

    ``options`` (`ExecutionOptions`): `task_timeout` (seconds) fails a task that runs longer,
    ends its worker process (a thread cannot be interrupted) and sends its batchmates again.
    `wait_workers` (seconds, may be infinite) is how long to wait while the cluster has no
    worker, at the start or later.
    A lost scheduler raises `CampaignError` after everything finished has been stored.

    `replicate_tail`: once nothing is left to send and a worker is idle, the not yet started
    tasks of the longest remaining batch are copied to it (work stealing), and when no batch
    has such tasks, a task running far longer than usual is copied (a straggling worker);
    the first result of a task wins. Results are identical either way: models are pure.
    `locality`: a batch holds tasks of one item ``group`` (the same heavy inputs), and each
    worker keeps to the groups it already has, whose inputs its cache holds, taking a new
    group only when its own are exhausted (see `_submit_by_group`).
    `code`: the digest of the model's code the results must come from (see
    `campaign.plan.sources`): a batch a worker ran with other code (loaded before the code changed,
    or another version) stops the run, and its results are not stored.
    `batch_size`: tasks per batch instead of sizes from measured durations (results are the
    same either way: each task gets its own copy of its params).

    A worker that runs another engine than this process (another campaign code, Python or
    numeric library version: `campaign.sources.engine_identity`, sent with every batch) is not
    used: its results are not stored, its tasks run on the other workers, and the run stops
    when no other worker is left.
    """
    if isinstance(model_name, CommandSpec):  # its files reach every worker once, by digest
        with scheduler_calls(lambda error: lost_scheduler("?", 0, error)):
            ship_inputs(client, model_name)
    return _Driver(client, model_name, store, options, progress, say, code).run(items)


class _Driver:
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
        self.flight = Flight(client, model_name, self._scheduler)  # the batches in flight
        self.outcome = Outcome()
        self.threads: dict[str, int] | None = None
        self.sizer = BatchSizer(1)
        self.sizer.fixed = options.batch_size
        timeout = options.task_timeout
        self.poll = POLL_SECONDS if timeout is None else min(POLL_SECONDS, timeout / 4)
        self.replicate_tail = options.replicate_tail
        self.locality = options.locality
        self.code = code  # the digest of the model's code results must come from
        self.owned: dict[str, list[Any]] = {}  # worker -> groups it was given (warm caches)
        # worker deaths (see `_died_with`): once one happened, every batch is placed on a
        # worker by the driver, so that a worker can be kept free for a task to run alone
        self.placed = False
        self.halves: deque[list[Item]] = deque()  # batches that died with a worker, halved
        self.lone: deque[Item] = deque()  # tasks that died with a worker, to run alone
        self.draining: set[str] = set()  # workers given nothing new until they are free
        self.ended: set[str] = set()  # workers this driver ended (tasks past the timeout)
        self.deaths: dict[str, Death | None] = {}  # worker -> the scheduler's record of it
        self.engine = engine_identity()  # what a worker must run for its results to count
        self.refused: dict[str, str] = {}  # worker -> how its engine differs from this one's
        self.calls = WorkerCalls(client)  # questions to workers, each waited for a bounded time

    # -- the loop ---------------------------------------------------------------------------
    def run(self, items: list[Item]) -> Outcome:
        self.pending.extend(items)
        next_poll = 0.0
        while self.pending or self.flight.in_flight or self.halves or self.lone:
            if time.monotonic() >= next_poll:
                self._watch_workers()
                if self.task_timeout is not None and self.flight.in_flight:
                    self._stop_stuck_tasks()
                waiting = self.pending or self.halves or self.lone
                tail = self.replicate_tail and not waiting and self.flight.in_flight
                if tail:
                    self._replicate_tail()
                next_poll = time.monotonic() + (
                    min(self.poll, TAIL_POLL_SECONDS) if tail else self.poll
                )
            self._submit_more()
            done = self.flight.next_done(next_poll)
            if done is not None and done[0] in self.flight.in_flight:
                self._finish(*done)
        return self.outcome

    def _submit_more(self) -> None:
        if self.lone:
            self._submit_alone()
        if self.placed or (self.locality and self.threads and len(self.pending.queues) > 1):
            self._submit_by_group()
            return
        slots = self.sizer.slots
        while self.pending and len(self.flight.in_flight) < slots * BATCHES_PER_WORKER:
            self.flight.send(
                self.pending.take(self.sizer.size(len(self.pending))), None, strict=False
            )

    def _submit_by_group(self) -> None:
        """Give each worker batches of the groups it already has (their inputs are loaded).

        A worker with free slots takes its own groups first, then a group nobody has, and
        only then shares the group with the most pending tasks, so each input is loaded by as
        few workers as keep all of them busy.
        """
        kept = self.draining.union(self.flight.alone)  # kept free for, or running, a task alone
        threads = {w: n for w, n in self._usable().items() if w not in kept}
        while threads and (self.pending or self.halves):
            if len(self.flight.in_flight) >= self.sizer.slots * BATCHES_PER_WORKER:
                return
            worker = min(threads, key=lambda w: (self.flight.sent_to.get(w, 0) / threads[w], w))
            if self.flight.sent_to.get(worker, 0) >= threads[worker] * BATCHES_PER_WORKER:
                return
            if self.halves:  # batches that died with a worker go first, in halves
                self.flight.send(self.halves.popleft(), worker, strict=False)
                continue
            groups = self.pending.groups()
            owned = self.owned.setdefault(worker, [])
            claimed = {g for gs in self.owned.values() for g in gs}
            group = next((g for g in owned if self.pending.size_of(g)), None)
            if group is None:
                group = next((g for g in groups if g not in claimed), None)
                if group is None:
                    group = max(groups, key=self.pending.size_of)
                owned.append(group)
            batch = self.pending.take(self.sizer.size(len(self.pending)), group)
            self.flight.send(batch, worker, strict=False)

    def _submit_alone(self) -> None:
        """Run each task that died with a worker alone on a worker: one kept free for it (no
        new batch is sent there, so it drains), then given only that task."""
        workers = self._usable()
        self.draining &= set(workers)
        wanted = len(self.lone) - len(self.draining)
        if wanted > 0:
            free = [w for w in workers if w not in self.draining and w not in self.flight.alone]
            free.sort(key=lambda w: (self.flight.sent_to.get(w, 0), w))
            self.draining.update(free[:wanted])
        for worker in sorted(self.draining):
            if not self.lone:
                break
            if self.flight.sent_to.get(worker, 0) == 0:
                future = self.flight.send([self.lone.popleft()], worker, strict=True)
                self.flight.alone[worker] = future.key
                self.draining.discard(worker)
        if not self.lone:
            self.draining.clear()

    def _live(self) -> dict[str, int]:
        """The workers as last seen, less those known to have died since."""
        return {w: n for w, n in (self.threads or {}).items() if w not in self.deaths}

    def _usable(self) -> dict[str, int]:
        """The live workers to give work to: those running this process's engine, less those
        that have not answered the driver's last question (work sent there would wait)."""
        silent = self.calls.silent
        return {w: n for w, n in self._live().items() if w not in self.refused and w not in silent}

    def _finish(self, future: Any, value: Any) -> None:
        """Store a finished batch's results (its result or error as ``as_completed`` read it)."""
        from distributed.scheduler import KilledWorker

        error = value[1] if future.status == "error" and isinstance(value, tuple) else None
        if isinstance(error, KilledWorker):
            self._died_with(future, getattr(error.last_worker, "address", ""))
            return
        if future.status == "finished" and self._foreign(value):
            self._requeue(future)  # its results are not stored: the tasks run elsewhere
            return
        collected = self._collect(future, value, self.flight.in_flight[future])
        batch = self.flight.in_flight.pop(future)
        self.flight.landed(future)
        worker, results, code = collected
        if self.code is not None and code is not None and code != self.code:
            raise CampaignError(
                f"the Dask worker {worker} runs other code of model {self.model_name} than "
                "this machine has (it loaded the model before its code changed, or has "
                "another version): restart the workers (or install the same code on them) and "
                "run again; the results it computed were not stored"
            )
        final: list[dict[str, Any]] = []
        for item, result in zip(batch, results):
            item.copies -= 1
            transient = result.pop("transient", False)  # a failure worth another try
            if result["status"] == "skipped":
                if not item.done and item.copies == 0:  # its other copy was lost: run it again
                    self.pending.appendleft(item)
                continue
            if item.done or (result["status"] != "ok" and item.copies > 0):
                continue  # another copy already won, or may still succeed
            item.attempts += 1
            if result["status"] != "ok" and transient and item.attempts <= self.retries:
                self.pending.append(item)
                continue
            item.done = True
            if future.key in self.flight.replicas:
                self.outcome.replicas_won += 1
            final.append(self._record(item, result, worker))
        self.sizer.observe(r["elapsed"] for r in results if r["status"] == "ok")
        self._store(final)
        future.release()
        if self.replicate_tail:
            self.flight.drop_finished_copies()

    # -- tail replication -------------------------------------------------------------------
    def _replicate_tail(self) -> None:
        """Give idle workers the unstarted tasks of the longest remaining batches.

        Half of a running batch's unstarted tasks move to an idle worker, and the worker of
        the batch is told to skip them (work stealing). When no batch has unstarted tasks, a
        task running far longer than the mean is copied to the idle worker (a straggling
        worker); whichever copy finishes first wins. A worker that does not answer within
        `calls.ANSWER_SECONDS` (stopped, cut off) may never finish its batches: every
        unfinished task of them is copied first. What to move or copy is decided by
        `tail_decisions` from a snapshot; this applies it.
        """
        kept = self.draining.union(self.flight.alone)
        with self._scheduler():
            processing = self.client.processing()
        idle = sorted(
            {w for w, keys in processing.items() if not keys} & set(self._usable()) - kept
        )
        if not idle:
            return
        with self._scheduler():
            reports = self.calls.run(running_tasks, workers=self._live())
        idle = [worker for worker in idle if worker not in self.calls.silent]
        if not idle:  # a silent worker may show no task when its results are not yet read
            return
        held_by = self._held_by_silent(processing)
        running: dict[str, tuple[str, int, float]] = {}
        for worker, batches in reports.items():
            if isinstance(batches, dict):
                for key, (index, elapsed) in batches.items():
                    running[key] = (worker, index, elapsed)
        mean = self.sizer.seconds / self.sizer.count if self.sizer.count else math.inf
        batches = {future.key: batch for future, batch in self.flight.in_flight.items()}
        snapshot = TailSnapshot(batches, running, idle, mean, frozenset(held_by))
        for decision in tail_decisions(snapshot):
            if isinstance(decision, Rescue):
                self.say(
                    f"worker {held_by[decision.batch]} does not answer within "
                    f"{self.calls.timeout:g} s: {len(decision.items)} tasks it holds are copied to "
                    f"{decision.to}"
                )
                future = self.flight.send(list(decision.items), decision.to, strict=True)
                self.flight.replicas.add(future.key)
                self.outcome.replicated += len(decision.items)
            elif isinstance(decision, Steal):
                taken = list(decision.items)
                with self._scheduler():
                    self.calls.run(
                        skip_tasks,
                        decision.batch,
                        [i.key for i in taken],
                        workers=[decision.worker],
                    )
                self.flight.send(taken, decision.to, strict=True)
                self.outcome.stolen += len(taken)
            elif isinstance(decision, Copy):
                future = self.flight.send([decision.item], decision.to, strict=True)
                self.flight.replicas.add(future.key)
                self.outcome.replicated += 1

    def _held_by_silent(self, processing: dict[str, Any]) -> dict[str, str]:
        """Batch key -> the silent worker that holds it: running or queued there, or finished
        there with its result not yet read (reading it waits for that worker)."""
        silent = self.calls.silent
        held_by = {str(key): worker for worker in silent for key in processing.get(worker, ())}
        finished = [future for future in self.flight.in_flight if future.status == "finished"]
        if silent and finished:
            with self._scheduler():
                where = self.client.who_has(finished)
            for key, workers in where.items():
                if workers and set(workers) <= silent:
                    held_by[str(key)] = workers[0]
        return held_by

    def _record(self, item: Item, result: dict[str, Any], worker: str = "") -> dict[str, Any]:
        record = {**item.meta, **result, "seed": item.seed, "attempts": item.attempts}
        if worker:
            record["worker"] = worker
        return record

    def _store(self, final: list[dict[str, Any]]) -> None:
        if not final:
            return
        self.store(final)
        ok = sum(record["status"] == "ok" for record in final)
        self.outcome.ok += ok
        self.outcome.failed += len(final) - ok
        self.progress.update(ok=ok, failed=len(final) - ok)

    def _collect(
        self, future: Any, value: Any, batch: list[Item]
    ) -> tuple[str, list[dict[str, Any]], str | None]:
        """The batch's worker and results, or one failure per task when it could not run."""
        if future.status == "cancelled" or isinstance(value, CancelledError):
            raise self._lost(value if isinstance(value, BaseException) else CancelledError())
        if future.status == "error":
            error = value[1] if isinstance(value, tuple) else value
            if isinstance(error, OSError):
                raise self._lost(error)
            # the batch itself could not run (e.g. model not importable)
            message = f"{type(error).__name__}: {error}"
            failure = {"status": "failed", "error": message, "traceback": "", "elapsed": 0.0}
            failure["transient"] = True  # not the model's doing: tried again
            return "", [dict(failure) for _ in batch], None
        worker, results, code = value[:3]
        if isinstance(results, str):  # the model cannot be loaded there: no task can run
            saved = self.outcome.ok + self.outcome.failed
            raise CampaignError(
                f"on Dask worker {worker}: {results}; the {saved} results finished in this "
                "run are saved: make the model importable on every worker (the same "
                "PYTHONPATH or installed package) and run the same command again"
            )
        return worker, results, code

    def _foreign(self, value: Any) -> bool:
        """Whether a batch's result comes from a worker that runs another engine than this
        process (`engine_identity`); the first such result refuses its worker in one line, and
        the run stops when no worker is left to use."""
        worker = value[0]
        if worker in self.refused:
            return True
        there = value[3] if len(value) > 3 else None  # an older worker sends none
        differences = identity_differences(self.engine, there)
        if not differences:
            return False
        self.refused[worker] = ", ".join(differences)
        self.placed = True  # every batch goes to a chosen worker from now on
        self.say(f"worker {worker}: {self.refused[worker]} — it is not used")
        with self._scheduler():
            there_now = set(self.client.processing().get(worker, ()))
        for other in [f for f in self.flight.in_flight if f.key in there_now and not f.done()]:
            self._requeue(other)  # its other batches would not count either: sent elsewhere
        workers = self._nthreads()
        if workers and set(workers) <= set(self.refused):
            saved = self.outcome.ok + self.outcome.failed
            raise CampaignError(
                f"no Dask worker runs the engine this machine runs (worker {worker}: "
                f"{self.refused[worker]}); the {saved} results finished in this run are saved: "
                "start workers with the same campaign code, Python and numpy, scipy and pandas "
                "versions as here and run the same command again"
            )
        return True

    def _scheduler(self) -> AbstractContextManager[None]:
        """Around every call to the scheduler (see `scheduler_calls`)."""
        return scheduler_calls(self._lost)

    def _lost(self, error: BaseException) -> CampaignError:
        address = getattr(getattr(self.client, "scheduler", None), "address", "?")
        return lost_scheduler(address, self.outcome.ok + self.outcome.failed, error)

    # -- worker deaths ----------------------------------------------------------------------
    def _died_with(self, future: Any, worker: str) -> None:
        """A batch's worker died (or left) while the batch was there.

        No task of it counts as tried, unless the scheduler's record of the death names this
        batch, of one task, as the only task the worker held: that task ran alone and ended
        its process (or something else did; its tries allow for that). The others run again:
        a batch in two halves, a single task alone on a worker. A worker this driver ended,
        or one that left on purpose, says nothing about its tasks: they are simply sent again.
        """
        isolated = self.flight.alone.get(self.flight.target.get(future.key, "")) == future.key
        batch = self.flight.in_flight.pop(future)
        self.flight.landed(future)
        future.cancel()  # a no-op once it failed; a batch tied to a gone worker would wait
        death = self._death(worker)
        for item in batch:
            item.copies -= 1
        rest = [item for item in batch if not item.done and item.copies == 0]
        decision = died_with(future.key, batch, rest, death, worker in self.ended, isolated)
        if decision is None:
            return
        if isinstance(decision, SendAgain):
            self._send_again(list(decision.items))
            return
        if isinstance(decision, Charge):
            self._charge(decision.item)
            return
        for item in rest:
            item.suspect = True
        self.outcome.resent += len(rest)
        self._queue_parts(decision.parts, front=False)
        self.placed = True

    def _queue_parts(self, parts: tuple[tuple[Item, ...], ...], front: bool) -> None:
        """Queue tasks that died with a worker: one alone, more as a batch of their own (at the
        ``front`` of the queues: they were waiting already)."""
        for part in parts:
            if len(part) == 1 and front:
                self.lone.appendleft(part[0])
            elif len(part) == 1:
                self.lone.append(part[0])
            elif front:
                self.halves.appendleft(list(part))
            else:
                self.halves.append(list(part))

    def _charge(self, item: Item) -> None:
        """A task's worker died while it ran alone: one try; it fails once its tries are spent."""
        item.attempts += 1
        item.deaths += 1
        self.placed = True
        if item.attempts <= self.retries:
            self.lone.append(item)
            return
        item.done = True
        result = charged_result(item.deaths)
        self._store([self._record(item, result)])

    def _death(self, worker: str) -> Death | None:
        """The scheduler's record of a worker's removal (read once per worker), or None.

        A worker that logged that it was closing was closed on purpose (by its nanny, its
        cluster, the scheduler), whatever the removal says: its tasks did not end it."""
        if worker not in self.deaths:
            with self._scheduler():
                events = self.client.get_events(worker) if worker else ()
            record = death_record(events)
            self.deaths[worker] = record
            if worker not in self.ended and not (record is not None and record.expected):
                self.outcome.worker_deaths += 1
        return self.deaths[worker]

    def _check_placed(self) -> None:
        """Take back the batches waiting for a worker that is gone.

        Dask keeps a batch placed on a worker waiting for it while that worker is gone and no
        other one was up when it placed it (or ran it again after it was lost with its worker),
        and one that may run only there for good. So a batch whose worker is gone and that
        Dask runs nowhere else is taken back: one the worker held when it died died with it
        (`_died_with`), another is sent again. One Dask runs on another worker is left there.
        """
        for future in [f for f in self.flight.in_flight if f.status == "error"]:
            # as_completed gives up on a batch whose results were lost with its worker and
            # that then died with the next one: it may never hand it over
            if future not in self.flight.in_flight:  # cancelled as a copy of finished tasks
                continue
            with self._scheduler():
                error = future.exception()
            self._finish(future, (type(error), error, None))
        workers = self._live()
        stale = [
            future
            for future in self.flight.in_flight
            if self.flight.target.get(future.key, "") not in workers
            and future.key in self.flight.target
            and future.status in ("pending", "lost")
        ]
        if not stale:
            return
        with self._scheduler():
            processing = self.client.processing()
        where = {key: worker for worker, keys in processing.items() for key in keys}
        for future in stale:
            if future not in self.flight.in_flight:
                continue
            worker = self.flight.target[future.key]
            strict = future.key in self.flight.strict
            moved = future.key in where and not strict
            death = None if moved else self._death(worker)
            fate = stale_batch(future.key, strict, where, death)
            if isinstance(fate, Moved):
                self.flight.landed(future)  # now on another worker
                self.flight.target[future.key] = fate.to
                self.flight.sent_to[fate.to] = self.flight.sent_to.get(fate.to, 0) + 1
            elif isinstance(fate, Requeue):
                self._requeue(future)
            else:
                self._died_with(future, worker)

    def _requeue(self, future: Any) -> None:
        """Send a batch's tasks again, not counted as tried: it never ran, or its results were
        lost with its worker after it finished."""
        batch = self.flight.in_flight.pop(future)
        self.flight.landed(future)
        future.cancel()
        for item in batch:
            item.copies -= 1
        self._send_again([item for item in batch if not item.done and item.copies == 0])

    def _send_again(self, rest: list[Item]) -> None:
        """Queue tasks again, not counted as tried; those that died with a worker keep to
        their halves or to running alone."""
        parts, others = resend_parts(rest)
        self._queue_parts(parts, front=True)
        self.pending.extendleft(reversed(others))
        self.outcome.requeued += len(rest)

    # -- workers ----------------------------------------------------------------------------
    def _nthreads(self) -> dict[str, int]:
        with self._scheduler():
            return dict(self.client.nthreads())

    def _watch_workers(self) -> None:
        """Follow workers joining and leaving; wait while there are none."""
        threads = self._nthreads()
        if not threads:
            threads = self._wait_for_workers()
        if self.threads is not None and threads != self.threads:
            joined = len(set(threads) - set(self.threads))
            gone = set(self.threads) - set(threads)
            self.say(
                f"Dask workers: {len(threads)} ({sum(threads.values())} threads); "
                f"{joined} joined, {len(gone)} left"
            )
            self.draining -= gone
        self.threads = threads
        self.sizer.slots = max(1, sum(threads.values()))
        self._check_placed()

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
        with self._scheduler():
            reports = self.calls.run(running_tasks, workers=self._live())
        by_key = {future.key: future for future in self.flight.in_flight if not future.done()}
        timeout = self.task_timeout or 0.0  # only called with a timeout
        snapshot = TimeoutSnapshot(
            reports, frozenset(by_key), frozenset(self.flight.abandoned), timeout
        )
        decided = timeout_decisions(snapshot)
        requeued = self.outcome.requeued
        for stuck in decided.stuck:
            self._time_out(by_key[stuck.key], stuck.index, stuck.elapsed)
        self.flight.abandoned &= decided.running
        stop = decided.stop
        if stop:
            self.ended.update(stop)  # the tasks they hold did not end them
            self.outcome.stopped_workers += len(stop)
            self.say(
                f"ending {len(stop)} worker process(es) stuck past --task-timeout "
                f"{self.task_timeout:g} s ({self.outcome.requeued - requeued} tasks of their "
                "batches sent again); their nannies start fresh ones"
            )
            with self._scheduler():
                self.calls.run(end_worker_process, workers=stop)

    def _time_out(self, future: Any, index: int, elapsed: float) -> None:
        batch = self.flight.in_flight.pop(future)
        self.flight.landed(future)
        future.cancel()
        self.flight.abandoned.add(future.key)  # until its worker process has ended
        for item in batch:
            item.copies -= 1
        stuck = batch[index]
        if stuck.done:
            return
        stuck.attempts += 1
        stuck.done = True
        result = timed_out_result(stuck.key, elapsed, self.task_timeout or 0.0)
        others = [i for i in batch[:index] + batch[index + 1 :] if not i.done and i.copies == 0]
        self.pending.extendleft(reversed(others))
        self.outcome.requeued += len(others)
        self.outcome.timed_out.append(stuck.key)
        self._store([self._record(stuck, result)])
