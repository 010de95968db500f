"""Task timeouts applied: tasks past the timeout fail, their batchmates run again, their
worker processes end.

`timeouts` decides from what workers report (`timeout_decisions`); `Stopping` asks only the
workers that may hold a task past the timeout: a batch's task cannot have run longer than the
timeout before the batch has been in flight that long, nor, once its worker said which task
it runs and for how long, before that task reaches the timeout (`due`). So a worker is asked
about a batch at most about once per timeout, and a batch that lands within the timeout
costs no question at all, however many workers there are.
"""

from __future__ import annotations

import time
from typing import Any

from campaign.execute.calls import merged
from campaign.execute.shell import Shell
from campaign.execute.timeouts import TimeoutSnapshot, timed_out_result, timeout_decisions
from campaign.execute.worker import end_worker_process, printed_by_stuck_tasks, running_tasks
from campaign.spec.command_model import CommandSpec


class Stopping:
    """Fails tasks past the timeout and ends the worker processes stuck in them."""

    def __init__(self, shell: Shell):
        self.shell = shell
        self.checks: dict[str, float] = {}  # batch key -> when it may first hold a stuck task

    def due(self, timeout: float, now: float) -> set[str]:
        """The workers to ask: those holding a batch that may hold a task past the timeout,
        or a batch abandoned while it may still run."""
        flight = self.shell.flight
        workers = set(flight.abandoned.values())
        for key, worker in flight.target.items():
            check = self.checks.get(key)
            if check is None:
                check = self.checks[key] = flight.sent_at.get(key, now) + timeout
            if check <= now:
                workers.add(worker)
        return workers

    def step(self) -> None:
        """Fail each task running past the timeout, resend its batchmates, end its worker."""
        shell = self.shell
        flight = shell.flight
        timeout = shell.task_timeout or 0.0  # only called with a timeout
        workers = self.due(timeout, time.monotonic())
        if not workers:
            return
        with shell.scheduler():
            reports = shell.calls.run(running_tasks, workers=workers)
        self.learn(reports, timeout)
        by_key = {future.key: future for future in flight.in_flight if not future.done()}
        snapshot = TimeoutSnapshot(reports, frozenset(by_key), frozenset(flight.abandoned), timeout)
        decided = timeout_decisions(snapshot)
        requeued = shell.outcome.requeued
        printed = self.printed([stuck.key for stuck in decided.stuck])
        for stuck in decided.stuck:
            self.time_out(by_key[stuck.key], stuck.index, stuck.elapsed, printed.get(stuck.key))
        answered = {w for w, batches in reports.items() if isinstance(batches, dict)}
        flight.abandoned = {
            key: worker
            for key, worker in flight.abandoned.items()
            if key in decided.running or worker not in answered
        }
        stop = decided.stop
        if stop:
            shell.ended.update(stop)  # the tasks they hold did not end them
            shell.outcome.stopped_workers += len(stop)
            shell.say(
                f"ending {len(stop)} worker process(es) stuck past the task timeout of "
                f"{shell.task_timeout:g} s ({shell.outcome.requeued - requeued} tasks of their "
                "batches sent again); their nannies start fresh ones"
            )
            with shell.scheduler():
                shell.calls.run(end_worker_process, workers=stop)

    def printed(self, batches: list[str]) -> dict[str, tuple[str, str, dict[str, bytes]]]:
        """For a program, what the stuck tasks of ``batches`` printed so far, asked of their
        workers before their processes end (a task's folder goes with its worker's end)."""
        shell = self.shell
        if not batches or not isinstance(shell.model_name, CommandSpec):
            return {}
        target = shell.flight.target
        holders = [(target[key], key) for key in batches if key in target]
        with shell.scheduler():
            return merged(shell.calls.about(printed_by_stuck_tasks, holders))

    def learn(self, reports: dict[str, Any], timeout: float) -> None:
        """From what the workers said, when each of their batches may next hold a task past
        the timeout: when its running task reaches it, or a timeout from now for a batch that
        does not run (waiting: its first task has not started)."""
        flight = self.shell.flight
        now = time.monotonic()
        for worker, batches in reports.items():
            if isinstance(batches, dict):
                flight.reported(worker, batches)
        answered = {w: b for w, b in reports.items() if isinstance(b, dict)}
        for key, worker in flight.target.items():
            if worker in answered:
                running = answered[worker].get(key)
                self.checks[key] = now + timeout - (running[1] if running else 0.0)
        if len(self.checks) > 2 * len(flight.target):
            self.checks = {k: t for k, t in self.checks.items() if k in flight.target}

    def time_out(
        self, future: Any, index: int, elapsed: float, printed: tuple | None = None
    ) -> None:
        """Fail task ``index`` of a batch past the timeout (with what it ``printed``: its
        key, its stderr's last lines, its outputs) and send its batchmates again."""
        shell = self.shell
        flight = shell.flight
        batch = flight.in_flight.pop(future)
        flight.abandon(future)  # until its worker process has ended
        for item in batch:
            item.copies -= 1
        stuck = batch[index]
        if stuck.done:
            return
        stuck.attempts += 1
        stuck.done = True
        said = printed[1:] if printed is not None and printed[0] == stuck.key else None
        result = timed_out_result(stuck.key, elapsed, shell.task_timeout or 0.0, said)
        others = [i for i in batch[:index] + batch[index + 1 :] if not i.done and i.copies == 0]
        shell.pending.extendleft(reversed(others))
        shell.outcome.requeued += len(others)
        shell.outcome.timed_out.append(stuck.key)
        shell.keep([shell.record(stuck, result)])
        if stuck.copies > 0:  # a copy of it runs elsewhere, stuck too: cancel it
            flight.drop_finished_copies()
