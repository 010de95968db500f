"""The tail of a dispatch: idle slots take work from the longest batches, or copy stragglers.

`tail` decides, purely, which batches to ask about (`tail_questions`) and what the idle
slots take (`tail_decisions`); `Tailing` applies both. Which slots are idle and which batch
each worker holds come from the driver's own bookkeeping (`flight`), so nothing here asks the
scheduler, and only the workers holding the batches in question are asked what they run:
the cost of a tail step follows the work it moves, not the number of workers.
"""

from __future__ import annotations

import math
import time

from campaign.execute.batching import Item
from campaign.execute.shell import Shell
from campaign.execute.tail import (
    STRAGGLER_FACTOR,
    Copy,
    Rescue,
    Standing,
    Steal,
    TailSnapshot,
    tail_decisions,
    tail_questions,
)
from campaign.execute.worker import running_tasks, skip_tasks

RECHECK_SECONDS = 1.0  # before any task finished: how long until a batch is asked about again


class Tailing:
    """Gives idle slots the unstarted tasks of the longest batches, or copies of stragglers."""

    def __init__(self, shell: Shell):
        self.shell = shell
        self.not_before: dict[str, float] = {}  # batch key -> when to ask about it again

    def idle_slots(self) -> list[str]:
        """Each free slot of the workers to give work to, as its worker's name (a worker with
        three free slots is named three times)."""
        shell = self.shell
        flight = shell.flight
        kept = shell.not_to_use()
        idle = []
        for worker in flight.slots:
            if worker not in kept:
                idle.extend([worker] * flight.free_slots(worker))
        return idle

    def standings(self) -> list[Standing]:
        """Where each batch in flight stands, as far as the driver knows."""
        flight = self.shell.flight
        standings = []
        for future, batch in flight.in_flight.items():
            key = future.key
            worker = flight.target.get(key)
            if worker is None:
                continue
            since, index = flight.progress.get(key, (None, 0))
            size = flight.keeps.get(key, len(batch))  # less the tasks stolen from it
            standings.append(Standing(key, worker, size, since, index))
        return standings

    def step(self) -> None:
        """One look at the tail: ask about the batches worth it, then apply the decisions.

        A share of a batch's unstarted tasks moves to each idle slot that takes from it (the
        slots and the batch's worker share them equally), and the batch's worker is told to
        skip them (work stealing). When no batch has unstarted tasks, a task running far
        longer than the mean is copied to the idle slot (a straggling worker); whichever copy
        finishes first wins. A worker that does not answer within `calls.ANSWER_SECONDS`
        (stopped, cut off) may never finish its batches: every unfinished task of them is
        copied first.
        """
        shell = self.shell
        flight = shell.flight
        idle = self.idle_slots()
        if not idle:
            return
        now = time.monotonic()
        mean = shell.sizer.seconds / shell.sizer.count if shell.sizer.count else math.inf
        asked = tail_questions(self.standings(), len(idle), mean, now, self.not_before)
        reports = {}
        if asked:
            with shell.scheduler():
                holders = [(standing.worker, standing.key) for standing in asked]
                reports = shell.calls.about(running_tasks, holders)
        now = time.monotonic()
        running: dict[str, tuple[str, int, float]] = {}
        for worker, batches in reports.items():
            if isinstance(batches, dict):
                flight.reported(worker, batches)
                for key, (index, elapsed) in batches.items():
                    running[key] = (worker, index, elapsed)
        for standing in asked:
            if standing.worker in reports and standing.key not in running:
                # neither running nor waiting there: finished, its result on the way
                flight.progress[standing.key] = (now, standing.size - 1)
        self.remember(asked, running, mean, now)
        silent = shell.calls.silent
        idle = [worker for worker in idle if worker not in silent]
        held_by = {key: w for key, w in flight.target.items() if w in silent}
        batches = {future.key: batch for future, batch in flight.in_flight.items()}
        snapshot = TailSnapshot(batches, running, idle, mean, frozenset(held_by))
        self.apply(tail_decisions(snapshot), batches, held_by)

    def remember(
        self,
        asked: list[Standing],
        running: dict[str, tuple[str, int, float]],
        mean: float,
        now: float,
    ) -> None:
        """When to ask again about each batch asked about: once its running task could be a
        straggler (`STRAGGLER_FACTOR` times the mean)."""
        limit = STRAGGLER_FACTOR * mean if math.isfinite(mean) else RECHECK_SECONDS
        for standing in asked:
            elapsed = running.get(standing.key, ("", 0, 0.0))[2]
            self.not_before[standing.key] = now + (limit - elapsed if elapsed < limit else limit)
        flight = self.shell.flight
        if len(self.not_before) > 2 * len(flight.target):
            self.not_before = {k: t for k, t in self.not_before.items() if k in flight.target}

    def apply(
        self,
        decisions: list[Steal | Copy | Rescue],
        batches: dict[str, list[Item]],
        held_by: dict[str, str],
    ) -> None:
        shell = self.shell
        flight = shell.flight
        skips = []
        for decision in decisions:
            if isinstance(decision, Rescue):
                shell.say(
                    f"worker {held_by[decision.batch]} does not answer within "
                    f"{shell.calls.timeout:g} s: {len(decision.items)} tasks it holds are "
                    f"copied to {decision.to}"
                )
                future = flight.send(list(decision.items), decision.to)
                flight.replicas.add(future.key)
                shell.outcome.replicated += len(decision.items)
            elif isinstance(decision, Steal):
                taken = list(decision.items)
                batch = batches[decision.batch]
                flight.keeps[decision.batch] = min(
                    flight.keeps.get(decision.batch, len(batch)), batch.index(taken[0])
                )
                skips.append(
                    (decision.worker, skip_tasks, (decision.batch, [i.key for i in taken]))
                )
                flight.send(taken, decision.to)
                shell.outcome.stolen += len(taken)
            elif isinstance(decision, Copy):
                future = flight.send([decision.item], decision.to)
                flight.replicas.add(future.key)
                shell.outcome.replicated += 1
        if skips:
            with shell.scheduler():
                shell.calls.run_each(skips)
