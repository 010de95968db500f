"""Recovery from worker deaths: the driver applying `deaths`' decisions.

A worker process that dies takes the batches it held with it, and nothing says which of
their tasks ended it. `deaths` decides, from the batch and the scheduler's record of the
removal, what becomes of each task (sent again, split in halves, run alone, charged a try);
`Recovery` reads that record, applies the decisions and takes back the batches that wait for
a worker that is gone.
"""

from __future__ import annotations

from typing import Any

from campaign.execute.batching import Item
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
from campaign.execute.shell import Shell


class Recovery:
    """Sends again, splits or charges the tasks of batches whose worker is gone."""

    def __init__(self, shell: Shell):
        self.shell = shell

    def died_with(self, future: Any, worker: str) -> None:
        """A batch's worker died (or left) while the batch was there.

        No task of it counts as tried, unless the scheduler's record of the death names this
        batch, of one task, as the only task the worker held: that task ran alone and ended
        its process (or something else did; its tries allow for that). The others run again:
        a batch in two halves, a single task alone on a worker. A worker this driver ended,
        or one that left on purpose, says nothing about its tasks: they are simply sent again.
        """
        shell = self.shell
        flight = shell.flight
        isolated = flight.alone.get(flight.target.get(future.key, "")) == future.key
        batch = flight.in_flight.pop(future)
        flight.landed(future)
        future.cancel()  # a no-op once it failed; a batch tied to a gone worker would wait
        death = self.death(worker)
        for item in batch:
            item.copies -= 1
        rest = [item for item in batch if not item.done and item.copies == 0]
        decision = died_with(future.key, batch, rest, death, worker in shell.ended, isolated)
        if decision is None:
            return
        if isinstance(decision, SendAgain):
            self.send_again(list(decision.items))
            return
        if isinstance(decision, Charge):
            self.charge(decision.item)
            return
        for item in rest:
            item.suspect = True
        shell.outcome.resent += len(rest)
        self.queue_parts(decision.parts, front=False)

    def queue_parts(self, parts: tuple[tuple[Item, ...], ...], front: bool) -> None:
        """Queue tasks that died with a worker: one alone, more as a batch of their own (at the
        ``front`` of the queues: they were waiting already)."""
        shell = self.shell
        for part in parts:
            if len(part) == 1 and front:
                shell.lone.appendleft(part[0])
            elif len(part) == 1:
                shell.lone.append(part[0])
            elif front:
                shell.halves.appendleft(list(part))
            else:
                shell.halves.append(list(part))

    def charge(self, item: Item) -> None:
        """A task's worker died while it ran alone: one try; it fails once its tries are spent."""
        shell = self.shell
        item.attempts += 1
        item.deaths += 1
        if item.attempts <= shell.retries:
            shell.lone.append(item)
            return
        item.done = True
        result = charged_result(item.deaths)
        shell.keep([shell.record(item, result)])

    def death(self, worker: str) -> Death | None:
        """The scheduler's record of a worker's removal (read once per worker), or None.

        A worker that logged that it was closing was closed on purpose (by its nanny, its
        cluster, the scheduler), whatever the removal says: its tasks did not end it."""
        shell = self.shell
        if worker not in shell.deaths:
            with shell.scheduler():
                events = shell.client.get_events(worker) if worker else ()
            record = death_record(events)
            shell.deaths[worker] = record
            if worker not in shell.ended and not (record is not None and record.expected):
                shell.outcome.worker_deaths += 1
        return shell.deaths[worker]

    def check_placed(self) -> None:
        """Take back the batches waiting for a worker that is gone.

        Dask keeps a batch placed on a worker waiting for it while that worker is gone and no
        other one was up when it placed it (or ran it again after it was lost with its worker),
        and one that may run only there for good. So a batch whose worker is gone and that
        Dask runs nowhere else is taken back: one the worker held when it died died with it
        (`died_with`), another is sent again. One Dask runs on another worker is left there.
        """
        shell = self.shell
        flight = shell.flight
        workers = shell.live()
        stale = [
            future
            for future in flight.in_flight
            if flight.target.get(future.key, "") not in workers
            and future.key in flight.target
            and future.status in ("pending", "lost")
        ]
        if not stale:
            return
        where: dict[str, str] = {}
        if any(future.key not in flight.strict for future in stale):  # Dask may move those
            with shell.scheduler():
                processing = shell.client.processing()
            where = {key: worker for worker, keys in processing.items() for key in keys}
        for future in stale:
            if future not in flight.in_flight:
                continue
            worker = flight.target[future.key]
            strict = future.key in flight.strict
            moved = future.key in where and not strict
            death = None if moved else self.death(worker)
            fate = stale_batch(future.key, strict, where, death)
            if isinstance(fate, Moved):
                flight.moved(future, fate.to)  # now on another worker
            elif isinstance(fate, Requeue):
                self.requeue(future)
            else:
                self.died_with(future, worker)

    def requeue(self, future: Any) -> None:
        """Send a batch's tasks again, not counted as tried: it never ran, or its results were
        lost with its worker after it finished."""
        flight = self.shell.flight
        batch = flight.in_flight.pop(future)
        flight.landed(future)
        future.cancel()
        for item in batch:
            item.copies -= 1
        self.send_again([item for item in batch if not item.done and item.copies == 0])

    def send_again(self, rest: list[Item]) -> None:
        """Queue tasks again, not counted as tried; those that died with a worker keep to
        their halves or to running alone."""
        parts, others = resend_parts(rest)
        self.queue_parts(parts, front=True)
        self.shell.pending.extendleft(reversed(others))
        self.shell.outcome.requeued += len(rest)
