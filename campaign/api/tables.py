"""`table`: any analysis's result as text, through the one renderer the commands use.

Which table a result is comes from its type (a query's DataFrame, a `Ranking`, a
`SelectionReport`, a `Sensitivity` or a list of them, one per metric) or, for the two
analyses that return an xarray Dataset, from the ``analysis`` attribute they stamp on it
(``comparison``, ``effects``).
"""

from __future__ import annotations

from typing import Any

import campaign.api.checks as check
from campaign.api.checks import checked
from campaign.errors import ParameterError

WHAT = "what query, rank, compare, effects, sensitivity or select returned"


@checked(fmt=check.required_text, second_order=check.flag)
def table(result, fmt="text", digits=None, pivot=None, second_order=False):
    """An analysis's result as text, as the command that computes it prints it.

    Parameters
    ----------
    result : pandas.DataFrame, xarray.Dataset, Ranking, Sensitivity or SelectionReport
        What `query`, `rank`, `compare`, `effects`, `sensitivity` or `select` returned; or a
        list of what `sensitivity` returned, one per metric: one table of them all (CSV and
        JSON with a ``metric`` column first), as ``campaign sensitivity`` prints several.
    fmt : {"text", "csv", "json", "markdown", "latex", "html"}
        The format: aligned text, CSV, JSON (every number at full precision; a table with
        intervals ends each row with ``ci_level`` and ``ci_method``, their confidence level
        and method), Markdown, LaTeX (booktabs) or HTML.
    digits : int, optional
        Significant digits of the numbers, 1 to 15 (default: from each interval); not for a
        sensitivity analysis, whose table has 4, nor for CSV and JSON (full precision).
    pivot : str, optional
        A factor whose levels go across, one of the table's rows (`query` and `compare`
        tables; default: the ``pivot`` they were given).
    second_order : bool
        A sensitivity analysis's second-order Sobol indices, a row per pair of factors,
        instead of its indices per factor (method sobol on a saltelli design drawn with
        ``second_order: true``), as ``campaign sensitivity --second-order`` prints them.

    Returns
    -------
    str
        The table, ending with a newline.
    """
    check_digits(digits, fmt)
    write = renderer(result)
    if second_order and write is not _sensitivity:
        raise ParameterError(
            "{second_order} is for a sensitivity analysis's table (the Sobol indices of pairs "
            "of factors), not for what query, rank, compare, effects or select returned",
            "second_order",
        )
    if write is _sensitivity:
        return write(result, fmt, digits, pivot, second_order)
    return write(result, fmt, digits, pivot)


def check_digits(digits, fmt, tables="the text, markdown, latex and html tables") -> None:
    """Refuse ``digits`` out of 1 to 15, or with csv or json, which carry every number at full
    precision (taken and left unused); ``tables``: the formats it is for, as the caller
    names them (the command line's ``--format table``)."""
    whole = isinstance(digits, int) and not isinstance(digits, bool)  # True is no 1
    if digits is not None and not (whole and 1 <= digits <= 15):
        raise ParameterError(f"{{digits}} {digits!r}: give a whole number from 1 to 15", "digits")
    if digits is not None and fmt in ("csv", "json"):
        raise ParameterError(
            f"{{digits}} is for {tables}; {fmt} carries every number at full precision: "
            "leave {digits} out",
            "digits",
        )


def renderer(result: Any):
    """The function that writes ``result``, by its type (see the module)."""
    import pandas as pd
    import xarray as xr

    from campaign.analysis.ranking_text import Ranking
    from campaign.analysis.selection_report import SelectionReport
    from campaign.analysis.sensitivity import Sensitivity

    by_type = {
        pd.DataFrame: _summary,
        Ranking: _ranking,
        SelectionReport: _selection,
        Sensitivity: _sensitivity,
    }
    for kind in type(result).__mro__:
        if kind in by_type:
            return by_type[kind]
    if isinstance(result, list) and result and all(isinstance(r, Sensitivity) for r in result):
        return _sensitivity  # one per metric, as `campaign sensitivity` gives several
    if isinstance(result, xr.Dataset) and result.attrs.get("analysis") in DATASETS:
        return DATASETS[result.attrs["analysis"]]
    raise ParameterError(f"{{result}} must be {WHAT}, got {type(result).__name__}", "result")


def _summary(result, fmt, digits, pivot):
    from campaign.render.summary import render_summary

    attrs = result.attrs
    if "metrics" not in attrs:
        raise ParameterError(f"{{result}} must be {WHAT}: this DataFrame is no query's", "result")
    across = pivot if pivot is not None else attrs.get("pivot")
    return render_summary(
        result, attrs["metrics"], fmt, attrs["units"], attrs["confidence"], 0, digits, across
    )


def _ranking(result, fmt, digits, pivot):
    from campaign.render.ranking import render_ranking, render_ranking_text

    check.no_pivot(pivot, "a ranking")
    if fmt in ("text", "table") and digits is None:  # as `query --rank` prints it
        return render_ranking_text(result) + "\n"
    return render_ranking(result.result, fmt, [result.title, *result.notes], digits)


def _selection(result, fmt, digits, pivot):
    from campaign.render.selection import render_selection

    check.no_pivot(pivot, "a selection")
    return render_selection(result, fmt, digits)


def _sensitivity(result, fmt, digits, pivot, second_order=False):
    from campaign.render.sensitivity import render_sensitivity

    check.no_pivot(pivot, "a sensitivity analysis")
    if digits is not None:  # its renderer has 4 significant digits, as the command prints it
        raise ParameterError(
            "{digits} is for query, rank, compare, effects and select tables; a sensitivity "
            "analysis's table has 4 significant digits (csv and json: full precision)",
            "digits",
        )
    results = result if isinstance(result, list) else [result]
    return render_sensitivity(results, fmt, second_order)


def _comparison(result, fmt, digits, pivot):
    from campaign.render.comparison import render_comparison

    return render_comparison(
        result, fmt, digits, pivot if pivot is not None else result.attrs.get("pivot")
    )


def _effects(result, fmt, digits, pivot):
    from campaign.render.effects import render_effects

    check.no_pivot(pivot, "an analysis of effects")
    return render_effects(result, fmt, digits)


DATASETS = {"comparison": _comparison, "effects": _effects}
