"""Compare the levels of one factor with a baseline level: difference and ratio of the means,
with confidence intervals over replicates.

Paired factors share seeds across their levels (common random numbers): level L and the
baseline B saw the same random inputs in replicate r, so the interval of the difference is
taken over the per-replicate differences y_L,r - y_B,r (replicates where both have a value),
which removes the variation the two share. A breakdown's dimension (`job_class`, made a factor
by `campaign.analysis.breakdown.as_factor`) is paired the same way: its levels break down one
task's result, one run with one seed. Other factors' levels have seeds of their own: L and B
are independent samples, and the difference gets a Welch interval (each level's own variance,
Welch-Satterthwaite degrees of freedom).

The ratio is the ratio of the means R = mean_L / mean_B, its interval by the delta method:
the standard error of mean_L - R mean_B, divided by |mean_B| (paired: over the per-replicate
values y_L,r - R y_B,r; unpaired: Welch). A baseline mean of 0 has no ratio (NaN).

With ``by``, the factors left out of ``by`` are pooled replicate by replicate, as in a
query: a replicate enters only when every pooled cell has a value in it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from campaign.analysis.breakdown import BREAKDOWN
from campaign.analysis.query import check_confidence, parse_where, positions, select, typed_level
from campaign.analysis.stats import few_replicates_warning, percent, t_quantile
from campaign.analysis.unfinished import carried, written_before
from campaign.errors import CampaignError, ParameterError
from campaign.results.assemble import factors_of, metrics_of

VARIABLES = (
    "baseline_mean",
    "mean",
    "difference",
    "difference_half_width",
    "difference_low",
    "difference_high",
    "ratio",
    "ratio_low",
    "ratio_high",
    "n",
    "n_baseline",
    "dof",
)


def is_paired(dataset: xr.Dataset, factor: str) -> bool:
    """Whether ``factor``'s levels are paired: they share seeds, or break down one task's
    result (a breakdown's dimension, which `as_factor` lists as paired too)."""
    return factor in str(dataset.attrs.get("paired", "")).split()


SHARED_SEEDS = ("share seeds", "common random numbers")
ONE_TASK = ("break down one task's result", "one run, one seed")


def why_paired(dataset: xr.Dataset, factor: str) -> tuple[str, str]:
    """What pairs the levels of a paired ``factor`` (what they do, and what that means), for
    the lines saying how intervals were made: shared seeds, or one task's result broken down
    along the factor."""
    return ONE_TASK if dataset.attrs.get(BREAKDOWN) == factor else SHARED_SEEDS


def compare(
    dataset: xr.Dataset,
    factor: str,
    baseline: Any,
    metric: str,
    by: list[str] | None = None,
    where: list[str] | None = None,
    confidence: float | None = None,
    paired: bool | None = None,
) -> xr.Dataset:
    """Per group of ``by`` (default: every cell of the other factors) and per level of
    ``factor`` other than ``baseline``: the means, their difference and ratio, with intervals.

    ``paired`` defaults to whether the factor's levels share seeds in these results;
    ``paired=False`` on a paired factor gives the Welch interval that ignores the pairing
    (to see what it gains). A paired analysis of a factor that is not paired is refused.
    """
    check_confidence(confidence)
    if confidence is None:
        confidence = float(dataset.attrs.get("confidence", 0.95))
    typed = _check_choice(dataset, factor, baseline, metric)
    factors = factors_of(dataset)
    others = [f for f in factors if f != factor]
    groups = _check_groups(factors, factor, others if by is None else list(by))
    natural = is_paired(dataset, factor)
    if paired is None:
        paired = natural
    elif paired and not natural:
        raise CampaignError(
            f"{factor!r} is not paired in these results (its levels have seeds of their own): "
            "only an unpaired (Welch) comparison is meaningful"
        )
    selection = parse_where(dataset, where or [])
    if factor in selection and typed not in selection[factor]:
        selection[factor] = [typed, *selection[factor]]
    values = select(dataset[metric], selection)
    pooled_dims = [f for f in others if f not in groups]
    if pooled_dims:  # complete replicates only, as a query pools them
        complete = values.notnull().all(pooled_dims)
        values = values.mean(pooled_dims, skipna=True).where(complete)
    at = positions(values[factor].values, [typed])[0]
    base = values.isel({factor: at}, drop=True)
    rest = values.isel({factor: [i for i in range(values.sizes[factor]) if i != at]})
    if rest.sizes[factor] == 0:
        raise ParameterError(f"{{where}} leaves no level of {factor} besides the baseline", "where")
    result = _paired(rest, base, confidence) if paired else _welch(rest, base, confidence)
    alone = _without_pair(rest, base) if paired else 0
    order = [*groups, factor]
    out = xr.Dataset({name: result[name].transpose(*order) for name in VARIABLES})
    units = dataset[metric].attrs.get("units")
    for name in VARIABLES[:6]:  # the means and differences are in the metric's units
        if units:
            out[name].attrs["units"] = units
    out.attrs = {
        "analysis": "comparison",  # what `campaign.table` writes it as
        "metric": metric,
        "factor": factor,
        "baseline": str(typed),
        "paired": int(paired),
        "method": method_text(paired, natural, confidence, why_paired(dataset, factor)),
        "confidence": confidence,
        "pooled": " ".join(pooled_dims),
        "left_out_unpaired": alone,
        **carried(dataset),
    }
    return out


def _without_pair(rest: xr.DataArray, base: xr.DataArray) -> int:
    """Values of a level or of the baseline whose replicate lacks the other's, in rows with
    some pair: a paired row's means leave them out (a row without any pair has its own note),
    so they differ from the cell's means over every value."""
    alone = rest.notnull() ^ base.notnull()
    pairs = (rest.notnull() & base.notnull()).sum("replicate")
    return int(alone.where(pairs > 0, False).sum())


def _check_choice(dataset: xr.Dataset, factor: str, baseline: Any, metric: str) -> Any:
    """The baseline as a level of ``factor`` (its own type), once the factor, the metric and
    the baseline are checked against the results."""
    factors = factors_of(dataset)
    if factor not in factors:
        raise ParameterError(
            f"{{factor}} {factor!r} is not a factor; factors: {', '.join(factors)}", "factor"
        )
    metrics = metrics_of(dataset)
    if metric not in metrics:
        raise ParameterError(
            f"{{metric}} {metric!r} is not in the results; metrics: {', '.join(metrics)}", "metric"
        )
    levels = dataset[factor].values
    typed = typed_level(str(baseline), levels)
    if typed is None:
        raise ParameterError(
            f"{{baseline}} {baseline!r} is not a level of {factor}; levels: "
            f"{', '.join(str(v) for v in levels)}",
            "baseline",
        )
    if len(levels) < 2:
        raise ParameterError(
            f"{{factor}} {factor!r} has one level: nothing to compare it with", "factor"
        )
    return typed


def _check_groups(factors: list[str], factor: str, groups: list[str]) -> list[str]:
    """The ``by`` factors, each checked: a factor, not the compared one, not a variable's
    name."""
    for name in groups:
        if name not in factors:
            raise ParameterError(
                f"{{by}} {name!r} is not a factor; factors: {', '.join(factors)}", "by"
            )
        if name == factor:
            raise ParameterError(
                f"{{by}} {name!r} is the compared factor; give another factor", "by"
            )
        if name in VARIABLES:
            raise ParameterError(
                f"{{by}} {name!r}: a factor with this name cannot be a dimension of the "
                f"comparison, whose variables are {', '.join(VARIABLES)}",
                "by",
            )
    return groups


def method_text(
    paired: bool,
    natural: bool,
    confidence: float,
    why: tuple[str, str] = SHARED_SEEDS,
) -> str:
    """One line saying how the intervals were made (printed above the table); ``why``: what
    pairs the levels of a paired factor (`why_paired`)."""
    level = percent(confidence)
    if paired:
        return (
            f"paired: the levels {why[0]} ({why[1]}), so each interval ({level}, Student t) "
            "is over the per-replicate differences; n counts the pairs"
        )
    if natural:
        return (
            f"unpaired on request: Welch intervals ({level}) from each level's replicates, "
            f"ignoring that the levels {why[0]}"
        )
    return (
        f"unpaired: the levels have seeds of their own, so each interval ({level}) is Welch's, "
        "from each level's replicates"
    )


def _paired(rest: xr.DataArray, base: xr.DataArray, confidence: float) -> dict[str, Any]:
    both = rest.notnull() & base.notnull()
    y, x = rest.where(both), base.where(both)
    n = both.sum("replicate")
    mean_y, mean_x = y.mean("replicate"), x.mean("replicate")
    quantile = xr.apply_ufunc(t_quantile, confidence, n)
    diff_std = _spread(y - x, n)
    half = quantile * diff_std / np.sqrt(n.where(n > 0))
    ratio = (mean_y / mean_x).where(mean_x != 0)
    linear_std = _spread(y - ratio * x, n)
    ratio_half = quantile * linear_std / np.sqrt(n.where(n > 0)) / abs(mean_x)
    return _assemble(mean_x, mean_y, half, ratio, ratio_half, n, n, (n - 1).where(n >= 2))


def _spread(values: xr.DataArray, n: xr.DataArray) -> xr.DataArray:
    """The standard deviation of the ``n`` per-pair ``values``; NaN with fewer than 2, or
    where a pair's value is undefined (inf - inf: both levels infinite in that replicate),
    which skipping would leave out of the spread but not of n."""
    defined = values.count("replicate") == n
    return values.std("replicate", ddof=1).where((n >= 2) & defined)


def _welch(rest: xr.DataArray, base: xr.DataArray, confidence: float) -> dict[str, Any]:
    n_y, n_x = rest.count("replicate"), base.count("replicate")
    mean_y, mean_x = rest.mean("replicate"), base.mean("replicate")
    var_y = rest.var("replicate", ddof=1).where(n_y >= 2) / n_y.where(n_y > 0)
    var_x = base.var("replicate", ddof=1).where(n_x >= 2) / n_x.where(n_x > 0)
    half, dof = _welch_half(var_y, var_x, n_y, n_x, confidence)
    ratio = (mean_y / mean_x).where(mean_x != 0)
    ratio_half, _ = _welch_half(var_y, ratio**2 * var_x, n_y, n_x, confidence)
    return _assemble(mean_x, mean_y, half, ratio, ratio_half / abs(mean_x), n_y, n_x, dof)


def _welch_half(a, b, n_a, n_b, confidence: float):
    """Half-width and Welch-Satterthwaite degrees of freedom of a difference whose two
    independent parts have variances ``a`` and ``b`` (of the means) from n_a, n_b values."""
    total = a + b
    dof = total**2 / (a**2 / (n_a - 1) + b**2 / (n_b - 1))
    dof = xr.where(total == 0, n_a + n_b - 2, dof).where(total.notnull())
    quantile = xr.apply_ufunc(_t_from_dof, confidence, dof)
    return quantile * np.sqrt(total), dof


def _t_from_dof(confidence: float, dof: np.ndarray) -> np.ndarray:
    from scipy import stats as scipy_stats

    dof = np.asarray(dof, dtype=float)
    return scipy_stats.t.ppf(0.5 + confidence / 2, np.where(dof > 0, dof, np.nan))


def _assemble(mean_x, mean_y, half, ratio, ratio_half, n, n_base, dof) -> dict[str, Any]:
    difference = mean_y - mean_x
    return {
        "baseline_mean": mean_x.broadcast_like(mean_y),
        "mean": mean_y,
        "difference": difference,
        "difference_half_width": half,
        "difference_low": difference - half,
        "difference_high": difference + half,
        "ratio": ratio,
        "ratio_low": ratio - ratio_half,
        "ratio_high": ratio + ratio_half,
        "n": n.astype("int64"),
        "n_baseline": n_base.broadcast_like(n).astype("int64"),
        "dof": dof.astype(float),
    }


def comparison_table(result: xr.Dataset) -> pd.DataFrame:
    """One row per group and level: the factors' levels, then the variables."""
    dims = list(result["difference"].dims)
    frame = result[list(VARIABLES)].to_dataframe().reset_index()
    return frame[[*dims, *VARIABLES]]


def notes(result: xr.Dataset) -> list[str]:
    """Warnings a reader of the comparison needs: too few replicates, a difference on one
    replicate (without an interval), no ratio, nothing to compare; results.nc behind its
    ledger."""
    lines = written_before(result.attrs)
    n = np.minimum(result["n"].values, result["n_baseline"].values)  # Welch: both levels'
    shown = np.isfinite(result["difference_half_width"].values)  # a row with no interval: none
    few = few_replicates_warning(int(n[shown].min())) if shown.any() else None
    if few:
        lines.append(few)
    single = int((n == 1).sum())  # one pair, or one value of the level or the baseline
    if single:
        lines.append(
            f"warning: {single} row(s) rest on 1 replicate, without an interval; add replicates"
        )
    no_ratio = int((result["baseline_mean"] == 0).sum())
    if no_ratio:
        lines.append(f"note: {no_ratio} row(s) have a baseline mean of 0: no ratio (nan)")
    empty = int(np.count_nonzero(n == 0))
    if empty:
        what = (
            "no replicate where both the level and the baseline have a value"
            if result.attrs.get("paired")
            else "no value of the level or of the baseline"
        )
        lines.append(
            f"note: {empty} row(s) have {what} (failed, missing or NaN): nothing to compare (nan)"
        )
    lines += unpaired_note(result)
    together = int(np.count_nonzero(shown))
    if together > 1:
        lines.append(bonferroni_note(together, float(result.attrs.get("confidence", 0.95))))
    return lines


def unpaired_note(result: xr.Dataset) -> list[str]:
    """The values a paired comparison left out, their pair lacking (none: [])."""
    alone = int(result.attrs.get("left_out_unpaired", 0))
    if not alone:
        return []
    return [
        f"note: {alone} value{'s' if alone > 1 else ''} left out, "
        f"{'their replicates' if alone > 1 else 'its replicate'} lacking the value of the "
        "level or of the baseline (failed, missing or NaN): each row's means are over its "
        "n pairs, not over every value of the cell"
    ]


def bonferroni_note(intervals: int, confidence: float) -> str:
    """That ``intervals`` intervals at ``confidence`` each do not all cover at that level at
    once, and the level that makes them do (Bonferroni, its risk rounded down)."""
    risk = (1 - confidence) / intervals
    place = math.floor(math.log10(risk)) - 1  # two significant digits, rounded down
    each = math.floor(risk / 10.0**place + 1e-9) * 10.0**place  # 0.05 / 5: 0.010, not 0.0099
    advised = f"{1 - each:.{-place}f}".rstrip("0")
    level = percent(confidence)
    return (
        f"note: the {intervals} rows' intervals are each at {level} on their own; for all "
        f"{intervals} at once at {level}, use --confidence {advised} (Bonferroni)"
    )
