"""Degradation from the best and ranking of strategies (parallel-jobs.md section 8).

For every instance g (a combination of the instance dimensions: grid, workload...), strategy
s and metric k (all minimised): deg = 100 (v / min over s of v - 1). D_{s,g} is the mean of
deg over the metrics; D_s the mean of D_{s,g} over instances; strategies are ranked by D_s
(1 = best). Values are cell means over replicates; the same computation per paired replicate
gives a Student-t interval for D_s (centred on the mean of the per-replicate D, reported as
``D_paired_mean``: with few replicates it may differ from D on cell means). A best value of 0
gives deg 0 to the strategies at 0 and NaN (left out of the means) to the others.

The metrics default to the model's headline metrics, which a results file names in its
``headline_metrics`` attribute.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from campaign.results import headline_metrics
from campaign.stats import interval


def _deg(values: xr.DataArray, factor: str) -> xr.DataArray:
    best = values.min(factor)
    deg = 100.0 * (values / best - 1.0)
    at_zero = values == 0
    return xr.where(best == 0, xr.where(at_zero, 0.0, np.nan), deg).where(values.notnull())


def _ranks(values: xr.DataArray, factor: str) -> xr.DataArray:
    """1 = smallest; equal values share the smaller rank; NaN last (rank NaN)."""

    def rank(row: np.ndarray) -> np.ndarray:
        out = np.full(row.shape, np.nan)
        ok = ~np.isnan(row)
        out[ok] = [1 + int((row[ok] < value).sum()) for value in row[ok]]
        return out

    return xr.apply_ufunc(
        rank, values, input_core_dims=[[factor]], output_core_dims=[[factor]], vectorize=True
    )


def degradation(
    dataset: xr.Dataset,
    factor: str = "strategy",
    metrics: Sequence[str] | None = None,
    instance_dims: Sequence[str] | None = None,
    confidence: float = 0.95,
) -> xr.Dataset:
    """Per level of ``factor``: D (mean degradation, %), its interval over paired replicates
    and its rank; per instance: D and rank; per metric and instance: deg.

    The interval takes only complete replicates, in which every level, metric and instance has
    a value (the best level of a replicate is otherwise judged among whichever levels ran);
    ``D_left_out`` counts the replicates set aside.

    ``dataset`` holds raw metrics with dimension ``factor``, optionally ``replicate``, and the
    instance dimensions (default: every other dimension of the metrics); ``metrics`` default
    to its headline metrics.
    """
    if metrics is None:
        metrics = headline_metrics(dataset)
        if not metrics:
            raise ValueError("the dataset names no headline metrics: give the metrics to rank by")
    metrics = list(metrics)
    missing = [m for m in metrics if m not in dataset]
    if missing:
        raise ValueError(
            f"metric {missing[0]!r} is not in the dataset; "
            f"has: {', '.join(map(str, dataset.data_vars))}"
        )
    if factor not in dataset.dims:
        raise ValueError(
            f"factor {factor!r} is not a dimension; dimensions: {', '.join(map(str, dataset.dims))}"
        )
    raw = dataset[list(metrics)]
    if "replicate" not in raw.dims:
        raw = raw.expand_dims(replicate=[0])
    dims = set(raw[metrics[0]].dims)
    if instance_dims is None:
        instance_dims = [d for d in raw[metrics[0]].dims if d not in (factor, "replicate")]
    else:
        unknown = [d for d in instance_dims if d not in dims]
        if unknown:
            raise ValueError(f"instance dimension {unknown[0]!r} is not in the dataset")
    instance_dims = list(instance_dims)
    stacked = raw.to_dataarray("metric")
    means = stacked.mean("replicate", skipna=True)
    deg = _deg(means, factor)
    deg = deg.transpose("metric", factor, ...)
    d_instance = deg.mean("metric", skipna=True)
    d = d_instance.mean(instance_dims, skipna=True) if instance_dims else d_instance
    per_replicate = _deg(stacked, factor).mean("metric", skipna=True)
    if instance_dims:
        per_replicate = per_replicate.mean(instance_dims, skipna=True)
    # a replicate is paired only where every level, metric and instance has a value in it
    present = stacked.notnull()
    reduced = ["metric", factor, *instance_dims]
    complete = present.all(reduced)
    left_out = (present.any(reduced) & ~complete).sum("replicate").astype("int64")
    per_replicate = per_replicate.where(complete)
    d = d.transpose(factor, ...)
    per_replicate = per_replicate.transpose(factor, ...)
    other = [x for x in d.dims if x != factor]
    spread = interval(per_replicate, "replicate", confidence)
    out = xr.Dataset(
        {
            "D": d,
            "D_paired_mean": spread["mean"],
            "D_ci_low": spread["ci_low"],
            "D_ci_high": spread["ci_high"],
            "D_n": spread["n"],
            "D_left_out": left_out,
            "rank": _ranks(d, factor),
            "D_instance": d_instance,
            "rank_instance": _ranks(d_instance, factor),
            "deg": deg,
        }
    )
    out["D"].attrs = {
        "units": "%",
        "long_name": "mean degradation from the best over metrics and instances",
    }
    out["deg"].attrs = {"units": "%", "long_name": "degradation from the best strategy per metric"}
    out.attrs = {
        "factor": factor,
        "metrics": ",".join(metrics),
        "instance_dims": ",".join(instance_dims),
        "confidence": confidence,
    }
    if other:
        out.attrs["note"] = f"unreduced dimensions: {', '.join(map(str, other))}"
    return out


def format_ranking(result: xr.Dataset) -> str:
    """A plain-text table sorted by rank: level, D on cell means (%), mean of the paired
    per-replicate D and its interval."""
    factor = result.attrs.get("factor", next(iter(result["D"].dims)))
    if result["D"].ndim != 1:
        raise ValueError("format_ranking needs D over the factor only (give instance_dims)")
    rows = []
    for level in result[factor].values:
        pick = result.sel({factor: level})
        rows.append(
            (
                float(pick["rank"]),
                str(level),
                float(pick["D"]),
                float(pick["D_paired_mean"]),
                float(pick["D_ci_low"]),
                float(pick["D_ci_high"]),
            )
        )
    rows.sort(key=lambda r: (np.inf if np.isnan(r[0]) else r[0], r[1]))
    width = max(len(factor), *(len(r[1]) for r in rows))
    head = f"{'rank':>4}  {factor:<{width}}  {'D (%)':>10}  {'paired':>10}"
    lines = [f"{head}  {'ci_low':>10}  {'ci_high':>10}"]
    for rank, level, value, paired, low, high in rows:
        rank_text = "-" if np.isnan(rank) else f"{int(rank)}"
        numbers = "  ".join(f"{x:>10.2f}" for x in (value, paired, low, high))
        lines.append(f"{rank_text:>4}  {level:<{width}}  {numbers}")
    return "\n".join(lines)
