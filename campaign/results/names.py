"""What a results file can hold: the names its layout fixes and the names metrics may take.

Beside one variable per metric, a results file has variables whose names the layout fixes
(``status``, ``seed``, the ``failure_*`` table, ...) and, per metric, summary variables named
by a suffix (``<metric>_mean``, ...). A factor or metric whose name collides with one of them,
or that netCDF cannot store, would make the file unwritable after every task ran: these
checks refuse such names before anything runs, or fail the task that returned them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

LAYOUT_NAMES = (
    "replicate",
    "point",
    "status",
    "seed",
    "failure",
    "failure_key",
    "failure_cell",
    "failure_replicate",
    "failure_error",
    "precision_met",
    "precision_state",
    "precision_replicates",
    "selection_replicates",
    "selection_state",
    "selection_stage",
)
SUMMARY_SUFFIXES = ("_mean", "_std", "_n", "_nan", "_absent", "_ci_low", "_ci_high")
METRIC_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+@-]*$")
METRIC_RULE = "letters, digits, '_', '.', '-', '+' and '@', starting with a letter or digit"


def metric_name_problem(name: Any) -> str | None:
    """Why ``name`` cannot name a metric in a results file; None when it can."""
    if not isinstance(name, str):
        return f"metric names must be strings, got {name!r} ({type(name).__name__})"
    if not METRIC_PATTERN.match(name):
        return f"metric name {name!r} is not allowed; use {METRIC_RULE}"
    if name in LAYOUT_NAMES:
        return (
            f"metric name {name!r} is reserved by the results layout; reserved names: "
            f"{', '.join(LAYOUT_NAMES)}"
        )
    return None


def name_clashes(factors: Iterable[str], metrics: Iterable[str]) -> dict[str, str]:
    """Metric names that a results file cannot hold beside the others, with the reason.

    A metric clashes when it has a factor's name or the name of another metric's summary
    variable (``x_mean`` beside ``x``); the metric that takes the other's name is blamed.
    """
    factors = set(factors)
    metrics = list(dict.fromkeys(metrics))
    kept = set(metrics)
    clashes: dict[str, str] = {}
    for metric in metrics:
        if metric in factors:
            clashes[metric] = f"metric {metric!r} has the name of factor {metric!r}"
    for metric in metrics:
        for suffix in SUMMARY_SUFFIXES:
            derived = metric + suffix
            owner = "factor" if derived in factors else "metric" if derived in kept else None
            if owner is not None:
                clashes.setdefault(
                    derived,
                    f"{owner} {derived!r} has the name of a summary variable of metric {metric!r}",
                )
    return clashes


SAMPLE_MARK = "@"
"""Joins a sample's name and one of its stored entries: ``wait@q95``, ``wait@n``."""
SAMPLE_ENTRY = re.compile(r"@(n|q[0-9]+)$")
"""How a sample's stored entries end: a returned metric named so would be taken for one."""
QUANTILE_GRID = np.arange(101) / 100
"""The probabilities at which a sample is kept: every whole percentile, 0 (the minimum) to 100
(the maximum). A task's sample is stored as its quantiles there (`sample_quantiles`) and its
size: about 3 kB per sample in a ledger line whatever the sample's size. Percentiles on this
grid are exact; a CDF drawn from them is within 1/100 (plus 1/size) in probability of the
sample's own."""


def sample_quantiles(sample: np.ndarray) -> np.ndarray:
    """A sample's quantiles on `QUANTILE_GRID`: NumPy's default (linear interpolation between
    the order statistics x[i] and x[i+1] around the rank h = (n - 1) p), extended to samples
    holding -inf or +inf.

    NumPy's interpolation turns a rank next to an infinite value into NaN (``inf - inf``,
    ``0 * inf``), which would read as undefined. Here: a rank on an order statistic gives that
    value; a rank between two finite ones, NumPy's interpolation (so a finite sample's
    quantiles are NumPy's, bit for bit); a rank between a finite value and an infinite one, the
    infinite one (the limit of the interpolation: the sample's p100 is +inf when it holds
    +inf); a rank between -inf and +inf, the nearer of the two, and NaN exactly halfway, where
    no value is defined. The sample must hold no NaN.
    """
    if not sample.size:
        return np.full(QUANTILE_GRID.size, np.nan)
    with np.errstate(invalid="ignore"):
        quantiles = np.quantile(sample, QUANTILE_GRID)
    if np.isfinite(sample).all():
        return quantiles
    ordered = np.sort(sample)
    rank = (sample.size - 1) * QUANTILE_GRID  # NumPy's own virtual index
    # its order statistic, in integers: in floats (n - 1) p misses whole ranks (25 x 0.56 is
    # 14.000000000000002), which next to an infinite value gave it instead of x[14]
    steps = (sample.size - 1) * np.arange(QUANTILE_GRID.size)  # 100 (n - 1) p, exactly
    low = steps // (QUANTILE_GRID.size - 1)
    below, above = ordered[low], ordered[np.minimum(low + 1, sample.size - 1)]
    fraction = np.where(steps % (QUANTILE_GRID.size - 1) == 0, 0.0, rank - low)
    nearer = np.where(fraction < 0.5, below, np.where(fraction > 0.5, above, np.nan))
    infinite = np.where(
        np.isinf(below) & np.isinf(above) & (below != above),
        nearer,
        np.where(np.isinf(above), above, below),  # the infinite neighbour
    )
    beside_infinity = ~(np.isfinite(below) & np.isfinite(above))
    quantiles = np.where(beside_infinity, infinite, quantiles)
    return np.where(fraction == 0, below, quantiles)


