"""Calls to workers outside the task system (Dask's ``Client.run``), each with a bound.

``Client.run`` waits for every worker it asks, with no limit: one worker that is stopped
(SIGSTOP), cut off by the network or too busy to answer would hold the whole run until the
scheduler drops it (minutes). Here each worker is asked on its own and waited for at most
`ANSWER_SECONDS`; one that has not answered by then is silent. Its question stays open (so
questions to it do not pile up on the scheduler) and it is not asked again until it answers;
the driver treats its batches as stragglers and copies them to idle workers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

ANSWER_SECONDS = 5.0  # how long a worker has to answer a question of the driver


class WorkerCalls:
    """Bounded calls to workers of one client; remembers which workers have not answered."""

    def __init__(self, client: Any, timeout: float = ANSWER_SECONDS):
        self.client = client
        self.timeout = timeout
        self.open: dict[str, asyncio.Future] = {}  # worker -> its latest question

    @property
    def silent(self) -> set[str]:
        """Workers that have not answered their latest question (within the bound or since)."""
        return {worker for worker, call in self.open.items() if not call.done()}

    def run(self, function: Callable[..., Any], *args: Any, workers: Iterable[str]) -> dict:
        """Each worker's result of ``function(*args)``, for the workers that answered within
        the bound; a worker where the function failed is left out, and a silent one is not
        asked. A call that fails because the scheduler is gone raises its error."""
        asked = [(worker, function, args) for worker in sorted(set(workers))]
        return self.client.sync(self._run, asked)

    def run_each(self, calls: Iterable[tuple[str, Callable[..., Any], tuple]]) -> dict:
        """``(worker, function, args)`` calls, all at once, each to its own worker, waited for
        as `run` waits; each worker's result (of its last call, when it has several)."""
        return self.client.sync(self._run, list(calls))

    def about(self, function: Callable[..., Any], holders: Iterable[tuple[str, str]]) -> dict:
        """``function(keys)`` on each worker of ``holders`` ((worker, batch key) pairs), with
        the keys of the batches it holds, as `run_each` calls; each worker's result."""
        asked: dict[str, list[str]] = {}
        for worker, key in holders:
            asked.setdefault(worker, []).append(key)
        if not asked:
            return {}
        return self.run_each((worker, function, (keys,)) for worker, keys in asked.items())

    async def _run(self, calls: list[tuple[str, Callable[..., Any], tuple]]) -> dict:
        asked: list[tuple[str, asyncio.Future]] = []
        silent = self.silent
        for worker, function, args in calls:
            if worker in silent:
                continue
            call = asyncio.ensure_future(
                self.client.run(
                    function, *args, workers=[worker], on_error="ignore", asynchronous=True
                )
            )
            call.add_done_callback(_retrieve)
            asked.append((worker, call))
            self.open[worker] = call
        if asked:
            await asyncio.wait([call for _, call in asked], timeout=self.timeout)
        answers: dict[str, Any] = {}
        for _, call in asked:
            if not call.done() or call.cancelled():
                continue
            error = call.exception()
            if error is not None:
                raise error
            answers.update(call.result())
        return answers


def _retrieve(call: asyncio.Future) -> None:
    """Read a finished question's error, so that one nobody waits for any more (its worker
    answered too late, the client closed) is not logged as never retrieved."""
    if not call.cancelled():
        call.exception()


def merged(answers: dict) -> dict:
    """The workers' answers that are mappings (batch key -> what its worker said), as one."""
    found: dict = {}
    for answer in answers.values():
        if isinstance(answer, dict):
            found.update(answer)
    return found
