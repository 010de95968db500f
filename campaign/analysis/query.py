"""Select, group and tabulate a results Dataset: mean and confidence interval per group."""

from __future__ import annotations

import csv
import operator
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from campaign.analysis.metric_columns import metric_columns, metric_stats
from campaign.analysis.unfinished import PRECISION_STATE, ROUNDS, unfinished_tasks
from campaign.design.points import POINT
from campaign.errors import CampaignError, ParameterError
from campaign.results.assemble import factors_of, metric_arrays, metrics_of, point_factors_of
from campaign.results.status import STATUS_OK

COLUMN_STATS = ("mean", "half_width", "ci_low", "ci_high", "n", "nan", "left_out", "absent")
COMPARISONS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}
CLAUSE = re.compile(r"^\s*([^<>=]+?)\s*(<=|>=|<|>|=)(.*)$", re.DOTALL)


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
    """``factor=level[,level...]`` or ``factor<number`` (also ``<=``, ``>``, ``>=``, on a
    numeric factor) clauses -> selection, with levels typed like the coordinate. A factor
    along ``point`` (a design of points) selects the points whose value passes; clauses on
    one factor keep what passes all of them.

    The levels are comma-separated with CSV quoting: a level holding a comma or a double quote
    is written in double quotes, its quotes doubled (``name="a,b",c``). From Python, a mapping
    ``{factor: level or [levels]}`` says the same without quoting."""
    if isinstance(clauses, Mapping):
        return where_mapping(dataset, clauses)
    selection: dict[str, list[Any]] = {}
    factors = factors_of(dataset)
    on_points = point_factors_of(dataset) if POINT in factors else []
    for clause in clauses:
        match = CLAUSE.match(clause)
        name, sign, text = (
            (match.group(1), match.group(2), match.group(3)) if match else ("", "", "")
        )
        if not match or not text:
            raise ParameterError(
                f"{{where}} {clause!r}: write factor=level (or factor=a,b), or factor<number "
                "(<, <=, >, >=)",
                "where",
            )
        if name not in factors and name not in on_points:
            known = ", ".join([*factors, *on_points])
            raise ParameterError(
                f"{{where}} {clause!r}: unknown factor {name!r}; factors: {known}", "where"
            )
        coordinate = dataset.variables[name].values
        if sign == "=":
            levels = listed_levels(clause, name, text, coordinate)
        else:
            levels = compared_levels(clause, name, sign, text, coordinate)
        if not levels:
            raise ParameterError(
                f"{{where}} {clause!r}: no value of {name} passes; its values run from "
                f"{coordinate.min()} to {coordinate.max()}",
                "where",
            )
        if name in on_points:
            points = dataset[POINT].values
            name, levels = POINT, [p for p, v in zip(points, coordinate) if v in levels]
        if name in selection:
            levels = [level for level in selection[name] if level in levels]
            if not levels:
                raise ParameterError(
                    f"{{where}} {clause!r}: with the clauses before it, nothing is left", "where"
                )
        selection[name] = levels
    return selection


def where_mapping(dataset: xr.Dataset, where: Mapping[str, Any]) -> dict[str, list[Any]]:
    """``{factor: level or [levels]}`` -> selection: each item the clause ``factor=a,b`` (its
    levels quoted as that needs), read as a command line's would be."""
    clauses = []
    for name, given in where.items():
        items = given if isinstance(given, list | tuple) else [given]
        clauses.append(f"{name}=" + ",".join(_quote(str(item)) for item in items))
    return parse_where(dataset, clauses)


def listed_levels(clause: str, name: str, text: str, coordinate: np.ndarray) -> list[Any]:
    """The levels a ``factor=a,b`` clause names, each checked against the coordinate."""
    levels = []
    for item in where_items(clause, text):
        level = typed_level(item, coordinate)
        if level is None:
            level = typed_level(item.strip(), coordinate)
        if level is None:
            raise not_a_level(clause, item, name, coordinate, _comma_hint(name, coordinate))
        if level not in levels:
            levels.append(level)
    return levels