def quantile_label(probability: float) -> str:
    return f"q{round(probability * 100)}"


def sample_entries(name: str, value: Any) -> dict[str, float]:
    """A 1-D sample as the scalars a record stores: its size and its quantiles on the grid."""
    try:
        sample = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"metric {name!r} is a sequence that is not all numbers") from None
    if sample.ndim != 1:
        raise TypeError(
            f"metric {name!r} has {sample.ndim} dimensions; a sample is a 1-D array of numbers"
        )
    if np.isnan(sample).any():
        raise ValueError(
            f"sample {name!r} holds NaN; a sample holds the values that are defined only"
        )
    entries = {f"{name}{SAMPLE_MARK}n": float(sample.size)}
    for probability, quantile in zip(QUANTILE_GRID, sample_quantiles(sample)):
        entries[f"{name}{SAMPLE_MARK}{quantile_label(probability)}"] = float(quantile)
    return entries


BREAKDOWN_ENTRY = re.compile(r"^(?P<metric>.+)@(?P<dimension>[a-z][a-z0-9_]*)=(?P<label>.+)$")
"""A breakdown's entry in a record: ``mean_wait@job_class=narrow_short``."""


def breakdown_entries(dimension: str, value: Mapping) -> dict[str, float]:
    """A breakdown ``{label: {metric: number}}`` as the scalars a record stores."""
    entries = {}
    for label, metrics in value.items():
        for part, what in ((label, "label"), (dimension, "dimension")):
            if not isinstance(part, str) or not METRIC_PATTERN.match(part) or "=" in part:
                raise ValueError(f"breakdown {dimension!r}: {what} {part!r} is not allowed")
        if not isinstance(metrics, Mapping):
            raise TypeError(
                f"breakdown {dimension!r}: label {label!r} must map metric names to numbers, "
                f"got {metrics!r}"
            )
        for metric, number in metrics.items():
            problem = metric_name_problem(metric)
            if problem is not None:
                raise ValueError(f"breakdown {dimension!r}: {problem}")
            entry = f"{metric}{SAMPLE_MARK}{dimension}={label}"
            entries[entry] = _as_float(entry, number)
    return entries


def entry_owner(name: str) -> str:
    """The name a spec's ``metrics:`` keeps a record's entry by: a sample's name for its
    entries (``wait`` for ``wait@q95``), a breakdown's dimension for its entries."""
    match = BREAKDOWN_ENTRY.match(name)
    if match:
        return match["dimension"]
    return name.split(SAMPLE_MARK)[0]


