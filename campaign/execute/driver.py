"""Run tasks on Dask as a bag of tasks: batching, retries, failure capture and progress.

Tasks are grouped into batches so that per-task scheduling overhead stays small: the first
batches hold one task each, and once task durations are measured a batch is sized to run for
about `TARGET_BATCH_SECONDS` (longer on many slots), never so large that the tail of the
campaign leaves workers idle.
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

from campaign.errors import ParameterError, raise_requested_stop
from campaign.execute.batching import Item, Outcome
from campaign.execute.execution_options import ExecutionOptions
from campaign.execute.finishing import Finishing
from campaign.execute.inputs import ship_inputs, withdraw_inputs
from campaign.execute.placement import Placement
from campaign.execute.reading import Reading
from campaign.execute.recovery import Recovery
from campaign.execute.salvage import Salvage
from campaign.execute.shell import Shell, lost_scheduler, scheduler_calls, worker_slots
from campaign.execute.stopping import Stopping
from campaign.execute.tailing import Tailing
from campaign.execute.worker import end_run
from campaign.render.progress import Progress
from campaign.spec.command_model import CommandSpec

TAIL_POLL_SECONDS = 0.2  # how often, once nothing is left to send (tail replication)
LANDED_AT_ONCE = 256  # batches finished, at most, before their results are stored

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
        driver = _Driver(client, model_name, store, options, progress, say, code)
        outcome = driver.run(items)
        driver.end_leftovers()  # a finished run only: a stopped one leaves at once
        return outcome
    finally:
        withdraw_inputs(client, shipped)


class _Driver(Shell):
    """One dispatch's loop: send, read what lands, look at the workers, apply decisions.

    Its parts (placement, finishing, recovery, the tail, timeouts) each hold this state and
    are made on first use.
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

    @cached_property
    def salvage(self) -> Salvage:
        return Salvage(self, self.finishing)

    @cached_property
    def tailing(self) -> Tailing:
        return Tailing(self)

    @cached_property
    def stopping(self) -> Stopping:
        return Stopping(self)

    # -- the loop ---------------------------------------------------------------------------
    def run(self, items: Collection[Item]) -> Outcome:
        self.pending.feed(items)  # drawn as they are sent
        next_poll = 0.0
        try:
            while self.waiting() or self.flight.in_flight:
                raise_requested_stop()  # a Ctrl-C whose exception was swallowed on its way
                if time.monotonic() >= next_poll:
                    self._watch_workers()
                    if self.task_timeout is not None and self.flight.in_flight:
                        self.stopping.step()
                    tail = self.replicate_tail and not self.waiting() and self.flight.in_flight
                    if tail:
                        self.tailing.step()
                    next_poll = time.monotonic() + (
                        min(self.poll, TAIL_POLL_SECONDS) if tail else self.poll
                    )
                self.placement.submit_more()
                if self.replicate_tail and not self.waiting():  # the tail began: look soon
                    next_poll = min(next_poll, time.monotonic() + TAIL_POLL_SECONDS)
                self._finish_landed(next_poll)
                self.flush()
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM: keep what the batches in flight finished
            self.salvage.collect()
            raise
        finally:
            self.flush()
        return self.outcome

    def end_leftovers(self) -> None:
        """End on every worker what the run's programs left running (a daemon: a child in a
        session of its own), as the end of the embedded cluster's workers does: a worker
        kept after the run (a cluster started by hand) would keep it running."""
        try:
            self.calls.run(end_run, self.flight.run, workers=self.nthreads())
        except Exception:  # noqa: BLE001 - the scheduler is gone: so are its workers' runs
            pass

    def _finish_landed(self, until: float) -> None:
        """Finish the next batch to land (waiting for one until ``until``) and every other
        that has landed meanwhile: their results are stored together (`flush`)."""
        done = self.flight.next_done(until)
        finished = 0
        while done is not None:
            if done[0] in self.flight.in_flight:
                self.finishing.finish(*done)
            finished += 1
            if finished >= LANDED_AT_ONCE or not self.flight.ready():
                return
            done = next(self.flight.completed)

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
        asked = self.options.resources
        if asked and (self.threads is None or set(threads) - set(self.held)):
            with self.scheduler():
                workers = self.client.scheduler_info(n_workers=-1).get("workers", {})
            self.held = {w: info.get("resources") or {} for w, info in workers.items()}
        self.threads = threads
        slots = worker_slots(threads, self.held, asked)
        self.flight.set_slots(slots)
        self.sizer.slots = max(1, sum(slots.values()))
        self.finishing.finish_failed()
        self.recovery.check_placed()

    def _wait_for_workers(self) -> dict[str, int]:
        address = getattr(self.client.scheduler, "address", "?")
        limit = "no limit" if math.isinf(self.wait_workers) else f"{self.wait_workers:g} s"
        what = "to join" if self.threads is None else "after all workers left"
        self.say(f"waiting for Dask workers {what} at {address} (wait limit: {limit})")
        deadline = time.monotonic() + self.wait_workers
        while True:
            raise_requested_stop()
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
