"""Confidence intervals and comparisons over replicates.

Intervals are Student-t intervals of the mean over independent replicates: the replicate is the
unit of independence, so anything averaged inside a replicate (cells pooled by a query, or the
difference of two paired strategies) is computed per replicate first and the interval is taken
over replicates. With fewer than two replicates no interval exists: its bounds are NaN.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import xarray as xr
from scipy.special import stdtrit


def t_quantile(confidence: float, n: np.ndarray) -> np.ndarray:
    """Two-sided Student-t quantile for n observations (NaN where n < 2)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")
    n = np.asarray(n, dtype=float)
    dof = np.where(n >= 2, n - 1, np.nan)
    # scipy.stats.t.ppf's own computation, without importing all of scipy.stats (a second
    # at every start of the command line)
    return stdtrit(dof, 0.5 + confidence / 2)


FEW_REPLICATES = 5  # below this, an interval rests mostly on the normality assumption


def percent(level: float) -> str:
    """A confidence level in percent with the digits it has: 0.95 "95%", 0.975 "97.5%" (not
    "98%"), 0.999 "99.9%" (not "100%")."""
    return f"{round(level * 100, 10):g}%"


def few_replicates_warning(fewest: int) -> str | None:
    """The line under a table of intervals, the smallest over ``fewest`` replicates, when
    they are too few for an interval to say much (None otherwise)."""
    if fewest >= FEW_REPLICATES:
        return None
    return (
        f"warning: some intervals rest on {fewest} replicate(s) (fewer than {FEW_REPLICATES}): "
        "too few for an interval to say much; add replicates"
    )


def interval(values: xr.DataArray, dim: str, confidence: float) -> dict[str, xr.DataArray]:
    """Mean, sample std, n, half-width and bounds along ``dim``, ignoring NaN (missing) values.

    A mapping of plain arrays, not a Dataset: a factor may be named ``mean`` or ``n``.
    """
    n = values.count(dim)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN is the answer, not a warning
        mean = values.mean(dim, skipna=True)
        std = values.std(dim, ddof=1, skipna=True).where(n >= 2)
    # Identical replicates (a deterministic cell) get their value and a zero std exactly,
    # not the rounding residue of summing and dividing. Infinite ones have no spread to
    # speak of: their std and interval stay NaN (inf - inf), their mean inf (NaN for +-inf).
    low = values.min(dim, skipna=True)
    same = (low == values.max(dim, skipna=True)) & np.isfinite(low)
    mean = xr.where(same, low, mean)
    std = xr.where(same & (n >= 2), 0.0, std)
    half = xr.apply_ufunc(t_quantile, confidence, n) * std / np.sqrt(n.where(n > 0))
    return {
        "mean": mean,
        "std": std,
        "n": n.astype("int64"),
        "half_width": half,
        "ci_low": mean - half,
        "ci_high": mean + half,
    }


SUMMARY_BLOCK_VALUES = 1 << 22  # raw values summarised at once: bounds the memory it takes