def is_sample(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.ndim > 0 or isinstance(value, list | tuple)


def sample_names(names: Iterable[str]) -> list[str]:
    """The samples whose entries are among ``names`` (``wait`` for ``wait@n``), in order."""
    mark = SAMPLE_MARK + "n"
    return [name[: -len(mark)] for name in names if name.endswith(mark)]


def metric_values(raw: Any) -> dict[str, float]:
    """A model's result as ``{metric: float}``, or a clear error for what a file cannot hold.

    NaN is a legitimate value (an undefined metric); no metrics at all, a name that is not
    a string or that the layout reserves, a value that is not a number, or two names that
    clash are errors of the task. A 1-D array (or list) of numbers is a sample: it is kept as
    its size and quantiles (`sample_entries`); a mapping is a breakdown named by its dimension,
    ``{label: {metric: number}}`` (`breakdown_entries`).
    """
    plain = _plain_floats(raw) if type(raw) is dict else None
    if plain is not None and tuple(raw) in _PLAIN_NAMES:
        return plain
    if not isinstance(raw, Mapping):
        raise TypeError(f"the model returned {type(raw).__name__}, not a mapping metric: value")
    if not raw:
        raise ValueError("the model returned no metrics")
    values = {}
    for name, value in raw.items():
        problem = metric_name_problem(name)
        if problem is None and SAMPLE_ENTRY.search(name):
            problem = (
                f"metric name {name!r} has the form of a sample's stored entry (NAME@n, "
                "NAME@q<k>); rename it"
            )
        if problem is not None:
            raise ValueError(problem)
        if is_sample(value):
            values.update(sample_entries(name, value))
        elif isinstance(value, Mapping):
            values.update(breakdown_entries(name, value))
        else:
            values[name] = _as_float(name, value)
    clashes = name_clashes((), values)
    if clashes:
        raise ValueError(next(iter(clashes.values())))
    _check_derived_names(values)
    if plain is not None and len(_PLAIN_NAMES) < 256:
        _PLAIN_NAMES.add(tuple(raw))
    return values


_PLAIN_NAMES: set[tuple[str, ...]] = set()
"""Tuples of metric names already checked (the same every task of a model, as a rule): a
result of plain numbers under one of them needs no second look at its names (a task of a
millisecond spent a third of its overhead here)."""


def _plain_floats(raw: dict) -> dict[str, float] | None:
    """Every value as a float when all are plain floats or exactly stored ints; else None."""
    values = {}
    for name, value in raw.items():
        kind = type(value)
        if kind is float:
            values[name] = value
        elif kind is int and -FLOAT_EXACT_INTEGERS <= value <= FLOAT_EXACT_INTEGERS:
            values[name] = float(value)
        else:
            return None
    return values


DERIVED = re.compile(r"^(?P<owner>.+)_(count|p\d+)$")


def _check_derived_names(values: Mapping[str, float]) -> None:
    """Refuse a scalar named like a sample's derived metric (``wait_p95`` beside a sample
    ``wait``) or a breakdown's variable (``mean_wait_by_job_class``): one would overwrite the
    other in the results file."""
    samples = set(sample_names(values))
    breakdowns = set()
    for name in values:
        match = BREAKDOWN_ENTRY.match(name)
        if match:
            breakdowns.add(f"{match['metric']}_by_{match['dimension']}")
    for name in values:
        if SAMPLE_MARK in name:
            continue
        match = DERIVED.match(name)
        if match and match["owner"] in samples:
            raise ValueError(
                f"metric {name!r} has the name of a metric results derive from the sample "
                f"{match['owner']!r} (its size or a percentile); rename one of them"
            )
        if name in breakdowns:
            raise ValueError(
                f"metric {name!r} has the name results give a breakdown's metric; rename it"
            )


FLOAT_EXACT_INTEGERS = 2**53  # float64 holds every integer up to this size, and not all beyond


def _as_float(name: str, value: Any) -> float:
    """The value as the float64 a results file stores, or an error for what it cannot hold
    exactly: booleans (``bool`` and ``numpy.bool_`` alike: a metric is a number, not a
    yes/no), complex numbers, integers beyond float64's exact range (``|v| > 2**53`` that a
    float64 would round)."""
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        value = value.item()  # a NumPy scalar as the Python number it holds
    if isinstance(value, bool):
        raise TypeError(
            f"metric {name!r} is a boolean ({value!r}), not a number; return 1.0 or 0.0 "
            "(the mean is then the share of replicates where it holds)"
        )
    if isinstance(value, complex):
        raise TypeError(
            f"metric {name!r} is a complex number ({value!r}); a metric is a real number: "
            "return its real part, imaginary part or modulus as metrics of their own"
        )
    if isinstance(value, int) and abs(value) > FLOAT_EXACT_INTEGERS:
        problem = _inexact_integer(value)
        if problem:
            raise ValueError(
                f"metric {name!r} is the integer {value}, which float64 (how results store "
                f"metrics) cannot hold exactly: {problem}; every integer up to 2**53 is "
                "exact: return a float if the rounding is acceptable"
            )
    if not (isinstance(value, int | float) or hasattr(value, "__float__")):
        raise TypeError(f"metric {name!r} is not a number: {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError) as error:
        raise TypeError(f"metric {name!r} is not a number: {value!r} ({error})") from None


def _inexact_integer(value: int) -> str | None:
    """How float64 would change an integer, or None when it holds it exactly."""
    try:
        stored = float(value)
    except OverflowError:
        return "it is beyond float64's range"
    return None if stored == value else f"it would be rounded to {int(stored)}"


def documented_name(name: str, documented: Mapping[str, Any]) -> str | None:
    """The entry of a model's ``metrics`` table that documents ``name`` (``{k}`` patterns ok)."""
    if name in documented:
        return name
    for pattern in documented:
        if "{" in pattern:
            regex = re.sub(r"\\\{[a-z_]+\\\}", r"(\\d+)", re.escape(pattern))
            if re.fullmatch(regex, name):
                return pattern
    return None


def level_problem(level: Any, numbers_are_floats: bool) -> str | None:
    """Why a factor level cannot be stored as a netCDF coordinate value; None when it can.

    Integers are stored as 64-bit integers, or as floats beside float levels; strings as
    UTF-8 text, which cannot hold a NUL character.
    """
    if isinstance(level, bool):
        return None
    if isinstance(level, int):
        if not -(2**63) <= level < 2**63:
            return "does not fit a 64-bit integer"
        if numbers_are_floats and float(level) != level:
            return "is not exactly representable as a float beside the float levels"
        return None
    if isinstance(level, float):
        return None if not math.isnan(level) else "is NaN"
    if isinstance(level, str):
        if "\x00" in level:
            return "contains a NUL character"
        try:
            level.encode("utf-8")
        except UnicodeEncodeError:
            return "is not valid UTF-8 text"
    return None
