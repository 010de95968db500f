"""Confidence intervals and comparisons over replicates.

Intervals are Student-t intervals of the mean over independent replicates: the replicate is the
unit of independence, so anything averaged inside a replicate (cells pooled by a query, or the
difference of two paired strategies) is computed per replicate first and the interval is taken
over replicates. With fewer than two replicates no interval exists: its bounds are NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from scipy import stats as scipy_stats


def t_quantile(confidence: float, n: np.ndarray) -> np.ndarray:
    """Two-sided Student-t quantile for n observations (NaN where n < 2)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")
    n = np.asarray(n, dtype=float)
    dof = np.where(n >= 2, n - 1, np.nan)
    return scipy_stats.t.ppf(0.5 + confidence / 2, dof)


def interval(values: xr.DataArray, dim: str, confidence: float) -> xr.Dataset:
    """Mean, sample std, n, half-width and bounds along ``dim``, ignoring NaN (missing) values."""
    n = values.count(dim)
    mean = values.mean(dim, skipna=True)
    std = values.std(dim, ddof=1, skipna=True).where(n >= 2)
    # Identical replicates (a deterministic cell) get their value and a zero std exactly,
    # not the rounding residue of summing and dividing.
    low = values.min(dim, skipna=True)
    same = low == values.max(dim, skipna=True)
    mean = xr.where(same, low, mean)
    std = xr.where(same & (n >= 2), 0.0, std)
    half = xr.apply_ufunc(t_quantile, confidence, n) * std / np.sqrt(n.where(n > 0))
    return xr.Dataset(
        {
            "mean": mean,
            "std": std,
            "n": n.astype("int64"),
            "half_width": half,
            "ci_low": mean - half,
            "ci_high": mean + half,
        }
    )


def summarize(raw: xr.Dataset, metrics: list[str], confidence: float) -> xr.Dataset:
    """Per-cell summary variables ``<metric>_mean``, ``_std``, ``_n``, ``_ci_low``, ``_ci_high``."""
    out = {}
    for metric in metrics:
        result = interval(raw[metric], "replicate", confidence)
        attrs = dict(raw[metric].attrs)
        for stat in ("mean", "std", "n", "ci_low", "ci_high"):
            variable = result[stat]
            variable.attrs = {
                **({"units": attrs["units"]} if "units" in attrs and stat != "n" else {}),
                "long_name": f"{stat} over replicates of {attrs.get('long_name', metric)}",
                "cell_methods": f"replicate: {STAT_METHODS[stat]}",
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


def pooled(values: xr.DataArray, by: list[str], confidence: float) -> xr.Dataset:
    """Interval of the mean per combination of ``by``, pooling the other factors per replicate."""
    others = [d for d in values.dims if d not in by and d != "replicate"]
    per_replicate = values.mean(others, skipna=True) if others else values
    return interval(per_replicate, "replicate", confidence)


def paired_difference(
    values: xr.DataArray, factor: str, a: object, b: object, confidence: float
) -> xr.Dataset:
    """Interval of (a - b) per cell, computed replicate by replicate (common random numbers)."""
    diff = values.sel({factor: a}) - values.sel({factor: b})
    return interval(diff, "replicate", confidence)


def replicates_needed(
    values: np.ndarray,
    half_width: float,
    relative: bool,
    min_replicates: int,
    max_replicates: int,
    confidence: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Sequential stopping rule: how many replicates each cell needs, and whether it is met.

    ``values`` is cells x replicates (NaN where not available). A cell below
    ``min_replicates`` gets that many. Otherwise its interval half-width h is compared with the
    target (``half_width``, times |mean| when ``relative``); a cell short of it gets the
    classical estimate n (h / target)^2, at least one more and at most twice its current
    count per round, never beyond ``max_replicates``. Stopping when an interval is first
    narrow enough makes coverage slightly below nominal; a larger ``min_replicates`` limits it.
    """
    values = np.asarray(values, dtype=float)
    n = np.sum(~np.isnan(values), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # cells with fewer than 2 values
        mean = np.nanmean(np.where(n[:, None] > 0, values, 0.0), axis=1)
        std = np.nanstd(values, axis=1, ddof=1) if values.shape[1] > 1 else np.full(len(n), np.nan)
        half = t_quantile(confidence, n) * std / np.sqrt(n)
        target = half_width * np.abs(mean) if relative else np.full(len(n), half_width)
        met = (n >= min_replicates) & (half <= target)
        estimate = np.ceil(n * (half / target) ** 2)
    estimate = np.where(np.isfinite(estimate), estimate, 2 * n)
    grow = np.clip(estimate, n + 1, 2 * np.maximum(n, 1))
    need = np.where(n < min_replicates, min_replicates, np.where(met, n, grow))
    return np.minimum(need, max_replicates).astype(int), met
