"""`table`: any analysis's result as text, through the one renderer the commands use.

Which table a result is comes from its type (a query's DataFrame, a `Ranking`, a
`SelectionReport`, a `Sensitivity`) or, for the two analyses that return an xarray Dataset,
from the ``analysis`` attribute they stamp on it (``comparison``, ``effects``).
"""

from __future__ import annotations

from typing import Any

import campaign.api.checks as check
from campaign.api.checks import checked
from campaign.errors import ParameterError

WHAT = "what query, rank, compare, effects, sensitivity or select returned"


@checked(fmt=check.required_text)
def table(result, fmt="text", digits=None, pivot=None):
    """An analysis's result as text, as the command that computes it prints it.

    Parameters
    ----------
    result : pandas.DataFrame, xarray.Dataset, Ranking, Sensitivity or SelectionReport
        What `query`, `rank`, `compare`, `effects`, `sensitivity` or `select` returned.
    fmt : {"text", "csv", "json", "markdown", "latex", "html"}
        The format: aligned text, CSV, JSON (every number at full precision; a table with
        intervals ends each row with ``ci_level`` and ``ci_method``, their confidence level
        and method), Markdown, LaTeX (booktabs) or HTML.
    digits : int, optional
        Significant digits of the numbers, 1 to 15 (default: from each interval); not for a
        sensitivity analysis, whose table has 4 (CSV and JSON: full precision).
    pivot : str, optional
        A factor whose levels go across, one of the table's rows (`query` and `compare`
        tables; default: the ``pivot`` they were given).

    Returns
    -------
    str
        The table, ending with a newline.
    """
    whole = isinstance(digits, int) and not isinstance(digits, bool)  # True is no 1
    if digits is not None and not (whole and 1 <= digits <= 15):
        raise ParameterError(f"{{digits}} {digits!r}: give a whole number from 1 to 15", "digits")
    return renderer(result)(result, fmt, digits, pivot)


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


def _sensitivity(result, fmt, digits, pivot):
    from campaign.render.sensitivity import render_sensitivity

    check.no_pivot(pivot, "a sensitivity analysis")
    if digits is not None:  # its renderer has 4 significant digits, as the command prints it
        raise ParameterError(
            "{digits} is for query, rank, compare, effects and select tables; a sensitivity "
            "analysis's table has 4 significant digits (csv and json: full precision)",
            "digits",
        )
    return render_sensitivity([result], fmt)


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
