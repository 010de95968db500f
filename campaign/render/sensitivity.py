"""Sensitivity tables in any format (`campaign.analysis.sensitivity`): one row per factor;
CSV and JSON carry the numbers (a ``metric`` column first when several metrics are shown),
then the intervals' level and method (`campaign.render.interval_columns`),
the other formats a title above each metric's table and its notes below."""

from __future__ import annotations

import html

import pandas as pd

from campaign.analysis.point_outputs import averaged_note
from campaign.analysis.sensitivity import Sensitivity, describe
from campaign.errors import ParameterError
from campaign.render.interval_columns import REGRESSION, bootstrap, with_interval
from campaign.render.numbers import number
from campaign.render.table import Shown, check_format, render


def render_sensitivity(results: list[Sensitivity], fmt: str = "text", second_order=False) -> str:
    """The tables of ``results`` (one per metric) in ``fmt``; ``second_order``: the pairs'
    second-order Sobol indices instead of the factors' indices."""
    fmt = check_format(fmt)
    if second_order:
        missing = [r.metric for r in results if r.second_order is None]
        if missing:
            raise ParameterError(
                "{second_order}: second-order indices need method sobol on a saltelli design "
                "drawn with second_order: true",
                "second_order",
            )
    frames = [r.second_order if second_order else r.table for r in results]
    if fmt in ("csv", "json"):
        frames = [
            with_interval(with_fit(f, r), r.confidence, method(r)) for r, f in zip(results, frames)
        ]
        if len(results) == 1:
            return render(frames[0], fmt)
        tagged = [f.assign(metric=r.metric) for r, f in zip(results, frames)]
        frame = pd.concat(tagged, ignore_index=True)
        return render(frame[["metric", *frames[0].columns]], fmt)
    return "\n".join(title(r, fmt) + render(f, fmt, shown(r, f)) for r, f in zip(results, frames))


def with_fit(frame: pd.DataFrame, result: Sensitivity) -> pd.DataFrame:
    """``frame`` with the numbers the notes under a text table give: the regression's
    ``r_squared``, and ``noise_share``, the replicate noise left in the point means (a
    fraction of their variance), the same in every row."""
    fit = {"r_squared": result.r_squared} if result.method == "regression" else {}
    return frame.assign(**fit, noise_share=result.noise_share)


def csv_notes(result: Sensitivity) -> list[str]:
    """What a CSV or JSON table's cells cannot say, for stderr: its warnings, a transform of
    the output, the failed or NaN replicates left out of the point means, the points left
    out."""
    notes = list(result.warnings)
    fewest, _ = result.valued
    averaged = averaged_note(result.replicates, result.valued, result.noise_share)
    if fewest < result.replicates and averaged:  # noise_share is in the table; not this
        notes.append(averaged)
    if result.transform:
        notes.append(
            f"the indices are of {result.transform}({result.metric}): each replicate's "
            f"{result.transform}, then their mean per point"
        )
    notes += [note for note in describe(result)[1] if "points left out" in note]
    return [f"{result.metric}: {note}" for note in notes]


def method(result: Sensitivity) -> str:
    """How the ``*_conf`` half-widths were made."""
    return REGRESSION if result.method == "regression" else bootstrap(result.resamples)


def title(result: Sensitivity, fmt: str) -> str:
    """The table's title above it in formats whose tables have no line above (aligned text
    has it in the table)."""
    text, _ = describe(result)
    return {
        "markdown": f"{text}\n\n",
        "latex": f"% {text}\n",
        "html": f'<p class="title">{html.escape(text)}</p>\n',
    }.get(fmt, "")


def shown(result: Sensitivity, frame: pd.DataFrame) -> Shown:
    """One metric's table for a reader: 4 significant digits."""
    title, notes = describe(result)
    labels = 2 if "with" in frame.columns else 1
    rows = [
        [str(v) if i < labels else number(v, 4) for i, v in enumerate(row.values())]
        for row in frame.to_dict("records")
    ]
    return Shown([str(c) for c in frame.columns], rows, labels, above=[title], below=notes)
