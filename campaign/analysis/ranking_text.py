"""A ranking of a factor's levels as a reader gets it: the table of `degradation` under a
title saying what was averaged and how the interval was made, then the notes a reader needs.

Built once here for `campaign query --rank` and for the report, so both say the same
(`campaign.render.ranking.render_ranking_text` lays it out).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import xarray as xr

from campaign.analysis.comparison import is_paired, why_paired
from campaign.analysis.metrics import choose_metrics
from campaign.analysis.query import parse_where, select
from campaign.analysis.ranking import LEGEND, degradation, ranking_notes
from campaign.analysis.stats import percent
from campaign.analysis.unfinished import carried, written_before
from campaign.errors import BadValue
from campaign.results.assemble import factors_of

WIDTH = 100  # notes are wrapped to this many characters


@dataclass
class Ranking:
    """The result of `degradation`, its title, and its notes (the legend first)."""

    result: xr.Dataset
    title: str
    notes: list[str]
    left_out: str | None  # the line counting replicates left out of the interval, if any
    legend: str = ""  # the note saying what the columns are (among the notes)

    def caveats(self) -> list[str]:
        """The notes but the legend: what a CSV or JSON reader of the ranking needs on stderr
        (results behind their ledger, replicates or instances left out, the warnings, the
        Friedman test), its columns saying the rest."""
        return [note for note in self.notes if note != self.legend]

    def wrapped_notes(self) -> list[str]:
        """The notes as a reader gets them under the table (`campaign.render.ranking`): each
        wrapped, but the left-out count on one line."""
        return [
            note if note == self.left_out else textwrap.fill(note, WIDTH, subsequent_indent="  ")
            for note in self.notes
        ]


def best_words(metrics: Sequence[str], maximize: Sequence[str]) -> str:
    """Which value of each metric is the best, in words."""
    if not maximize:
        return "the smallest value"
    largest = ", ".join(name for name in metrics if name in maximize)
    if len(maximize) == len(metrics):
        return "the largest value"
    return f"the smallest value (the largest of {largest})"


def rank_levels(
    dataset: xr.Dataset,
    factor: str,
    metrics: Sequence[str] | None = None,
    where: Sequence[str] | Mapping[str, object] = (),
    confidence: float | None = None,
    maximize: Sequence[str] = (),
) -> Ranking:
    """Rank the levels of ``factor`` by mean degradation from the best over ``metrics``
    (default: the headline metrics; the smallest value best, the largest for those named in
    ``maximize``) and the cells of the other factors, on the levels ``where`` keeps;
    ``confidence`` defaults to the results' own."""
    factors = factors_of(dataset)
    if factor not in factors:
        raise BadValue("factor", factor, f"is not a factor; factors: {', '.join(factors)}")
    metrics = choose_metrics(dataset, "ranking", list(metrics or []))
    for name in maximize:
        if name not in metrics:
            raise BadValue(
                "maximize", name, f"is not a metric ranked; metrics ranked: {', '.join(metrics)}"
            )
    selected = select(dataset, parse_where(dataset, where or []))
    if confidence is None:
        confidence = float(dataset.attrs.get("confidence", 0.95))
    instances = [f for f in factors if f != factor]
    result = degradation(selected, factor, metrics, instances, confidence, maximize)
    paired = is_paired(dataset, factor)
    result.attrs.update(paired=int(paired), **carried(dataset))
    over = (
        f"paired replicates (the levels of {factor} {why_paired(dataset, factor)[0]})"
        if paired
        else f"replicates, not paired (the levels of {factor} have seeds of their own)"
    )
    title = (
        f"degradation from the best {factor} (%), mean over {', '.join(metrics)} and over "
        f"instances ({', '.join(instances) or 'one'}); {percent(confidence)} interval over {over}"
        f"; best: {best_words(metrics, maximize)}"
    )
    left_out = int(result["D_left_out"].sum())
    counted = None
    if left_out:
        counted = (
            f"{left_out} replicates left out of the interval (some {factor}, metric "
            "or instance has no value in them: failed, missing or NaN)"
        )
    skipped = result.attrs.get("instances_left_out", 0)
    judged_notes = []
    if skipped:
        judged_notes.append(
            f"{skipped} of {result.attrs['instances']} instances left out of D_means (some "
            f"{factor} or metric has no value there: failed, missing or NaN), so that every "
            f"{factor} is judged on the same instances"
        )
    unranked = [str(level) for level in result[factor].values[~result["ranked"].values]]
    if unranked:
        judged_notes.append(
            f"unranked: {', '.join(unranked)} (no value in any instance: every task failed, "
            "missing or NaN)"
        )
    legend = LEGEND
    if maximize:
        legend = LEGEND.replace(
            "100 (value - best) / |best|,",
            "100 (value - best) / |best| (100 (best - value) / |best| where the largest is best),",
        )
    notes = [*written_before(result.attrs), legend, *([counted] if counted else [])]
    notes += judged_notes
    notes += ranking_notes(result, paired)
    return Ranking(result, title, notes, counted, legend)
