"""Degradation from the best and ranking of strategies (parallel-jobs.md section 8).

For every instance g (a combination of the instance dimensions: grid, workload...), strategy
s and metric k: deg = 100 (v - best) / |best|, best the minimum over s of v; for a metric
whose larger values are better (``maximize``), deg = 100 (best - v) / |best|, best the maximum.
That is 100 (v / best - 1) for a positive best, and stays 0 for the best and positive for the
others when values are negative or straddle 0 (dividing by a negative best would turn the
order round). D_{s,g} is the mean of deg over the metrics; D_s the mean of D_{s,g} over
the instances where every strategy and metric has a value (``instances_left_out`` counts the
others; a strategy with no value at all is unranked and not asked for); strategies are ranked
by D_s (1 = best). Values are cell means over replicates;
the same computation per paired replicate gives a Student-t interval for D_s (centred on the
mean of the per-replicate D, reported as ``D_paired_mean``: with few replicates it may differ
from D on cell means). A best value of 0 gives deg 0 to the strategies at 0 and NaN (left out
of the means) to the others; a level equal to the best has deg 0, also when every level is
+inf there (jobs that never start under any strategy).

The metrics default to the model's headline metrics, which a results file names in its
``headline_metrics`` attribute. `ranking_notes` says what a reader must know before trusting
the interval: an unpaired factor, too few replicates, a best value near 0 against the others
(``near_zero``: degradations above 9900% per metric and instance, another level exceeding the
best by more than 99 |best|), and a Friedman test across instances.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats as scipy_stats

from campaign.analysis.stats import FEW_REPLICATES, interval
from campaign.results.assemble import headline_metrics


def _deg(values: xr.DataArray, factor: str) -> xr.DataArray:
    """100 (value - best) / |best| along ``factor``: |best|, so that a negative best does not
    turn the order round (see the module)."""
    best = values.min(factor)
    with np.errstate(invalid="ignore"):  # inf - inf: a level at an infinite best, below
        deg = 100.0 * (values - best) / abs(best)
    at_zero = values == 0
    deg = xr.where(best == 0, xr.where(at_zero, 0.0, np.nan), deg)
    # a level equal to the best is degraded by 0, also where the best is infinite (every
    # level's jobs never start): inf - inf would leave the instance out unsaid
    return xr.where(values == best, 0.0, deg).where(values.notnull())


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
    maximize: Sequence[str] = (),
) -> xr.Dataset:
    """Per level of ``factor``: D (mean degradation, %), its interval over paired replicates
    and its rank; per instance: D and rank; per metric and instance: deg.

    The interval takes only complete replicates, in which every level, metric and instance has
    a value (the best level of a replicate is otherwise judged among whichever levels ran);
    ``D_left_out`` counts the replicates set aside.

    ``dataset`` holds raw metrics with dimension ``factor``, optionally ``replicate``, and the
    instance dimensions (default: every other dimension of the metrics); ``metrics`` default
    to its headline metrics, all minimised but those named in ``maximize``.
    """
    metrics = _metrics_to_rank(dataset, factor, metrics)
    raw = dataset[list(metrics)]
    if "replicate" not in raw.dims:
        raw = raw.expand_dims(replicate=[0])
    instance_dims = _instance_dims(raw[metrics[0]], factor, instance_dims)
    # a maximised metric negated: the smallest is then the best, and 100 (-v + best) / |best|
    # is its degradation
    raw = raw.assign({name: -raw[name] for name in maximize})
    stacked = raw.to_dataarray("metric")
    means = stacked.mean("replicate", skipna=True)
    deg = _deg(means, factor)
    deg = deg.transpose("metric", factor, ...)
    d_instance = deg.mean("metric", skipna=True)
    # D over the instances where every level and metric has a value: elsewhere the best is
    # judged among whichever levels ran, and a level's D would be over other instances. A
    # level with no value at all (every task failed) is unranked and judged nowhere, so that
    # it does not set every instance aside
    ranked = means.notnull().any([d for d in means.dims if d != factor])
    complete = (means.notnull() | ~ranked).all(["metric", factor])
    d = d_instance.where(complete).mean(instance_dims, skipna=True) if instance_dims else d_instance
    replicate_deg = _deg(stacked, factor)
    spread, left_out = _paired_interval(
        stacked, replicate_deg, factor, instance_dims, confidence, complete, ranked
    )
    d = d.transpose(factor, ...)
    other = [x for x in d.dims if x != factor]
    out = xr.Dataset(
        {
            "D": d,
            "D_paired_mean": spread["mean"],
            "D_ci_low": spread["ci_low"],
            "D_ci_high": spread["ci_high"],
            "D_n": spread["n"],
            "D_left_out": left_out,
            "ranked": ranked,
            "rank": _ranks(d, factor),
            "D_instance": d_instance,
            "rank_instance": _ranks(d_instance, factor),
            "deg": deg,
            "near_zero": _near_zero(stacked.mean("replicate", skipna=True), deg, factor)
            | _near_zero(stacked, replicate_deg, factor).any("replicate"),
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
        "maximized": ",".join(maximize),
        "instance_dims": ",".join(instance_dims),
        "confidence": confidence,
        "instances": int(complete.size) if instance_dims else 1,
        "instances_left_out": int((~complete).sum()) if instance_dims else 0,
    }
    if other:
        out.attrs["note"] = f"unreduced dimensions: {', '.join(map(str, other))}"
    return out


def _metrics_to_rank(dataset: xr.Dataset, factor: str, metrics: Sequence[str] | None) -> list[str]:
    """The metrics to rank by (default: the headline metrics), each in the dataset, and
    ``factor`` a dimension of it."""
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
    return metrics


def _instance_dims(
    values: xr.DataArray, factor: str, instance_dims: Sequence[str] | None
) -> list[str]:
    """The instance dimensions (default: every dimension but ``factor`` and replicate)."""
    if instance_dims is None:
        return [d for d in values.dims if d not in (factor, "replicate")]
    unknown = [d for d in instance_dims if d not in values.dims]
    if unknown:
        raise ValueError(f"instance dimension {unknown[0]!r} is not in the dataset")
    return list(instance_dims)


def _paired_interval(
    stacked: xr.DataArray,
    replicate_deg: xr.DataArray,
    factor: str,
    instance_dims: list[str],
    confidence: float,
    kept: xr.DataArray,
    ranked: xr.DataArray,
) -> tuple[dict[str, xr.DataArray], xr.DataArray]:
    """The interval of D per level over complete replicates, and per level how many
    replicates were left out (a replicate is paired only where every ``ranked`` level, metric
    and instance has a value in it), over the instances D is (``kept``)."""
    per_replicate = replicate_deg.mean("metric", skipna=True)
    if instance_dims:
        per_replicate = per_replicate.where(kept).mean(instance_dims, skipna=True)
    present = stacked.notnull()
    reduced = ["metric", factor, *instance_dims]
    counted = present.where(kept, False).any(reduced)
    complete = (present | ~kept | ~ranked).all(reduced) & counted
    left_out = (counted & ~complete).sum("replicate").astype("int64")
    per_replicate = per_replicate.where(complete).transpose(factor, ...)
    return interval(per_replicate, "replicate", confidence), left_out


NEAR_ZERO = 0.01  # degradations above 100 (1 / NEAR_ZERO - 1) = 9900%: for positive values,
# a best below 1% of another level's; in general, another level above the best by 99 |best|


def _near_zero(values: xr.DataArray, deg: xr.DataArray, factor: str) -> xr.DataArray:
    """Where the best level's value is near 0 against the others' (deg above 9900%: another
    level above it by more than 99 |best|; or a best of 0 beside a level that is not), so
    relative degradations explode. An infinite level's inf is no sign of it: the best is not
    near 0 beside a run that never ends."""
    exploded = ((deg > 100.0 * (1 / NEAR_ZERO - 1)) & np.isfinite(values)).any(factor)
    zero_best = (values.min(factor) == 0) & (values > 0).any(factor)
    return exploded | zero_best


LEGEND = (
    "D_means: degradation from the best, 100 (value - best) / |best|, on cell means, averaged "
    "over metrics and instances; D_replicates: the same within each replicate, averaged; "
    "ci_low, ci_high: its interval; n: replicates in it (campaign query --help)"
)


def ranking_notes(result: xr.Dataset, paired: bool) -> list[str]:
    """Warnings a reader of the ranking needs: an unpaired factor, too few replicates, a best
    value near 0, and the Friedman test across instances when there are some."""
    factor = result.attrs["factor"]
    lines = []
    if not paired:
        lines.append(
            f"warning: {factor} is not paired (its levels have seeds of their own): each "
            "replicate's D compares independent runs, so D_replicates may differ from D_means "
            f"and its interval is wide; list {factor} under paired: in the spec to rank its "
            "levels on common random numbers"
        )
    counts = result["D_n"].where(result["ranked"]).values  # an unranked level has none
    fewest = int(np.nanmin(counts)) if np.isfinite(counts).any() else 0
    if fewest < 2:
        lines.append(
            f"warning: no interval (nan) where fewer than 2 replicates have a value for every "
            f"level, metric and instance ({fewest} here); add replicates"
        )
    elif fewest < FEW_REPLICATES:
        lines.append(
            f"warning: the intervals rest on {fewest} replicates (fewer than {FEW_REPLICATES}): "
            "too few for an interval to mean much; add replicates"
        )
    near = result["near_zero"]
    for metric in near["metric"].values:
        flagged = near.sel(metric=metric)
        if bool(flagged.any()):
            where = ""
            if flagged.ndim:
                first = flagged.where(flagged, drop=True)
                labels = ", ".join(f"{d}={first[d].values[0]}" for d in first.dims)
                where = f" in {int(flagged.sum())} of {flagged.size} instances (e.g. {labels})"
            lines.append(
                f"warning: {metric}:{where} the best {factor}'s value is near 0 beside another "
                f"level's (which exceeds it by more than {1 / NEAR_ZERO - 1:.0f} |best|, on cell "
                "means or within a replicate): degradations there exceed "
                f"{100 * (1 / NEAR_ZERO - 1):.0f}% and dominate D; "
                "relative degradations explode near 0: rank on a metric away from 0, or compare "
                "differences with `campaign compare`"
            )
    friedman = friedman_test(result)
    if friedman is not None:
        statistic, p_value, instances = friedman
        lines.append(
            f"Friedman test over {instances} instances (the levels ranked by D within each): "
            f"chi-square {statistic:.4g}, p = {p_value:.3g}"
        )
    return lines


def friedman_test(result: xr.Dataset) -> tuple[float, float, int] | None:
    """The Friedman test of the ranked levels' D across instances (complete instances only),
    when there are at least 3 such levels and 2 instances; None otherwise. An unranked level
    (no value anywhere) is judged nowhere: its empty column sets no instance aside."""
    factor = result.attrs["factor"]
    table = result["D_instance"].isel({factor: np.flatnonzero(result["ranked"].values)})
    others = [d for d in table.dims if d != factor]
    if not others:
        return None
    table = table.stack(instance=others).transpose("instance", factor).values
    table = table[~np.isnan(table).any(axis=1)]
    if table.shape[1] < 3 or table.shape[0] < 2:
        return None
    statistic, p_value = scipy_stats.friedmanchisquare(*table.T)
    return float(statistic), float(p_value), int(table.shape[0])


RANK_HEADER = ("rank", "D_means(%)", "D_replicates(%)", "ci_low(%)", "ci_high(%)", "n")


def ranking_rows(result: xr.Dataset) -> tuple[list[str], list[tuple]]:
    """The ranking's header and rows sorted by rank (unranked levels last): rank (NaN when
    unranked), level, the four percentages and n, as numbers."""
    factor = result.attrs.get("factor", next(iter(result["D"].dims)))
    if result["D"].ndim != 1:
        raise ValueError("ranking_rows needs D over the factor only (give instance_dims)")
    rows = []
    for at, level in enumerate(result[factor].values):
        pick = result.isel({factor: at})  # by position: .sel takes a boolean level for a mask
        rows.append(
            (
                float(pick["rank"]),
                str(level),
                float(pick["D"]),
                float(pick["D_paired_mean"]),
                float(pick["D_ci_low"]),
                float(pick["D_ci_high"]),
                int(pick["D_n"]),
            )
        )
    rows.sort(key=lambda r: (np.inf if np.isnan(r[0]) else r[0], r[1]))
    header = [RANK_HEADER[0], str(factor), *RANK_HEADER[1:]]
    return header, rows
