"""What a stopped driver keeps: the tasks its batches in flight finished before the stop.

A batch's results reach the driver when the whole batch ends. A driver stopped by Ctrl-C or
SIGTERM does not wait for that (a task of a batch may hang, with no timeout to end it), so
the tasks that batch finished before the stop would be lost and computed again by the next
run. On a stop the driver reads the batches that already landed, then asks each worker once
(a bounded wait: `campaign.execute.calls`) for the tasks its running batches finished so far
(`finished_tasks`), and stores those that would count had the batch landed: the same code and
engine as here, a final result of a task no other copy stored. Nothing of this runs while the
run goes on: batches cost the driver what they cost before.
"""

from __future__ import annotations

from typing import Any

from campaign.execute.calls import merged
from campaign.execute.finishing import Finishing
from campaign.execute.shell import Shell
from campaign.execute.worker import finished_tasks
from campaign.plan.sources import identity_differences


class Salvage:
    """Stores, on a stop, what the batches in flight finished."""

    def __init__(self, shell: Shell, finishing: Finishing):
        self.shell = shell
        self.finishing = finishing

    def collect(self) -> None:
        """Finish the batches that landed, then keep what the running ones finished; a
        scheduler or worker that does not answer leaves the rest to the next run."""
        try:
            self._landed()
            self._running()
        except Exception:  # noqa: BLE001 - a stop goes on: what is not kept is run again
            pass

    def _landed(self) -> None:
        flight = self.shell.flight
        while flight.ready():
            future, value = next(flight.completed)
            if future in flight.in_flight:
                self.finishing.finish(future, value)

    def _running(self) -> None:
        shell = self.shell
        flight = shell.flight
        target = flight.target
        holders = [(target[f.key], f.key) for f in flight.in_flight if f.key in target]
        with shell.scheduler():
            finished = merged(shell.calls.about(finished_tasks, holders))
        for future, batch in list(flight.in_flight.items()):
            value = finished.get(future.key)
            if value is not None and self._counts(value):
                self._keep(batch, value[0], value[1])

    def _counts(self, value: tuple) -> bool:
        """Whether results would count had their batch landed: the model's code and the
        engine of this run (`campaign.execute.reading`)."""
        shell = self.shell
        worker, _, code, engine = value
        if worker in shell.refused or identity_differences(shell.engine, engine):
            return False
        return shell.code is None or code is None or code == shell.code

    def _keep(self, batch: list[Any], worker: str, results: list[dict[str, Any]]) -> None:
        """Hold the final records of the tasks finished: not a task skipped, stored from
        another copy, or failed in a way worth another try (the next run tries it)."""
        shell = self.shell
        final = []
        for item, result in zip(batch, results):
            if item.done or result["status"] == "skipped" or result.get("transient"):
                continue
            item.attempts += 1
            item.done = True
            final.append(shell.record(item, result, worker))
        shell.keep(final)
