"""Finishing a batch: each task's result stored, tried again, or left to another copy.

A task may be in flight more than once (work stealing, a straggler's copy, a batch whose
other copy was lost): the first result wins, a failure waits while another copy may still
succeed, and a transient failure (the batch could not run at all) is tried again while the
task has tries left. `result_fate` decides this for one task, purely; `Finishing` applies it
and stores the batch's final records before they count.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from campaign.execute.batching import Item
from campaign.execute.reading import Reading
from campaign.execute.recovery import Recovery
from campaign.execute.shell import Shell
from campaign.execute.worker import skip_tasks


class Fate(Enum):
    """What becomes of one task's result in a finished batch."""

    AGAIN = "again"  # skipped, and its other copy was lost: queue it again, first
    IGNORE = "ignore"  # another copy won, or may still succeed; or skipped for a copy in flight
    RETRY = "retry"  # a transient failure with tries left: one try spent, queued again
    FINAL = "final"  # its result: one try spent, stored


def result_fate(item: Item, status: str, transient: bool, retries: int) -> Fate:
    """The fate of ``item``'s result of ``status``, its copies in flight already less this one
    (``item.copies``) and its tries so far not counting this one (``item.attempts``)."""
    if status == "skipped":
        return Fate.AGAIN if not item.done and item.copies == 0 else Fate.IGNORE
    if item.done or (status != "ok" and item.copies > 0):
        return Fate.IGNORE
    if status != "ok" and transient and item.attempts + 1 <= retries:
        return Fate.RETRY
    return Fate.FINAL


class Finishing:
    """Stores a finished batch's results (or hands a dead worker's batch to `Recovery`)."""

    def __init__(self, shell: Shell, recovery: Recovery, reading: Reading):
        self.shell = shell
        self.recovery = recovery
        self.reading = reading

    def finish(self, future: Any, value: Any) -> None:
        """Store a finished batch's results (its result or error as ``as_completed`` read it)."""
        from distributed.scheduler import KilledWorker

        shell = self.shell
        flight = shell.flight
        error = value[1] if future.status == "error" and isinstance(value, tuple) else None
        if isinstance(error, KilledWorker):
            self.recovery.died_with(future, getattr(error.last_worker, "address", ""))
            return
        if future.status == "finished" and self.reading.foreign(value):
            self.recovery.requeue(future)  # its results are not stored: the tasks run elsewhere
            return
        worker, results = self.reading.collect(future, value, flight.in_flight[future])
        batch = flight.in_flight.pop(future)
        flight.landed(future)
        final: list[dict[str, Any]] = []
        for item, result in zip(batch, results):
            item.copies -= 1
            transient = result.pop("transient", False)  # a failure worth another try
            fate = result_fate(item, result["status"], transient, shell.retries)
            if fate is Fate.AGAIN:
                shell.pending.appendleft(item)
                continue
            if fate is Fate.IGNORE:
                continue
            item.attempts += 1
            if fate is Fate.RETRY:
                shell.pending.append(item)
                continue
            item.done = True
            if future.key in flight.replicas:
                shell.outcome.replicas_won += 1
            final.append(shell.record(item, result, worker))
        shell.sizer.observe(r["elapsed"] for r in results if r["status"] == "ok")
        shell.keep(final)
        future.release()
        won = [item for item in batch if item.done and item.copies > 0]
        if won:  # other copies of these tasks are in flight (stolen, copied): stop them
            self.stop_lost_copies(won)
            flight.drop_finished_copies()

    def stop_lost_copies(self, won: list[Item]) -> None:
        """Tell the workers running other copies of tasks that just finished to skip them: a
        program that is still running there is ended with its process group (a Python model
        runs on, its result ignored)."""
        shell, keys = self.shell, {item.key for item in won}
        flight = shell.flight
        copies = {
            future.key: [item.key for item in batch if item.key in keys]
            for future, batch in flight.in_flight.items()
        }
        calls = [
            (flight.target[batch], skip_tasks, (batch, tasks))
            for batch, tasks in copies.items()
            if tasks and batch in flight.target
        ]
        if calls:
            with shell.scheduler():
                shell.calls.run_each(calls)

    def finish_failed(self) -> None:
        """Finish the batches in flight that failed: as_completed gives up on a batch whose
        results were lost with its worker and that then died with the next one, and may
        never hand it over."""
        flight = self.shell.flight
        for future in [f for f in flight.in_flight if f.status == "error"]:
            if future not in flight.in_flight:  # cancelled as a copy of finished tasks
                continue
            with self.shell.scheduler():
                error = future.exception()
            self.finish(future, (type(error), error, None))