def compared_levels(
    clause: str, name: str, sign: str, text: str, coordinate: np.ndarray
) -> list[Any]:
    """The distinct values of a numeric coordinate that pass ``factor<number`` (or <=, >, >=)."""
    if coordinate.dtype.kind not in "fiu":
        raise ParameterError(
            f"{{where}} {clause!r}: {name} is not numeric; write {name}=level", "where"
        )
    try:
        bound = float(text)
    except ValueError:
        raise ParameterError(
            f"{{where}} {clause!r}: {text.strip()!r} is not a number", "where"
        ) from None
    passes = COMPARISONS[sign]
    return [v for v in dict.fromkeys(coordinate.tolist()) if passes(v, bound)]


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


def not_a_level(
    clause: str, item: str, name: str, levels: Sequence[Any], hint: str = ""
) -> ParameterError:
    """The one line for a ``where`` clause naming ``item``, which is no level of ``name``:
    the levels it has, as ``where`` takes them."""
    return ParameterError(
        f"{{where}} {clause!r}: {item.strip()!r} is not a level of {name}; levels: "
        f"{quoted_levels(levels)}{hint}",
        "where",
    )


SHOWN_LEVELS = 20  # a longer list of levels is cut, saying how many there are


def quoted_levels(coordinate: Sequence[Any]) -> str:
    """The levels as ``where`` takes them: comma-separated, CSV-quoted where needed, each once
    (a factor along ``point`` repeats its values point after point), the first
    `SHOWN_LEVELS` of a longer list."""
    levels = list(dict.fromkeys(np.asarray(coordinate).tolist()))
    shown = ", ".join(_quote(str(v)) for v in levels[:SHOWN_LEVELS])
    if len(levels) > SHOWN_LEVELS:
        shown += f", ... ({len(levels)} levels)"
    return shown


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
    a list of booleans for a mask, not for the levels False and True. A level the factor
    does not have is one ValueError line."""
    for name, levels in selection.items():
        known = data[name].values.tolist()
        for level in levels:
            if level not in known:
                raise ValueError(
                    f"{level!r} is not a level of {name}; levels: {', '.join(map(str, known))}"
                )
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


def grouping(
    dataset: xr.Dataset, by: list[str] | None, pivot: str | None, compared: str | None = None
) -> list[str] | None:
    """The factors a table is grouped by when ``pivot``'s levels go across: ``by`` and the
    pivot factor, which needs no naming in ``by`` (None: every factor, the pivot among them;
    a comparison's ``compared`` factor is a row of its table anyway). A pivot that is no
    factor is refused here, by its own name."""
    if pivot is None or pivot == compared:
        return by
    factors = factors_of(dataset)
    names = [*factors, *(point_factors_of(dataset) if POINT in factors else [])]
    if pivot not in names:
        raise ParameterError(
            f"{{pivot}} {pivot!r} is not a factor; factors: {', '.join(names)}", "pivot"
        )
    return by if by is None or pivot in by else [*by, pivot]


def summary_table(
    dataset: xr.Dataset,
    metrics: list[str] | None = None,
    by: list[str] | None = None,
    where: list[str] | None = None,
    confidence: float | None = None,
    pivot: str | None = None,
) -> pd.DataFrame:
    """One row per group of ``by`` levels (default: every cell, with the values of the factors
    along ``point`` beside it), columns per metric.

    Columns per metric: ``<m>_mean``, ``<m>_half_width``, ``<m>_ci_low``, ``<m>_ci_high``,
    ``<m>_n``, ``<m>_nan`` (finished tasks whose value is NaN, left out of the others),
    ``<m>_left_out`` (replicates left out because only some of the pooled cells have a value
    in them: failed, missing or NaN) and, for a metric some finished task did not return
    (the results hold ``<m>_absent``), ``<m>_absent``: those tasks, left out too, and not
    counted in ``<m>_nan``. Other factors are pooled replicate by replicate, over
    complete replicates only (see `campaign.analysis.stats.pooled`); ``<m>_n`` counts those.
    ``pivot``: a factor whose levels a rendering puts across; grouped by, named in ``by`` or not.
    """
    check_confidence(confidence)
    by = grouping(dataset, by, pivot)
    if confidence is None:
        confidence = float(dataset.attrs.get("confidence", 0.95))
    metrics = checked_metrics(dataset, metrics)
    factors = factors_of(dataset)
    on_points = point_factors_of(dataset) if POINT in factors else []
    shown = [*factors, *on_points] if by is None else None  # each point's values beside it
    by = factors if by is None else by
    for name in by:
        if name not in factors and name not in on_points:
            raise ParameterError(
                f"{{by}} {name!r} is not a factor; factors: {', '.join([*factors, *on_points])}",
                "by",
            )
    grouped = [] if POINT in by else [name for name in by if name in on_points]
    # only the variables needed, each read once: linear in the number of metrics
    absent = [f"{m}_absent" for m in metrics if f"{m}_absent" in dataset.variables]
    rounds = [name for name in ROUNDS if name in dataset.variables]
    flags = [*rounds, *[PRECISION_STATE] * (PRECISION_STATE in dataset.variables)]
    needed = xr.Dataset(metric_arrays(dataset, [*metrics, "status", *absent]))
    needed = needed.assign({name: dataset[name].variable for name in flags})
    selected = select(needed, parse_where(dataset, where or []))
    unfinished = unfinished_tasks(selected, rounds, dataset)
    arrays = metric_arrays(selected, [*metrics, "status", *absent])
    finished = arrays.pop("status") == STATUS_OK
    if grouped:
        results = {
            m: by_point_values(
                arrays[m], finished, by, grouped, confidence, arrays.get(f"{m}_absent")
            )
            for m in metrics
        }
    else:
        results = metric_columns(arrays, metrics, finished, by, confidence)
    columns = {
        f"{metric}_{stat}": result[stat]
        for metric, result in results.items()
        for stat in COLUMN_STATS
        if stat in result
    }
    table = xr.Dataset(columns)
    if by:
        frame = table.to_dataframe().reset_index()
        frame = frame[[*(shown or by), *columns]]
    else:
        frame = pd.DataFrame({name: [value.item()] for name, value in table.items()})
    frame.attrs.update(unfinished)
    if dataset.attrs.get("incomplete"):
        frame.attrs["incomplete"] = str(dataset.attrs["incomplete"])
    return frame


def checked_metrics(dataset: xr.Dataset, metrics: list[str] | None) -> list[str]:
    """The metrics to show (default: every one), each in the results, else one line."""
    metrics = metrics or metrics_of(dataset)
    if not metrics:
        attrs = dataset.attrs
        raise CampaignError(
            f"the results hold no metric: no task finished ({attrs.get('tasks_failed', 0)} "
            f"failed, {attrs.get('tasks_missing', 0)} missing of {attrs.get('tasks', 0)}); "
            "run the campaign (`campaign status` lists the errors)"
        )
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
    return metrics


def by_point_values(
    values: xr.DataArray,
    finished: xr.DataArray,
    by: list[str],
    grouped: list[str],
    confidence: float,
    absent: xr.DataArray | None = None,
) -> dict[str, xr.DataArray]:
    """`metric_stats` grouped by the values of factors along ``point`` (``grouped``): the
    points that share them are pooled replicate by replicate, as the cells of a factor left
    out of ``by`` are; one group per distinct value (bin a continuous factor first)."""
    keys = list(zip(*(values[name].values.tolist() for name in grouped)))
    members: dict[tuple, list[int]] = {}
    for point, key in enumerate(keys):
        members.setdefault(key, []).append(point)
    groups = sorted(members.items())
    rest = [name for name in by if name not in grouped]
    parts = [
        metric_stats(
            values.isel({POINT: m}),
            finished.isel({POINT: m}),
            rest,
            confidence,
            None if absent is None else absent.isel({POINT: m}),
        )
        for _, m in groups
    ]
    coordinates = {name: ("group", [key[i] for key, _ in groups]) for i, name in enumerate(grouped)}
    return {
        stat: xr.concat([part[stat] for part in parts], dim="group").assign_coords(coordinates)
        for stat in parts[0]
    }


def factor_columns(frame: pd.DataFrame, metrics: list[str]) -> list[str]:
    """The columns of a `summary_table` that hold factor levels, not a metric's statistics."""
    return [
        c
        for c in frame.columns
        if not any(c.startswith(f"{m}_") and c[len(m) + 1 :] in COLUMN_STATS for m in metrics)
    ]
