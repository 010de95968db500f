"""The analysis section of the report page: which factors matter, the ranking of a factor's levels,
and each level against a baseline, for the model's headline metrics.

The texts are those of `campaign effects`, `campaign query --rank` and `campaign compare`, so
the page says what the commands say; an analysis the results cannot carry (a single factor
level, too few replicates) is one line in its place, not a failed report.
"""

from __future__ import annotations

import html

import xarray as xr

from campaign.analysis.anova import effects
from campaign.analysis.comparison import compare
from campaign.analysis.metrics import choose_metrics
from campaign.analysis.query import typed_level
from campaign.analysis.ranking_text import rank_levels
from campaign.errors import CampaignError, ParameterError
from campaign.render.comparison import render_comparison
from campaign.render.effects import render_effects
from campaign.render.ranking import render_ranking_text
from campaign.results.assemble import factors_of


def analysis_metrics(dataset: xr.Dataset) -> list[str]:
    """The headline metrics worth analysing, else the first metric that varies."""
    return choose_metrics(dataset, "analysis")


def parse_baseline(dataset: xr.Dataset, text: str | None) -> tuple[str, object] | None:
    """``FACTOR=LEVEL`` -> (factor, level), checked against the results before any work;
    without it, the first level of the first paired factor (or None without one)."""
    factors = factors_of(dataset)
    if text is None:
        paired = [f for f in str(dataset.attrs.get("paired", "")).split() if f in factors]
        return (paired[0], dataset[paired[0]].values[0]) if paired else None
    factor, sep, level = text.partition("=")
    if not sep or factor not in factors:
        raise ParameterError(
            f"{{baseline}} {text!r}: write FACTOR=LEVEL with a factor of {', '.join(factors)}",
            "baseline",
        )
    typed = typed_level(level, dataset[factor].values)
    if typed is None:
        levels = ", ".join(str(v) for v in dataset[factor].values)
        raise ParameterError(
            f"{{baseline}} {text!r}: {level!r} is not a level of {factor}; levels: {levels}",
            "baseline",
        )
    return factor, typed


def block(title: str, text: str) -> str:
    return f"<h3>{html.escape(title)}</h3>\n<pre>{html.escape(text)}</pre>"


def attempt(title: str, make) -> str:
    """A block of ``make()``'s text, or the one line saying why the results cannot give it."""
    try:
        return block(title, make())
    except (CampaignError, ValueError) as error:
        return f'<h3>{html.escape(title)}</h3>\n<p class="note">{html.escape(str(error))}</p>'


def ranking_text(dataset: xr.Dataset, factor: str, metrics: list[str]) -> str:
    return render_ranking_text(rank_levels(dataset, factor, metrics))


def analysis_section(dataset: xr.Dataset, baseline: tuple[str, object] | None) -> str:
    metrics = analysis_metrics(dataset)
    if not metrics or not factors_of(dataset):
        return ""
    parts = ['<h2 id="analysis">Analysis</h2>']
    for metric in metrics:
        parts.append(
            attempt(
                f"Which factors matter: {metric}",
                lambda m=metric: render_effects(effects(dataset, m)).rstrip("\n"),
            )
        )
    if baseline is not None:
        factor, level = baseline
        parts.append(
            attempt(f"Ranking of {factor}", lambda: ranking_text(dataset, factor, metrics))
        )
        for metric in metrics:
            parts.append(
                attempt(
                    f"{metric}: each {factor} against {level}",
                    lambda m=metric: render_comparison(compare(dataset, factor, level, m)).rstrip(
                        "\n"
                    ),
                )
            )
    else:
        parts.append(
            '<p class="note">No paired factor: give a baseline FACTOR=LEVEL for a ranking and '
            "comparisons against a baseline.</p>"
        )
    return "\n".join(parts)
