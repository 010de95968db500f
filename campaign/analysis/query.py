"""Select, group and tabulate a results Dataset: mean and confidence interval per group."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from campaign.analysis.stats import pooled
from campaign.errors import ParameterError
from campaign.results.assemble import factors_of, metric_arrays, metrics_of
from campaign.results.status import STATUS_OK

COLUMN_STATS = ("mean", "half_width", "ci_low", "ci_high", "n", "nan", "left_out")


def check_confidence(confidence: float | None) -> None:
    """Refuse a confidence level no interval has (None: the results' own level)."""
    if confidence is not None and not 0 < confidence < 1:
        raise ParameterError(
            f"{{confidence}} {confidence} is not allowed; use a number between 0 and 1 "
            "(exclusive), such as 0.95",
            "confidence",
        )


def parse_where(
    dataset: xr.Dataset, clauses: list[str] | Mapping[str, Any]
) -> dict[str, list[Any]]:
    """``factor=level[,level...]`` clauses -> selection, with levels typed like the coordinate.

    The levels are comma-separated with CSV quoting: a level holding a comma or a double quote
    is written in double quotes, its quotes doubled (``name="a,b",c``). From Python, a mapping
    ``{factor: level or [levels]}`` says the same without quoting."""
    if isinstance(clauses, Mapping):
        return where_mapping(dataset, clauses)
    selection: dict[str, list[Any]] = {}
    factors = factors_of(dataset)
    for clause in clauses:
        name, sep, text = clause.partition("=")
        name = name.strip()
        if not sep or not text:
            raise ParameterError(
                f"{{where}} {clause!r}: write factor=level (or factor=a,b)", "where"
            )
        if name not in factors:
            raise ParameterError(
                f"{{where}} {clause!r}: unknown factor {name!r}; factors: {', '.join(factors)}",
                "where",
            )
        coordinate = dataset.variables[name].values
        levels = []
        for item in where_items(clause, text):
            level = typed_level(item, coordinate)
            if level is None:
                level = typed_level(item.strip(), coordinate)
            if level is None:
                raise ParameterError(
                    f"{{where}} {clause!r}: {item.strip()!r} is not a level of {name}; levels: "
                    f"{quoted_levels(coordinate)}{_comma_hint(name, coordinate)}",
                    "where",
                )
            if level not in levels:
                levels.append(level)
        selection[name] = levels
    return selection


def where_mapping(dataset: xr.Dataset, where: Mapping[str, Any]) -> dict[str, list[Any]]:
    """``{factor: level or [levels]}`` -> selection, each level typed like the coordinate."""
    factors = factors_of(dataset)
    selection: dict[str, list[Any]] = {}
    for name, given in where.items():
        if name not in factors:
            raise ParameterError(
                f"{{where}} {{{name!r}: ...}}: unknown factor {name!r}; factors: "
                f"{', '.join(factors)}",
                "where",
            )
        coordinate = dataset.variables[name].values
        levels = []
        for item in given if isinstance(given, list | tuple) else [given]:
            level = typed_level(str(item), coordinate)
            if level is None:
                raise ParameterError(
                    f"{{where}} {{{name!r}: {item!r}}}: {item!r} is not a level of {name}; "
                    f"levels: {', '.join(str(v) for v in coordinate)}",
                    "where",
                )
            if level not in levels:
                levels.append(level)
        selection[name] = levels
    return selection


def where_items(clause: str, text: str) -> list[str]:
    """The comma-separated levels of a ``where`` clause, read as one CSV line."""
    try:
        return next(csv.reader([text], skipinitialspace=True, strict=True))
    except csv.Error as error:
        raise ParameterError(
            f"{{where}} {clause!r}: {error}; write levels as a,b and a level holding a comma "
            'or a quote in double quotes, its quotes doubled: name="a,b",c',
            "where",
        ) from None


def quoted_levels(coordinate: np.ndarray) -> str:
    """The levels as ``where`` takes them: comma-separated, CSV-quoted where needed."""
    return ", ".join(_quote(str(v)) for v in coordinate)


def _quote(text: str) -> str:
    if any(c in text for c in ',"\n\r') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


def _comma_hint(name: str, coordinate: np.ndarray) -> str:
    with_comma = [str(v) for v in coordinate if "," in str(v)]
    if not with_comma:
        return ""
    example = f"{name}={_quote(with_comma[0])}"
    return f" (a level holding a comma goes in double quotes: {{where}} '{example}')"


def positions(coordinate: np.ndarray, levels: list[Any]) -> list[int]:
    """The index of each level on its coordinate."""
    return [next(i for i, value in enumerate(coordinate) if value == level) for level in levels]


def select(data: xr.Dataset | xr.DataArray, selection: dict[str, list[Any]]):
    """Keep the given levels of each factor, in the given order. By position: ``.sel`` takes
    a list of booleans for a mask, not for the levels False and True."""
    return data.isel(
        {name: positions(data[name].values, levels) for name, levels in selection.items()}
    )


def typed_level(text: str, coordinate: np.ndarray) -> Any:
    """The level of ``coordinate`` that ``text`` names (``1`` names 1.0, ``true`` names True);
    None when none does."""
    for value in coordinate:
        if str(value) == text:
            return value
        if coordinate.dtype.kind in "fiu":
            try:
                if float(text) == float(value):
                    return value
            except ValueError:
                return None
        if coordinate.dtype.kind == "b" and text.lower() in ("true", "false"):
            if (text.lower() == "true") == bool(value):
                return value
    return None


def summary_table(
    dataset: xr.Dataset,
    metrics: list[str] | None = None,
    by: list[str] | None = None,
    where: list[str] | None = None,
    confidence: float | None = None,
) -> pd.DataFrame:
    """One row per group of ``by`` levels (default: every cell), columns per metric.

    Columns per metric: ``<m>_mean``, ``<m>_half_width``, ``<m>_ci_low``, ``<m>_ci_high``,
    ``<m>_n``, ``<m>_nan`` (finished tasks whose value is NaN, left out of the others) and
    ``<m>_left_out`` (replicates left out because only some of the pooled cells have a value
    in them: failed, missing or NaN). Other factors are pooled replicate by replicate, over
    complete replicates only (see `campaign.analysis.stats.pooled`); ``<m>_n`` counts those.
    """
    check_confidence(confidence)
    if confidence is None:
        confidence = float(dataset.attrs.get("confidence", 0.95))
    metrics = metrics or metrics_of(dataset)
    # each named metric checked alone: a report asks for one metric at a time, of thousands
    tasks = dataset.variables["status"].dims
    for metric in metrics:
        variable = dataset.variables.get(metric)
        if variable is None or variable.dims != tasks or metric in ("status", "seed"):
            raise ParameterError(
                f"{{metrics}} {metric!r} is not in the results; metrics: "
                f"{', '.join(metrics_of(dataset))}",
                "metrics",
            )
    factors = factors_of(dataset)
    by = factors if by is None else by
    for name in by:
        if name not in factors:
            raise ParameterError(
                f"{{by}} {name!r} is not a factor; factors: {', '.join(factors)}", "by"
            )
    # only the variables needed, each read once: linear in the number of metrics
    needed = xr.Dataset(metric_arrays(dataset, [*metrics, "status"]))
    selected = select(needed, parse_where(dataset, where or []))
    arrays = metric_arrays(selected, [*metrics, "status"])
    finished = arrays.pop("status") == STATUS_OK
    columns = {}
    for metric, values in arrays.items():
        result = pooled(values, by, confidence)
        for stat in ("mean", "half_width", "ci_low", "ci_high", "n"):
            columns[f"{metric}_{stat}"] = result[stat]
        columns[f"{metric}_nan"] = nan_count(finished, values, by)
        columns[f"{metric}_left_out"] = result["left_out"]
    table = xr.Dataset(columns)
    if by:
        frame = table.to_dataframe().reset_index()
        frame = frame[[*by, *columns]]
    else:
        frame = pd.DataFrame({name: [value.item()] for name, value in table.items()})
    return frame


def nan_count(finished: xr.DataArray, values: xr.DataArray, by: list[str]) -> xr.DataArray:
    """Per group of ``by``, the finished tasks whose value is NaN (an undefined value)."""
    undefined = finished & values.isnull()
    return undefined.sum([d for d in undefined.dims if d not in by]).astype("int64")


def factor_columns(frame: pd.DataFrame, metrics: list[str]) -> list[str]:
    """The columns of a `summary_table` that hold factor levels, not a metric's statistics."""
    return [
        c
        for c in frame.columns
        if not any(c.startswith(f"{m}_") and c[len(m) + 1 :] in COLUMN_STATS for m in metrics)
    ]