def summarize(raw: xr.Dataset, metrics: list[str], confidence: float) -> xr.Dataset:
    """Per-cell summary variables ``<metric>_mean``, ``_std``, ``_n``, ``_ci_low``, ``_ci_high``.

    Metrics are stacked into blocks and each block gets one `interval`: the cost per metric
    is then a few array operations, not a round of xarray alignment, so thousands of metrics
    take time in proportion to their number (and the values are the same as one by one).
    """
    out: dict[str, xr.Variable] = {}
    if not metrics:
        return xr.Dataset()
    dims = raw.variables[metrics[0]].dims
    per_block = max(1, SUMMARY_BLOCK_VALUES // max(raw.variables[metrics[0]].size, 1))
    for first in range(0, len(metrics), per_block):
        block = metrics[first : first + per_block]
        stacked = xr.DataArray(
            np.stack([raw.variables[name].values for name in block]), dims=("-metric", *dims)
        )
        result = interval(stacked, "replicate", confidence)
        for index, metric in enumerate(block):
            attrs = raw.variables[metric].attrs
            for stat in ("mean", "std", "n", "ci_low", "ci_high"):
                variable = result[stat].variable[index]
                variable.attrs = {
                    **({"units": attrs["units"]} if "units" in attrs and stat != "n" else {}),
                    "long_name": f"{stat} over replicates of {attrs.get('long_name', metric)}",
                    "cell_methods": f"realization: {STAT_METHODS[stat]}",
                }
                if stat in ("ci_low", "ci_high"):
                    variable.attrs["confidence"] = confidence
                out[f"{metric}_{stat}"] = variable
    return xr.Dataset(out)


STAT_METHODS = {
    "mean": "mean",
    "std": "standard_deviation",
    "n": "sum (count of finished replicates)",
    "ci_low": "mean (lower bound of Student-t interval)",
    "ci_high": "mean (upper bound of Student-t interval)",
}


def pooled(values: xr.DataArray, by: list[str], confidence: float) -> dict[str, xr.DataArray]:
    """Interval of the mean per combination of ``by``, pooling the other factors per replicate.

    A replicate enters only when every pooled cell has a value in it: averaging whatever
    cells a replicate holds would mix different sets of cells (a failed cell's replicate
    would count its other cells alone). ``left_out`` counts, per combination, the replicates
    set aside because only some of their pooled cells have a value.
    """
    others = [d for d in values.dims if d not in by and d != "replicate"]
    if not others:
        result = interval(values, "replicate", confidence)
        return {**result, "left_out": xr.zeros_like(result["n"])}
    present = values.notnull()
    partial = present.any(others) & ~present.all(others)
    result = interval(per_replicate(values, by), "replicate", confidence)
    return {**result, "left_out": partial.sum("replicate").astype("int64")}


def per_replicate(values: xr.DataArray, by: list[str]) -> xr.DataArray:
    """Each replicate's value per combination of ``by``: the other factors averaged within the
    replicate, NaN where some pooled cell has no value (what `pooled` takes the interval of,
    and what box plots and ECDFs of replicates draw)."""
    others = [d for d in values.dims if d not in by and d != "replicate"]
    if not others:
        return values
    complete = values.notnull().all(others)
    return values.mean(others, skipna=True).where(complete)


def paired_difference(
    values: xr.DataArray, factor: str, a: object, b: object, confidence: float
) -> dict[str, xr.DataArray]:
    """Interval of (a - b) per cell, computed replicate by replicate (common random numbers)."""
    levels = list(values[factor].values)  # by position: .sel takes a boolean for a mask
    diff = values.isel({factor: levels.index(a)}) - values.isel({factor: levels.index(b)})
    return interval(diff, "replicate", confidence)


@dataclass(frozen=True)
class StoppingRule:
    """A precision target: replicates are added to a cell until every interval is this narrow.

    ``half_width`` is in metric units, or a fraction of |mean| when ``relative``; intervals are
    Student-t at ``confidence``. A cell is judged first at ``min_replicates`` replicates and
    never gets more than ``max_replicates``.
    """

    half_width: float
    relative: bool
    min_replicates: int
    max_replicates: int
    confidence: float = 0.95


def stopping_rule(
    values: np.ndarray, replicates: np.ndarray, rule: StoppingRule
) -> tuple[np.ndarray, np.ndarray]:
    """One decision per cell: its next replicate count and whether its interval is narrow enough.

    ``values`` is cells x replicates, NaN where there is no value, and holds a cell's first
    ``replicates`` replicates only (NaN beyond). A cell meets the target when it has at least
    ``min_replicates`` values and its half-width h is at most the target; then it keeps its
    count. Otherwise it gets the classical estimate ``replicates (h / target)^2``, at least one
    more replicate and at most twice as many per round, never beyond ``max_replicates``.
    Stopping when an interval is first narrow enough makes coverage below nominal (95%
    intervals: 82.4% to 93.5% with ``min_replicates`` 5 on the cases docs/explanation/statistics.md
    measures); a ``min_replicates`` near the count the target needs limits it.
    """
    replicates = np.asarray(replicates, dtype=np.int64)
    judged = judge(values, rule)
    half, target, met = judged.half_width, judged.target, judged.met
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        estimate = np.ceil(replicates * (half / target) ** 2)
    estimate = np.where(np.isfinite(estimate), estimate, 2 * replicates)
    grow = np.clip(estimate, replicates + 1, 2 * replicates).astype(np.int64)
    return np.where(met, replicates, np.minimum(grow, rule.max_replicates)), met


@dataclass(frozen=True)
class Judged:
    """Per cell: its values' count n, mean, interval half-width, the target half-width (in
    metric units) and whether the cell meets it (NaN half-width with fewer than 2 values)."""

    n: np.ndarray
    mean: np.ndarray
    half_width: np.ndarray
    target: np.ndarray
    met: np.ndarray


def judge(values: np.ndarray, rule: StoppingRule) -> Judged:
    """Each cell's interval against the target of ``rule``: the test `stopping_rule` stops a
    cell on, and what `campaign plan` reports. ``values``: cells x replicates, NaN where
    there is no value."""
    values = np.asarray(values, dtype=float)
    n = np.sum(~np.isnan(values), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # cells with fewer than 2 values
        mean = np.nanmean(values, axis=1)
        std = np.nanstd(values, axis=1, ddof=1)
        half = t_quantile(rule.confidence, n) * std / np.sqrt(n)
        target = rule.half_width * np.abs(mean) if rule.relative else rule.half_width
        met = (n >= rule.min_replicates) & (half <= target)
    return Judged(n, mean, half, np.broadcast_to(target, n.shape), met)


@dataclass(frozen=True)
class Rounds:
    """Where each cell of a precision campaign stands, decided from its stored results alone.

    ``target``: how many replicates (indices 0..target-1) the cell has been given so far.
    A cell is ``met`` (its target reached), ``at_max`` (``max_replicates`` run without meeting
    it), ``waiting`` (a failed task among its replicates holds its next decision until a rerun
    retries it) or else still running (some of its replicates are not run yet).
    """

    target: np.ndarray
    met: np.ndarray
    at_max: np.ndarray
    waiting: np.ndarray

    @property
    def running(self) -> np.ndarray:
        return ~(self.met | self.at_max | self.waiting)


def precision_rounds(
    metrics: list[np.ndarray], finished: np.ndarray, failed: np.ndarray, rule: StoppingRule
) -> Rounds:
    """Replay the stopping rule over stored results: the rounds any run of them would make.

    ``metrics``: per precision metric a cells x replicates array (NaN where no value);
    ``finished``: a task has a stored result (ok or failed); ``failed``: it failed. Every cell
    starts at ``min_replicates``; once all its replicates below its target are finished
    without failure, the rule decides from exactly those replicates whether it stops or how
    many it gets next. A decision never looks at replicates beyond the target, so whatever
    order tasks ran in, and wherever a run was interrupted, the same stored results give the
    same rounds.
    """
    finished = np.asarray(finished, dtype=bool)
    failed = np.asarray(failed, dtype=bool)
    cells, width = finished.shape
    target = np.full(cells, min(rule.min_replicates, width), dtype=np.int64)
    met = np.zeros(cells, dtype=bool)
    at_max = np.zeros(cells, dtype=bool)
    columns = np.arange(width)
    while True:
        window = columns < target[:, None]
        open_cells = ~(met | at_max)
        complete = open_cells & ~(window & ~finished).any(axis=1)
        waiting = complete & (window & failed).any(axis=1)
        deciding = np.flatnonzero(complete & ~waiting)
        if not deciding.size:
            return Rounds(target, met, at_max, waiting)
        following = target[deciding].copy()
        all_met = np.ones(deciding.size, dtype=bool)
        for values in metrics:
            inside = np.where(window[deciding], values[deciding], np.nan)
            need, cell_met = stopping_rule(inside, target[deciding], rule)
            following = np.maximum(following, need)
            all_met &= cell_met
        met[deciding] = all_met
        at_max[deciding] = ~all_met & (following == target[deciding])
        target[deciding] = following
