"""What each task cost: its wall time and peak memory, as stored with its result, summed up
per cell and for the campaign (the group ``resources`` of results.nc that holds them per
task: `campaign.results.resource_group`).

Timings differ from run to run, so they stay out of the results' root group, which holds
only what the same spec and seed reproduce bit for bit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class CellCost:
    """The measured tasks of one cell: how many, their mean and longest wall time (seconds)
    and their largest peak memory (bytes; NaN where no task measured it)."""

    cell: str
    tasks: int
    mean_seconds: float
    max_seconds: float
    peak_memory: float


@dataclass(frozen=True)
class Costs:
    """The measured tasks of a campaign, per cell (slowest mean first) and in all."""

    cells: list[CellCost]
    tasks: int
    seconds: float
    peak_memory: float

    @property
    def mean_seconds(self) -> float:
        return self.seconds / self.tasks if self.tasks else float("nan")


def measured(records: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records that say what their task cost: finished (ok or failed) with a wall time."""
    return [
        record
        for record in records.values()
        if record.get("status") in ("ok", "failed") and "elapsed" in record
    ]


def cell_label(record: Mapping[str, Any]) -> str:
    """A record's cell as its factor levels, `a=1, b=x` (or "(single cell)")."""
    cell = record.get("cell") or {}
    return ", ".join(f"{name}={level}" for name, level in cell.items()) or "(single cell)"


def costs(records: Mapping[str, Mapping[str, Any]]) -> Costs:
    """Per cell and in all, what the finished tasks among ``records`` cost."""
    rows = measured(records)
    labels: dict[str, int] = {}
    cells = np.array([labels.setdefault(cell_label(r), len(labels)) for r in rows], np.int64)
    seconds = np.array([float(r["elapsed"]) for r in rows])
    memory = np.array([float(r.get("peak_memory", np.nan)) for r in rows])
    return grouped_costs(list(labels), cells, seconds, memory)


def grouped_costs(
    labels: Sequence[str], cells: np.ndarray, seconds: np.ndarray, memory: np.ndarray
) -> Costs:
    """`Costs` of measured tasks given as arrays: each one's cell (an index into ``labels``),
    wall time and peak memory."""
    count = np.bincount(cells, minlength=len(labels))
    total = np.bincount(cells, weights=seconds, minlength=len(labels))
    longest = np.full(len(labels), -np.inf)
    np.maximum.at(longest, cells, seconds)
    peak = np.full(len(labels), -np.inf)
    finite = np.isfinite(memory)
    np.maximum.at(peak, cells[finite], memory[finite])
    found = []
    for index in np.flatnonzero(count):
        found.append(
            CellCost(
                labels[index],
                int(count[index]),
                float(total[index] / count[index]),
                float(longest[index]),
                float(peak[index]) if np.isfinite(peak[index]) else float("nan"),
            )
        )
    found.sort(key=lambda cell: (-cell.mean_seconds, cell.cell))
    peaks = [cell.peak_memory for cell in found if np.isfinite(cell.peak_memory)]
    return Costs(
        cells=found,
        tasks=sum(cell.tasks for cell in found),
        seconds=float(sum(cell.mean_seconds * cell.tasks for cell in found)),
        peak_memory=max(peaks) if peaks else float("nan"),
    )
