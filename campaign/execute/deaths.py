"""Worker deaths: what becomes of the tasks a worker held when it died or left.

Pure functions over what the driver knows of a death (the batch, the scheduler's record of
the removal, whether the driver ended the worker itself), so that the choices can be checked
without a cluster; the driver applies the decisions it gets back.

A worker process that dies takes the batches it held with it, and nothing says which of
their tasks ended it. None of them counts as tried: a batch is sent again in two halves, a
single task alone, on a worker kept free for it. Only a task whose worker dies while it runs
alone there is charged a try.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from campaign.execute.batching import Item


@dataclass(frozen=True)
class Death:
    """The scheduler's record of a worker's removal: the tasks it held, and whether it left on
    purpose (closed or retired) rather than died."""

    processing: frozenset[str]
    expected: bool


@dataclass(frozen=True)
class SendAgain:
    """Queue `items` again, not counted as tried (their worker's end says nothing of them)."""

    items: tuple[Item, ...]


@dataclass(frozen=True)
class Charge:
    """`item` ran alone when its worker died: it is charged a try."""

    item: Item


@dataclass(frozen=True)
class Split:
    """`parts` died with their worker, none of them charged: each part (two halves, or one
    task to run alone) is sent again on its own."""

    parts: tuple[tuple[Item, ...], ...]


def death_record(events: Sequence[tuple[Any, Any]]) -> Death | None:
    """The removal a worker's scheduler events record, or None (no record: an older scheduler).

    A worker that logged that it was closing was closed on purpose (by its nanny, its cluster,
    the scheduler), whatever the removal says: its tasks did not end it."""
    record = None
    closing = False
    for _, event in events:
        action = event.get("action") if isinstance(event, dict) else None
        closing = closing or action == "closing-worker"
        if action == "remove-worker":
            processing = frozenset(str(key) for key in event.get("processing-tasks", ()))
            record = Death(processing, closing or bool(event.get("expected")))
    return record


def died_with(
    key: str,
    batch: Sequence[Item],
    rest: Sequence[Item],
    death: Death | None,
    ended: bool,
    isolated: bool,
) -> SendAgain | Charge | Split | None:
    """What to do with the unfinished tasks ``rest`` of ``batch`` (key ``key``), whose worker
    died (or left) while the batch was there.

    Nothing when none is left. A worker the driver ended (``ended``), or one that left on
    purpose, says nothing about its tasks: they are sent again. A batch of one task that the
    scheduler's record names as the only task the worker held (or, without a record, that the
    driver ran alone there: ``isolated``) is charged a try. Otherwise the rest is split.
    """
    if not rest:
        return None
    if ended or (death is not None and death.expected):
        return SendAgain(tuple(rest))
    alone = death.processing == {key} if death is not None else isolated
    if alone and len(batch) == 1:
        return Charge(rest[0])
    if len(rest) == 1:
        return Split(((rest[0],),))
    middle = len(rest) // 2
    return Split((tuple(rest[:middle]), tuple(rest[middle:])))


def charged_result(deaths: int) -> dict[str, Any]:
    """The failure of a task whose worker died ``deaths`` times while it ran alone."""
    times = "once" if deaths == 1 else f"{deaths} times"
    return {
        "status": "failed",
        "error": "KilledWorker: the worker process died while running this task alone, "
        f"{times} (the task ends its process: os._exit, a crash, memory)",
        "traceback": "",
        "elapsed": 0.0,
    }


@dataclass(frozen=True)
class Moved:
    """Dask runs the batch on another worker, `to`, than the gone one it was sent to."""

    to: str


@dataclass(frozen=True)
class Requeue:
    """The batch never ran on its gone worker (or its results were lost after): send it again."""


@dataclass(frozen=True)
class DiedWith:
    """The batch was on its worker when the worker died."""


def stale_batch(
    key: str, strict: bool, where: Mapping[str, str], death: Death | None
) -> Moved | Requeue | DiedWith:
    """What became of a batch sent to a worker that is gone: ``where`` maps each batch key to
    the worker Dask runs it on now; a ``strict`` batch may run only on its own worker."""
    if key in where and not strict:
        return Moved(where[key])
    if death is not None and key not in death.processing:
        return Requeue()
    return DiedWith()


def resend_parts(rest: Sequence[Item]) -> tuple[tuple[tuple[Item, ...], ...], list[Item]]:
    """Tasks sent again, not counted as tried: those that died with a worker keep to their
    halves or to running alone (the parts first), the others join the queue (second)."""
    suspects = tuple(item for item in rest if item.suspect)
    parts = (suspects,) if suspects else ()
    return parts, [item for item in rest if not item.suspect]
