"""What makes sensitivity indices unreliable, said before or beside them: outputs that cannot
be analysed (too few points, infinite or constant outputs), Sobol intervals too wide for the
indices they bound, delta or RBD-FAST indices SALib left undefined."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import xarray as xr

from campaign.analysis.point_outputs import PointOutputs
from campaign.errors import BadValue, ParameterError
from campaign.results.assemble import metrics_of

DELTA_POINTS = 20
"""The fewest points delta takes: SALib's estimator cuts each factor's range into classes of at
least 10 points and needs two; with fewer it gives NaN for every index."""
SOBOL_TARGET = 10
"""Sobol intervals are narrow enough when the widest is at most the largest index over this:
they then tell apart indices a tenth of the largest apart."""


def check_outputs(outputs: PointOutputs, kept: np.ndarray, method: str, metric: str) -> None:
    """Refuse outputs no index can be computed from, in one line each."""
    if kept.sum() < len(outputs.names) + 2:
        raise ParameterError(
            f"{metric}: {int(kept.sum())} points have a value; {method} needs more than the "
            f"{len(outputs.names)} factors + 1"
        )
    means = outputs.means[kept]
    infinite = np.flatnonzero(kept)[~np.isfinite(means)]
    if infinite.size:
        shown = ", ".join(map(str, infinite[:20])) + (", ..." if infinite.size > 20 else "")
        raise ParameterError(
            f"{metric} is infinite (a replicate's value is, or undefined: +inf and -inf) at "
            f"{infinite.size} points: point {shown}; sensitivity indices need finite outputs"
        )
    if np.ptp(means) == 0:
        raise ParameterError(
            f"{metric} has the same value at every point: it depends on none of the factors, "
            "and no index is defined"
        )


def check_metric(dataset: xr.Dataset, metric: str) -> None:
    """Refuse a metric the results lack, naming those they hold."""
    if metric not in metrics_of(dataset):
        raise BadValue(
            "metric", metric, f"is not in the results; metrics: {', '.join(metrics_of(dataset))}"
        )


def check_resamples(resamples: int | None, method: str) -> None:
    """Refuse resamples no bootstrap draws: fewer than 10, or any with the regression, whose
    intervals are Student t (they were taken and left unused, the table as without them)."""
    if resamples is None:
        return
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 10:
        raise BadValue("resamples", resamples, "is not allowed; use an integer of 10 or more")
    if method == "regression":
        raise ParameterError(
            "{resamples} is for the bootstrap intervals of sobol, morris, delta and rbd_fast; "
            "the regression's intervals are Student t: leave {resamples} out, or give "
            "{method} delta or rbd_fast",
            "resamples",
            "method",
        )


def sobol_warnings(table: pd.DataFrame, base: int, per_base: int) -> list[str]:
    """A warning when Sobol indices come from too few points: intervals wider than the largest
    index, or an S1 above its ST by more than ST's interval (never so but by estimation error);
    it says how many base points (a power of 2) would narrow the intervals to within
    `SOBOL_TARGET`-th of the largest index, and to about what (half-widths shrink as
    1 / sqrt(points)). ``base``: the design's base points,
    ``per_base``: its points per base point."""
    largest = float(np.nanmax(table["ST"].to_numpy(), initial=-np.inf))
    widest = float(np.nanmax(table[["S1_conf", "ST_conf"]].to_numpy(), initial=0.0))
    above = table["S1"] > table["ST"] + table["ST_conf"]
    reasons = []
    if widest > largest:
        reasons.append(
            f"intervals up to ±{widest:.2g}, wider than the largest index ({largest:.2g})"
        )
    if above.any():
        names = ", ".join(table["factor"][above])
        reasons.append(f"S1 above ST for {names} (never so but by estimation error)")
    if not reasons:
        return []
    advice = "draw more points"
    if largest > 0 and math.isfinite(largest) and widest > 0:
        needed = base * (widest / (largest / SOBOL_TARGET)) ** 2
        points = 2 ** max(math.ceil(math.log2(needed)), 0)
        projected = widest * math.sqrt(base / points)  # at the power of 2 advised
        advice = (
            f"about {points} base points (design: {{saltelli: {{points: {points}}}}}, "
            f"{points * per_base} points here) would narrow them to about ±{projected:.2g}, "
            f"within a tenth of the largest index"
        )
    return [f"warning: too few points for these indices: {'; '.join(reasons)}; {advice}"]


def sample_warnings(method: str, table: pd.DataFrame) -> list[str]:
    """A warning naming the factors whose delta or RBD-FAST index SALib left undefined (NaN)."""
    undefined = table["factor"][table.drop(columns="factor").isna().any(axis=1)].tolist()
    if not undefined:
        return []
    why = (
        "SALib found no two classes of at least 10 points along their range"
        if method == "delta"
        else "SALib's estimate is undefined there"
    )
    return [
        f"warning: {method} gives no index (NaN) for {', '.join(undefined)}: {why}; draw more "
        "points"
    ]
