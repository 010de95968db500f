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
from collections.abc import Callable, Collection
from functools import cached_property
from typing import Any

from campaign.errors import ParameterError
from campaign.execute.batching import Item, Outcome
from campaign.execute.finishing import Finishing
from campaign.execute.inputs import ship_inputs, withdraw_inputs
from campaign.execute.options import ExecutionOptions
from campaign.execute.placement import Placement
from campaign.execute.reading import Reading
from campaign.execute.recovery import Recovery
from campaign.execute.shell import Shell, lost_scheduler, scheduler_calls
from campaign.execute.tail import Copy, Rescue, Steal, TailSnapshot, tail_decisions
from campaign.execute.timeouts import TimeoutSnapshot, timed_out_result, timeout_decisions
from campaign.execute.worker import end_worker_process, running_tasks, skip_tasks
from campaign.render.progress import Progress
from campaign.spec.command import CommandSpec

TAIL_POLL_SECONDS = 0.2  # how often, once nothing is left to send (tail replication)

log = logging.getLogger("campaign")


def dispatch(
    client: Any,
    model_name: str | CommandSpec,
    items: Collection[Item],
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
    group only when its own are exhausted (see `placement`).
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
    if not isinstance(model_name, CommandSpec):
        return _Driver(client, model_name, store, options, progress, say, code).run(items)
    with scheduler_calls(lambda error: lost_scheduler("?", 0, error)):
        shipped = ship_inputs(client, model_name)  # to every worker once, by digest
    try:
        return _Driver(client, model_name, store, options, progress, say, code).run(items)
    finally:
        withdraw_inputs(client, shipped)


class _Driver(Shell):
    """One dispatch's loop: send, read what lands, look at the workers, apply decisions.

    Its parts (placement, finishing, recovery) each hold this state and are made on first use.
    """

    @cached_property
    def placement(self) -> Placement:
        return Placement(self)

    @cached_property
    def recovery(self) -> Recovery:
        return Recovery(self)

    @cached_property
    def finishing(self) -> Finishing:
        return Finishing(self, self.recovery, Reading(self, self.recovery))

    # -- the loop ---------------------------------------------------------------------------
    def run(self, items: Collection[Item]) -> Outcome:
        self.pending.feed(items)  # drawn as they are sent
        next_poll = 0.0
        while self.waiting() or self.flight.in_flight:
            if time.monotonic() >= next_poll:
                self._watch_workers()
                if self.task_timeout is not None and self.flight.in_flight:
                    self._stop_stuck_tasks()
                tail = self.replicate_tail and not self.waiting() and self.flight.in_flight
                if tail:
                    self._replicate_tail()
                next_poll = time.monotonic() + (
                    min(self.poll, TAIL_POLL_SECONDS) if tail else self.poll
                )
            self.placement.submit_more()
            done = self.flight.next_done(next_poll)
            if done is not None and done[0] in self.flight.in_flight:
                self.finishing.finish(*done)
        return self.outcome

    # -- workers ----------------------------------------------------------------------------
    def _watch_workers(self) -> None:
        """Follow workers joining and leaving; wait while there are none."""
        threads = self.nthreads()
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
        self.finishing.finish_failed()
        self.recovery.check_placed()

    def _wait_for_workers(self) -> dict[str, int]:
        address = getattr(self.client.scheduler, "address", "?")
        limit = "no limit" if math.isinf(self.wait_workers) else f"{self.wait_workers:g} s"
        what = "to join" if self.threads is None else "after all workers left"
        self.say(f"waiting for Dask workers {what} at {address} (wait limit: {limit})")
        deadline = time.monotonic() + self.wait_workers
        while True:
            threads = self.nthreads()
            if threads:
                return threads
            if time.monotonic() >= deadline:
                saved = self.saved()
                raise ParameterError(
                    f"no Dask worker at {address} for {self.wait_workers:g} s ({{wait_workers}}); "
                    f"the {saved} results finished in this run are saved: start workers "
                    "(see cluster/README.md) and run the same command again",
                    "wait_workers",
                )
            time.sleep(0.2)

    # -- timeouts ---------------------------------------------------------------------------
    def _stop_stuck_tasks(self) -> None:
        """Fail each task running past the timeout, resend its batchmates, end its worker."""
        with self.scheduler():
            reports = self.calls.run(running_tasks, workers=self.live())
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
                f"ending {len(stop)} worker process(es) stuck past the task timeout of "
                f"{self.task_timeout:g} s ({self.outcome.requeued - requeued} tasks of their "
                "batches sent again); their nannies start fresh ones"
            )
            with self.scheduler():
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
        self.keep([self.record(stuck, result)])

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
        with self.scheduler():
            processing = self.client.processing()
        idle = sorted({w for w, keys in processing.items() if not keys} & set(self.usable()) - kept)
        if not idle:
            return
        with self.scheduler():
            reports = self.calls.run(running_tasks, workers=self.live())
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
                with self.scheduler():
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
            with self.scheduler():
                where = self.client.who_has(finished)
            for key, workers in where.items():
                if workers and set(workers) <= silent:
                    held_by[str(key)] = workers[0]
        return held_by
