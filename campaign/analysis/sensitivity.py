"""Which sampled factors drive a metric: sensitivity indices over a design of points.

The inputs are the factors drawn over ranges (the coordinates along ``point``); the output
of a point is the mean of its replicates that have a value, so the replicates' noise is
averaged out before any index is computed, and how much of the variance of those means
the noise still makes is stated (`noise_share`). The methods:

- ``sobol`` (a Saltelli design): first-order and total Sobol indices, second-order ones when
  the sample was drawn for them (SALib's ``analyze.sobol``);
- ``morris`` (a Morris design): elementary effects mu, mu*, sigma (``analyze.morris``), in
  units of the metric per whole range of the factor (SALib divides each change by its step
  as a fraction of the range);
- ``delta`` and ``rbd_fast`` (any design of points): Borgonovo's delta and first-order
  indices, and RBD-FAST first-order indices, from the points as a plain sample;
- ``regression`` (any design of points): standardized regression coefficients with
  Student-t intervals and R^2 of a least-squares fit of the point means on the inputs (a
  log-scaled range enters as log(value)).

Intervals of the SALib methods are theirs: a bootstrap of ``resamples`` resamples, the
half-width z x the resamples' standard deviation at ``confidence``, seeded from the
campaign's base seed so the same results give the same table (`bootstrap_seed`). delta is
slow (a kernel density per bin and resample): fewer resamples make it quicker.

An output transform (``transform="log"``) analyses log(metric) instead: each replicate's log,
then their mean per point (a metric spanning decades, whose variance its largest values would
otherwise make alone); values <= 0 are refused in one line.

Too few points show: delta refuses fewer than `DELTA_POINTS`; Sobol indices whose intervals
are wider than the largest index, or an S1 above its ST beyond its interval, come with a
warning saying how many base points would do (`sobol_warnings`).

Failed points: a point none of whose replicates has a value. Sobol and Morris estimators
pair each point with others of its block (a Saltelli block, a trajectory), so they refuse
results with such points and name them; delta, RBD-FAST and the regression take any sample
and leave them out, saying how many.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from campaign.analysis.bootstrap_seed import bootstrap_seed, global_generator_kept
from campaign.analysis.point_outputs import PointOutputs, averaged_note, point_outputs
from campaign.analysis.regression import regression
from campaign.analysis.sensitivity_checks import (
    DELTA_POINTS,
    check_metric,
    check_outputs,
    check_resamples,
    sample_warnings,
    sobol_warnings,
)
from campaign.analysis.stats import percent
from campaign.design import points as designs
from campaign.errors import BadValue, ParameterError

SOBOL, MORRIS, DELTA, RBD_FAST, REGRESSION = "sobol", "morris", "delta", "rbd_fast", "regression"
METHODS = (SOBOL, MORRIS, DELTA, RBD_FAST, REGRESSION)
DEFAULT_METHOD = {
    designs.SALTELLI: SOBOL,
    designs.MORRIS: MORRIS,
    designs.LATIN_HYPERCUBE: REGRESSION,
    designs.SOBOL: REGRESSION,
}
STRUCTURED = {SOBOL: designs.SALTELLI, MORRIS: designs.MORRIS}  # need their own sample
COLUMNS = {
    SOBOL: ["S1", "S1_conf", "ST", "ST_conf"],
    MORRIS: ["mu", "mu_star", "mu_star_conf", "sigma"],
    DELTA: ["delta", "delta_conf", "S1", "S1_conf"],
    RBD_FAST: ["S1", "S1_conf"],
    REGRESSION: ["SRC", "SRC_conf"],
}
INFLUENCE = {  # the column that ranks the factors by influence, and what it is in words
    SOBOL: ("ST", "total Sobol index ST"),
    MORRIS: ("mu_star", "mu* (mean |elementary effect|)"),
    DELTA: ("delta", "delta"),
    RBD_FAST: ("S1", "first-order index S1"),
    REGRESSION: ("SRC", "|SRC| (standardized regression coefficient)"),
}
RESAMPLES = 1000
HARMONICS = 10  # RBD-FAST's interference factor M (SALib's default)


@dataclass(frozen=True)
class Sensitivity:
    """One metric's sensitivity table: a row per factor, the method's columns."""

    metric: str
    method: str
    design: str
    table: pd.DataFrame
    confidence: float
    points: int  # points analysed
    replicates: int
    valued: tuple[int, int]  # the fewest and the most replicates with a value of a point analysed
    left_out: list[int]  # points left out (no replicate with a value)
    noise_share: float
    r_squared: float = float("nan")
    second_order: pd.DataFrame | None = None
    resamples: int = RESAMPLES
    notes: list[str] = field(default_factory=list)
    transform: str | None = None  # the output's transform: None, or "log"
    warnings: list[str] = field(default_factory=list)  # what makes the indices unreliable


def sensitivity(
    dataset: xr.Dataset,
    metric: str,
    method: str | None = None,
    where: list[str] | None = None,
    confidence: float | None = None,
    resamples: int | None = None,
    transform: str | None = None,
) -> Sensitivity:
    """The sensitivity of ``metric`` (of its log with ``transform="log"``) to the factors drawn
    over ranges (see the module); ``resamples``: of a SALib method's bootstrap (default
    `RESAMPLES`), refused with the regression, whose intervals are Student t."""
    design = str(dataset.attrs.get("design", designs.FULL))
    method, confidence = checked_options(dataset, design, metric, method, confidence, resamples)
    resamples = RESAMPLES if resamples is None else resamples
    outputs = point_outputs(dataset, metric, where, method in STRUCTURED, transform)
    failed = [int(i) for i in np.flatnonzero(outputs.counts == 0)]
    if failed and method in STRUCTURED:
        raise ParameterError(
            f"{method} indices need every point of the {design} sample (each is paired with "
            f"the others of its block); {len(failed)} points have no value (every replicate "
            f"failed or is NaN): point {', '.join(map(str, failed[:20]))}"
            f"{', ...' if len(failed) > 20 else ''}; rerun them, or use method delta, rbd_fast "
            "or regression, which leave them out"
        )
    seed = int(dataset.attrs.get("base_seed", 0))
    kept = outputs.counts > 0
    check_outputs(outputs, kept, method, metric)
    common = dict(
        metric=metric,
        method=method,
        design=design,
        confidence=confidence,
        points=int(kept.sum()),
        replicates=outputs.replicates,
        valued=(int(outputs.counts[kept].min()), int(outputs.counts[kept].max())),
        left_out=failed,
        noise_share=outputs.noise_share,
        resamples=resamples,
        transform=transform,
    )
    problem = {
        "num_vars": len(outputs.names),
        "names": outputs.names,
        "bounds": [[0.0, 1.0]] * len(outputs.names),
    }
    if method == SOBOL:
        return sobol_indices(dataset, outputs, problem, seed, common)
    if method == MORRIS:
        return morris_effects(dataset, outputs, problem, seed, common)
    if method == REGRESSION:
        table, r_squared = regression(outputs, kept, confidence)
        return Sensitivity(table=table, r_squared=r_squared, **common)
    table = sample_indices(method, outputs, problem, kept, seed, common)
    return Sensitivity(table=table, warnings=sample_warnings(method, table), **common)


def checked_options(
    dataset: xr.Dataset,
    design: str,
    metric: str,
    method: str | None,
    confidence: float | None,
    resamples: int | None,
) -> tuple[str, float]:
    """The method and confidence `sensitivity` uses, each bad option refused in one line."""
    if design not in DEFAULT_METHOD:
        raise ParameterError(
            f"sensitivity indices need a design of points over ranges (latin_hypercube, sobol, "
            f"saltelli, morris); these results are of a {design} design: use effects instead",
        )
    method = method or DEFAULT_METHOD[design]
    if method not in METHODS:
        raise BadValue("method", method, f"is not a method; methods: {', '.join(METHODS)}")
    if method in STRUCTURED and design != STRUCTURED[method]:
        raise ParameterError(
            f"{{method}} {method!r} needs a {STRUCTURED[method]} design (its estimators pair the "
            f"points of its blocks); these results are of a {design} design: use "
            f"{', '.join(m for m in METHODS if m not in STRUCTURED)}",
            "method",
        )
    check_metric(dataset, metric)
    if confidence is None:
        confidence = float(dataset.attrs.get("confidence", 0.95))
    if not 0 < confidence < 1:
        raise BadValue("confidence", confidence, "is not allowed; use a number between 0 and 1")
    check_resamples(resamples, method)
    return method, confidence


def sobol_indices(dataset, outputs, problem, seed, common) -> Sensitivity:
    from SALib.analyze import sobol

    second = dataset.attrs.get("design_second_order") == "true"
    check_saltelli_blocks(outputs, second)
    with warnings.catch_warnings(), global_generator_kept():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = sobol.analyze(
            problem,
            outputs.means,
            calc_second_order=second,
            num_resamples=common["resamples"],
            conf_level=common["confidence"],
            seed=bootstrap_seed(seed),
        )
    table = factor_table(outputs.names, result, COLUMNS[SOBOL])
    pairs = None
    if second:
        rows = [
            (a, b, result["S2"][i, j], result["S2_conf"][i, j])
            for i, a in enumerate(outputs.names)
            for j, b in enumerate(outputs.names)
            if j > i
        ]
        pairs = pd.DataFrame(rows, columns=["factor", "with", "S2", "S2_conf"])
    per_base = 2 * len(outputs.names) + 2 if second else len(outputs.names) + 2
    found = sobol_warnings(table, int(dataset.attrs["design_samples"]), per_base)
    return Sensitivity(table=table, second_order=pairs, warnings=found, **common)


def check_saltelli_blocks(outputs: PointOutputs, second_order: bool) -> None:
    """Refuse points that are not Saltelli blocks over the factors in this order: in each
    block, the point after the first (A) changes factor j alone at step j + 1."""
    k = len(outputs.names)
    step = 2 * k + 2 if second_order else k + 2
    if len(outputs.values) % step:
        raise ParameterError(
            f"{len(outputs.values)} points are not whole Saltelli blocks of {step} points"
        )
    blocks = outputs.values.reshape(-1, step, k)
    for j, name in enumerate(outputs.names):
        moved = blocks[:, 1 + j] != blocks[:, 0]
        moved[:, j] = False
        if moved.any():
            raise ParameterError(
                f"the points are not a Saltelli sample over {', '.join(outputs.names)}: the "
                f"step of {name} moves other factors too"
            )


def morris_effects(dataset, outputs, problem, seed, common) -> Sensitivity:
    from SALib.analyze import morris

    levels = int(dataset.attrs["design_levels"])
    unit = morris_unit_points(dataset, outputs)
    result = morris.analyze(
        problem,
        unit,
        outputs.means,
        num_resamples=common["resamples"],
        conf_level=common["confidence"],
        num_levels=levels,
        seed=seed,
    )
    return Sensitivity(table=factor_table(outputs.names, result, COLUMNS[MORRIS]), **common)


def morris_unit_points(dataset: xr.Dataset, outputs: PointOutputs) -> np.ndarray:
    """The trajectories on Morris's grid in [0, 1], drawn again from the design's seed and
    checked against the stored values (an integer range's values are not on the grid)."""
    unit = designs.morris_points(
        int(dataset.attrs["design_samples"]),
        len(outputs.names),
        int(dataset.attrs["design_levels"]),
        int(dataset.attrs["base_seed"]),
    )
    for j, name in enumerate(outputs.names):
        attrs = dataset[name].attrs
        integer = dataset[name].dtype.kind in "iu"
        drawn = designs.scale(unit[:, j], *attrs["valid_range"], outputs.log[j], integer)
        if not np.allclose(drawn, outputs.values[:, j], rtol=1e-12, atol=0):
            raise ParameterError(
                f"the Morris trajectories drawn again from seed {dataset.attrs['base_seed']} "
                f"are not the stored points of {name} (another SALib or numpy release?)"
            )
    return unit


def sample_indices(method, outputs, problem, kept, seed, common) -> pd.DataFrame:
    """delta or RBD-FAST over the points that have a value, as a plain sample."""
    unit, means = outputs.unit[kept], outputs.means[kept]
    if method == DELTA and len(means) < DELTA_POINTS:
        raise ParameterError(
            f"delta needs at least {DELTA_POINTS} points (SALib's estimator cuts each factor's "
            "range into classes of at least 10 points, and needs two); "
            f"{len(means)} points have a value: draw more points, or use method regression"
        )
    if method == RBD_FAST and len(means) <= 4 * HARMONICS:
        raise ParameterError(
            f"rbd_fast needs more than {4 * HARMONICS} points (its bootstrap takes halves of the "
            f"sample, each more than twice its {HARMONICS} harmonics); {len(means)} points have "
            "a value: draw more points, or use method delta or regression"
        )
    result = quietly(method, problem, unit, means, seed, common)
    if "delta_raw" in result:  # SALib 1.6 names Borgonovo's estimator delta_raw
        result["delta"], result["delta_conf"] = result["delta_raw"], result["delta_raw_conf"]
    return factor_table(outputs.names, result, COLUMNS[method])


def quietly(method, problem, unit, means, seed, common) -> dict:
    """SALib's delta or RBD-FAST analysis without its notices on bins: they come as warnings,
    and delta sets a filter that shows each once and a format of its own, process-wide; here
    they are recorded (and dropped) and the format is restored."""
    from SALib.analyze import delta, rbd_fast

    formatter = warnings.formatwarning
    try:
        with warnings.catch_warnings(record=True), global_generator_kept():
            if method == DELTA:
                return delta.analyze(
                    problem,
                    unit,
                    means,
                    num_resamples=common["resamples"],
                    conf_level=common["confidence"],
                    seed=bootstrap_seed(seed),
                )
            return rbd_fast.analyze(
                problem,
                unit,
                means,
                M=HARMONICS,
                num_resamples=common["resamples"],
                conf_level=common["confidence"],
                seed=seed,
            )
    finally:
        warnings.formatwarning = formatter


def factor_table(names: list[str], result, columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame({"factor": names})
    for column in columns:
        frame[column] = np.asarray(result[column], dtype=float)
    return frame


def most_influential(result: Sensitivity) -> tuple[str, str] | None:
    """The factor of the largest index by the method's ranking column (`INFLUENCE`; its
    absolute value), with that column in words; None when no index is defined."""
    column, words = INFLUENCE[result.method]
    sizes = result.table[column].abs()
    if not sizes.notna().any():
        return None
    return str(result.table["factor"][sizes.idxmax()]), words


def describe(result: Sensitivity) -> tuple[str, list[str]]:
    """The title and the notes of a sensitivity table, in words."""
    level = percent(result.confidence)
    what = {
        SOBOL: "Sobol indices (S1 first order, ST total)",
        MORRIS: "Morris elementary effects (mu, mu* the mean of |effect|, sigma)",
        DELTA: "Borgonovo's delta and first-order indices (S1)",
        RBD_FAST: "RBD-FAST first-order indices (S1)",
        REGRESSION: "standardized regression coefficients (SRC)",
    }[result.method]
    output = f"log({result.metric})" if result.transform else result.metric
    title = f"{output}: {what}, {result.design} design of {result.points} points"
    notes = list(result.warnings)
    if result.method == REGRESSION:
        notes.append(
            f"SRC_conf: half-width of the {level} Student-t interval; R^2 = "
            f"{result.r_squared:.4g} (what a linear model of the inputs explains; the SRCs "
            "say little when it is far below 1)"
        )
    else:
        notes.append(
            f"*_conf: half-width of the {level} bootstrap interval ({result.resamples} resamples)"
        )
    note = averaged_note(result.replicates, result.valued, result.noise_share)
    notes += [note] if note else []
    if result.left_out:
        shown = ", ".join(map(str, result.left_out[:20]))
        notes.append(
            f"{len(result.left_out)} points left out (no replicate has a value): point "
            f"{shown}{', ...' if len(result.left_out) > 20 else ''}; the indices are those of "
            "the other points, unbiased only if failing does not depend on the inputs"
        )
    return title, notes
