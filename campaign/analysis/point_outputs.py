"""The inputs and outputs of a design of points, as sensitivity methods take them.

The inputs are the factors drawn over ranges (the coordinates along ``point``), as received
and on [0, 1]; the output of a point is the mean of its replicates that have a value (after
the output transform, if any: the mean of the replicates' logs), and `noise_share` says how
much of the variance of those means the replicates' noise still makes. An infinite value is a
value: a point with one has an infinite mean, never the mean of its finite replicates.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import xarray as xr

from campaign.analysis.query import parse_where, select
from campaign.design import points as designs
from campaign.errors import BadValue, ParameterError
from campaign.results.assemble import factors_of, point_factors_of
from campaign.results.status import STATUS_OK

LOG = "log"
TRANSFORMS = (LOG,)


@dataclass(frozen=True)
class PointOutputs:
    """The sampled inputs and the replicate-averaged output of every point."""

    names: list[str]  # the factors drawn over ranges, in the design's order
    values: np.ndarray  # points x factors: the values the model received
    unit: np.ndarray  # points x factors: the same on [0, 1], each on its range's scale
    log: list[bool]  # per factor: drawn on a log scale
    means: np.ndarray  # per point: the mean of its replicates with a value (NaN: none)
    counts: np.ndarray  # per point: how many replicates have a value
    replicates: int
    noise_share: float  # share of the variance of the point means that is replicate noise


def point_outputs(
    dataset: xr.Dataset,
    metric: str,
    where: list[str] | None,
    whole: bool,
    transform: str | None = None,
) -> PointOutputs:
    """The inputs and replicate means of the points ``where`` keeps (``whole``: every point of
    the design, in order, as a structured sample needs), each replicate's value transformed
    first by ``transform`` (None, or ``"log"``)."""
    if transform is not None and transform not in TRANSFORMS:
        raise BadValue(
            "transform", transform, f"is not allowed; transforms: {', '.join(TRANSFORMS)}"
        )
    selected = select(
        xr.Dataset({metric: dataset[metric], "status": dataset["status"]}),
        parse_where(dataset, where or []),
    )
    crossed = [f for f in factors_of(selected) if f != designs.POINT]
    several = [f for f in crossed if selected.sizes[f] > 1]
    if several:
        example = f"{several[0]}={selected[several[0]].values[0]}"
        raise ParameterError(
            f"the results cross {', '.join(several)} with the points; analyse one level at a "
            f"time: {{where}} '{example}'",
            "where",
        )
    selected = selected.isel({f: 0 for f in crossed})
    if whole and selected.sizes[designs.POINT] != dataset.sizes[designs.POINT]:
        raise ParameterError(
            "{where} keeps some of the points, but sobol and morris indices need every point "
            "of the sample; select only levels of crossed factors",
            "where",
        )
    names = [
        n for n in point_factors_of(dataset) if "valid_range" in dataset[n].attrs
    ]  # a fraction's factors lie along point too, without a range
    values = np.column_stack([selected[n].values.astype(float) for n in names])
    log = [dataset[n].attrs.get("sampling_scale") == designs.LOG for n in names]
    unit = np.column_stack(
        [
            designs.unscale(values[:, j], *dataset[n].attrs["valid_range"], log[j])
            for j, n in enumerate(names)
        ]
    )
    raw = selected[metric].transpose(designs.POINT, "replicate").values.astype(float)
    ok = selected["status"].transpose(designs.POINT, "replicate").values == STATUS_OK
    present = ok & ~np.isnan(raw)
    if transform == LOG:
        raw = logged(raw, present, metric, selected[designs.POINT].values)
    counts = present.sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        kept = np.where(present, raw, np.nan)
        means = np.nanmean(kept, axis=1)
        variances = np.nanvar(kept, axis=1, ddof=1)
    return PointOutputs(
        names, values, unit, log, means, counts, raw.shape[1], noise_share(means, variances, counts)
    )


def logged(raw: np.ndarray, present: np.ndarray, metric: str, points: np.ndarray) -> np.ndarray:
    """The log of every value (points x replicates), or one line naming the values that have
    none."""
    bad = present & (raw <= 0)
    if bad.any():
        smallest = raw[bad].min()
        point = points[np.argwhere(bad & (raw == smallest))[0][0]]
        raise ParameterError(
            f"{{transform}} log: {metric} has {int(bad.sum())} values <= 0 (the smallest "
            f"{smallest:.6g}, at point {point}); log needs positive values",
            "transform",
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(present, np.log(raw), raw)


def noise_share(means: np.ndarray, variances: np.ndarray, counts: np.ndarray) -> float:
    """The share of the variance of the point means that replicate noise accounts for: the
    mean of each point's variance of its mean (s^2 / n) over the variance of the means; NaN
    without points of two replicates or more."""
    several = counts >= 2
    with np.errstate(invalid="ignore"):  # infinite means: no spread (NaN), no share
        spread = np.nanvar(means[counts > 0], ddof=1) if (counts > 0).sum() > 1 else np.nan
    if not several.any() or not np.isfinite(spread) or spread == 0:
        return float("nan")
    return float(np.mean(variances[several] / counts[several]) / spread)


def averaged_note(replicates: int, valued: tuple[int, int], share: float) -> str | None:
    """The line saying what each point's output averages: its replicates (``valued``: the
    fewest and the most with a value at a point, failed and NaN ones left out), and the noise
    share left in those means; None with one replicate a point."""
    if replicates < 2:
        return None
    fewest, most = valued
    counted = f"its {replicates} replicates ("
    if fewest < replicates:
        span = f"{fewest}" if fewest == most else f"{fewest} to {most}"
        counted = (
            f"its replicates with a value, {span} of {replicates} (failed and NaN ones left out; "
        )
    left = (
        "unknown (no point has two replicates with a value)"
        if not np.isfinite(share)
        else f"{100 * share:.3g}% of the variance of the point means"
    )
    return (
        f"each point's output is the mean of {counted}the noise averaged out); replicate noise "
        f"left in those means: {left}"
    )
