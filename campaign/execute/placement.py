"""Placement: which batches go out, and to which worker.

Every batch goes to a worker the driver chooses, the least loaded one (batches in flight per
slot), and may run only there: so the driver knows what each worker holds without asking
the scheduler, whatever the number of workers (see `flight`). With locality, a batch holds
tasks of one item ``group`` (the same heavy inputs), and each worker keeps to the groups it
already has, whose inputs its cache holds. After a worker died, a worker can be kept free
for a task that died with it to run alone there.

The choices (`least_loaded`, `group_for`, `to_keep_free`) are pure functions over what the
driver knows; `Placement` applies them (the least loaded worker from `Flight.least_loaded`,
which keeps the same order in log(workers) time).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from campaign.execute.batching import BATCHES_PER_WORKER
from campaign.execute.shell import Shell


def least_loaded(threads: Mapping[str, int], sent_to: Mapping[str, int]) -> str:
    """The worker with the fewest batches in flight per thread (ties: the first by name)."""
    return min(threads, key=lambda w: (sent_to.get(w, 0) / threads[w], w))


def group_for(
    owned: Sequence[Any],
    claimed: Collection[Any],
    groups: Sequence[Any],
    size_of: Callable[[Any], int],
) -> tuple[Any, bool]:
    """The group a worker takes its next batch from, and whether it is new to the worker.

    Its own groups first (``owned``, in the order it got them) while they have pending tasks,
    then a group no worker has (``claimed``), and only then the pending group with the most
    tasks, so each input is loaded by as few workers as keep all of them busy.
    """
    group = next((g for g in owned if size_of(g)), None)
    if group is not None:
        return group, False
    group = next((g for g in groups if g not in claimed), None)
    if group is None:
        group = max(groups, key=size_of)
    return group, True


def to_keep_free(
    workers: Collection[str],
    draining: Collection[str],
    alone: Collection[str],
    sent_to: Mapping[str, int],
    wanted: int,
) -> list[str]:
    """The ``wanted`` workers to keep free for tasks to run alone: those with the fewest
    batches in flight (ties: by name), among those not kept free or running one already."""
    free = [w for w in workers if w not in draining and w not in alone]
    free.sort(key=lambda w: (sent_to.get(w, 0), w))
    return free[:wanted]


class Placement:
    """Sends batches: enough to keep every slot busy, each to the least loaded worker."""

    def __init__(self, shell: Shell):
        self.shell = shell
        self.claimed: set[Any] = set()  # groups some worker has been given

    def submit_more(self) -> None:
        shell = self.shell
        if shell.lone:
            self.submit_alone()
        self.submit_by_group()

    def submit_by_group(self) -> None:
        """Give each worker batches of the groups it already has (their inputs are loaded),
        the least loaded worker first; with `locality` off, batches of the first group."""
        shell = self.shell
        flight = shell.flight
        if not (shell.pending or shell.halves):
            return
        kept = shell.not_to_use()  # kept free for, or running, a task alone; or not usable
        limit = shell.sizer.in_flight()
        while shell.pending or shell.halves:
            if len(flight.in_flight) >= limit:
                return
            worker = flight.least_loaded(kept)
            if worker is None:
                return
            if flight.sent_to.get(worker, 0) >= flight.slots[worker] * BATCHES_PER_WORKER:
                return
            if shell.halves:  # batches that died with a worker go first, in halves
                flight.send(shell.halves.popleft(), worker)
                continue
            group = self.group(worker) if shell.locality else None
            batch = shell.pending.take(shell.sizer.size(len(shell.pending)), group)
            flight.send(batch, worker)

    def group(self, worker: str) -> Any:
        """The group ``worker`` takes its next batch from (see `group_for`)."""
        shell = self.shell
        owned = shell.owned.setdefault(worker, [])
        group, new = group_for(owned, self.claimed, shell.pending.groups(), shell.pending.size_of)
        if new:
            owned.append(group)
            self.claimed.add(group)
        return group

    def submit_alone(self) -> None:
        """Run each task that died with a worker alone on a worker: one kept free for it (no
        new batch is sent there, so it drains), then given only that task."""
        shell = self.shell
        flight = shell.flight
        workers = shell.usable()
        shell.draining &= set(workers)
        wanted = len(shell.lone) - len(shell.draining)
        if wanted > 0:
            free = to_keep_free(workers, shell.draining, flight.alone, flight.sent_to, wanted)
            shell.draining.update(free)
        for worker in sorted(shell.draining):
            if not shell.lone:
                break
            if flight.sent_to.get(worker, 0) == 0:
                future = flight.send([shell.lone.popleft()], worker, strict=True)
                flight.alone[worker] = future.key
                shell.draining.discard(worker)
        if not shell.lone:
            shell.draining.clear()
