"""Task timeouts: which running tasks are past the timeout, and which workers to end.

A pure function over a snapshot (what the workers report running, the batches in flight,
those abandoned while their thread may still run), so that the choices can be checked
without a cluster; the driver applies the decisions it gets back (a thread cannot be
interrupted: a worker running a stuck task has its process ended).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TimeoutSnapshot:
    """`reports`: worker -> its answer to `running_tasks` (batch key -> (index of the task it
    runs, seconds that task ran); anything else when it did not answer). `in_flight`: keys of
    the batches in flight not yet done. `abandoned`: keys of batches cancelled while their
    thread may still run. `timeout`: seconds a task may run."""

    reports: Mapping[str, Any]
    in_flight: frozenset[str]
    abandoned: frozenset[str]
    timeout: float


@dataclass(frozen=True)
class Stuck:
    """Task `index` of batch `key` ran `elapsed` seconds, past the timeout: it fails."""

    key: str
    index: int
    elapsed: float


@dataclass(frozen=True)
class Timeouts:
    """`stuck`: the tasks that fail, in the order reported; `stop`: the workers to end;
    `running`: every batch key a worker reports running (abandoned ones not among them have
    ended)."""

    stuck: tuple[Stuck, ...] = ()
    stop: frozenset[str] = field(default_factory=frozenset)
    running: frozenset[str] = field(default_factory=frozenset)


def timeout_decisions(snapshot: TimeoutSnapshot) -> Timeouts:
    """Each task running past the timeout in a batch in flight fails, and its worker is ended;
    so is a worker still running an abandoned batch past the timeout (stuck in a model)."""
    stuck: list[Stuck] = []
    stop: set[str] = set()
    running: set[str] = set()
    abandoned = set(snapshot.abandoned)  # a batch that fails here is abandoned too
    for worker, batches in snapshot.reports.items():
        if not isinstance(batches, dict):
            continue
        running.update(batches)
        for key, (index, elapsed) in batches.items():
            if elapsed <= snapshot.timeout:
                continue
            if key in abandoned:
                stop.add(worker)
                continue
            if key not in snapshot.in_flight:
                continue
            abandoned.add(key)
            stuck.append(Stuck(key, index, elapsed))
            stop.add(worker)
    return Timeouts(tuple(stuck), frozenset(stop), frozenset(running))


def timed_out_result(
    key: str,
    elapsed: float,
    timeout: float,
    printed: tuple[str, Mapping[str, bytes]] | None = None,
) -> dict[str, Any]:
    """The failure of a task stopped after ``elapsed`` seconds, past ``timeout``; a program's
    with what it ``printed`` (its stderr's last lines, the outputs a failure keeps), as the
    failure of a program that exits with an error code says and keeps."""
    error = (
        f"TimeoutError: timed out: the task ran longer than the task timeout of "
        f"{timeout:g} s (stopped after {elapsed:.1f} s)"
    )
    result = {"key": key, "status": "failed", "error": error, "traceback": "", "elapsed": elapsed}
    if printed is not None:
        tail, outputs = printed
        result["error"] = f"{error}; {tail}"
        if outputs:
            result["outputs"] = dict(outputs)
    return result
