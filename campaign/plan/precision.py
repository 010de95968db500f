"""A precision campaign in words: the target, where the cells stand, how far each metric is.

For `campaign validate`, `plan`, `status` and `run`; the numbers come from the replicate
policy (`campaign.plan.replicates.PrecisionRounds`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from campaign.analysis.stats import judge, percent
from campaign.plan.replicates import stopping_rule_of
from campaign.results.precision_variables import PRECISION_STATES
from campaign.spec.describe import precision_bound

if TYPE_CHECKING:
    from campaign.plan.state import RunState


def precision_summary(state: np.ndarray, replicates: np.ndarray, most: int) -> str:
    """One line on where the cells stand against a precision target."""
    state, replicates = np.ravel(state), np.ravel(replicates)
    parts = []
    met = replicates[state == PRECISION_STATES["met"]]
    if met.size:
        low, high = int(met.min()), int(met.max())
        counts = f"{low}" if low == high else f"{low} to {high}"
        parts.append(f"{_cells(met.size)} met the target with {counts} replicates")
    at_max = np.count_nonzero(state == PRECISION_STATES["at_max"])
    if at_max:
        parts.append(f"{_cells(at_max)} stopped at max_replicates ({most}) without meeting it")
    running = np.count_nonzero(state == PRECISION_STATES["running"])
    if running:
        parts.append(f"{_cells(running)} still running (later rounds follow their results)")
    waiting = np.count_nonzero(state == PRECISION_STATES["waiting"])
    if waiting:
        parts.append(f"{_cells(waiting)} waiting on failed tasks (a rerun retries them)")
    return "precision: " + "; ".join(parts)


def _cells(count: int) -> str:
    return f"{count} cell" if count == 1 else f"{count} cells"


def precision_progress(plan: RunState) -> list[str]:
    """Per precision metric, one line on where the cells stand against the target now: how
    many meet it (the stopping rule's test, `campaign.analysis.stats.judge`) and the widest
    interval, over the replicates of each cell's rounds so far."""
    spec, rounds = plan.spec, plan.replicates
    precision = spec.precision
    shape = (len(plan.design.cells), spec.replicates)
    lines = []
    for metric in precision.metrics:
        values = np.where(rounds.window, rounds.values[metric].reshape(shape), np.nan)
        judged = judge(values, stopping_rule_of(precision))
        measured = np.flatnonzero(judged.n >= 2)
        line = f"  {metric}: "
        if measured.size:
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = judged.half_width[measured] / judged.target[measured]
            cell = measured[np.argmax(np.where(np.isnan(ratio), -np.inf, ratio))]
            half = judged.half_width[cell]
            if precision.relative:
                with np.errstate(invalid="ignore", divide="ignore"):
                    widest = f"{100 * half / abs(judged.mean[cell]):.3g}%"
            else:
                widest = f"{half:.3g}"
            levels = plan.design.cell_label(plan.design.cells[cell])
            where = ", ".join(f"{name}={label}" for name, label in levels.items())
            line += (
                f"{np.count_nonzero(judged.met)} of {shape[0]} {_plural(shape[0], 'cell')} "
                f"within {precision_bound(precision)} at {percent(precision.confidence)} "
                f"confidence; widest {widest} "
                f"({where or 'the single cell'}, {judged.n[cell]} replicates)"
            )
        unmeasured = shape[0] - measured.size
        if unmeasured:
            few = f"{unmeasured} {_plural(unmeasured, 'cell')} with fewer than 2 results"
            line += f"; {few}" if measured.size else f"no interval yet ({few})"
        lines.append(line)
    return lines


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"
