"""What the commands that compute print when they end: `campaign run` a summary table of the
headline metrics and a line on the others, the counts of the tasks and where the results are
(for a shard, how far it stands); `campaign verify` its verdict; `campaign merge` what it
joined and what is still missing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import xarray as xr

from campaign.analysis.metrics import choose_metrics
from campaign.analysis.query import summary_table
from campaign.analysis.stats import percent
from campaign.plan.precision import precision_summary
from campaign.plan.selection import selection_summary
from campaign.render.summary import render_summary
from campaign.results.assemble import absent_note, metrics_of, nan_note
from campaign.results.spec_edited import edited_note
from campaign.store.folder import LEDGER_FOLDER, RESULTS_FILE

SHOWN_NAMES = 6  # other metrics named on the line under the summary; more are counted


def run_lines(
    dataset: xr.Dataset,
    spec: Any,
    confidence: float,
    show_metrics: int | None = None,
    spec_words: str = "SPEC",
    where: list[str] | None = None,
) -> list[str]:
    """The end of a run: the summary (``show_metrics`` metrics, default the headline ones),
    the task counts, precision or selection, where the results are; ``spec_words``: the spec
    as the user named it; ``where``: the levels the run chose (``run --where``), the summary's
    rows, and missing tasks of the others are expected."""
    lines = []
    metrics = choose_metrics(dataset, "summary", limit=show_metrics)
    if metrics and dataset.attrs["tasks_ok"]:
        # run --where: the cells it ran, not rows of NaN for the levels it left out
        frame = summary_table(dataset, metrics=metrics, where=where or None)
        chosen = f" ({'; '.join(where)})" if where else ""
        interval = f"mean ± half-width of the {percent(confidence)} confidence interval"
        lines += ["", f"Summary{chosen}: {interval}"]
        lines.append(render_summary(frame, metrics, max_rows=40).removesuffix("\n"))
        others = other_metrics_line(dataset, metrics, spec.output)
        lines += [others] if others else []
    ok, failed = dataset.attrs["tasks_ok"], dataset.attrs["tasks_failed"]
    missing = dataset.attrs["tasks_missing"]
    lines += ["", f"{ok} tasks ok, {failed} failed, {missing} missing"]
    lines += [note for note in (nan_note(dataset), absent_note(dataset)) if note]
    if "precision_state" in dataset:
        state, replicates = dataset["precision_state"], dataset["precision_replicates"]
        lines.append(precision_summary(state.values, replicates.values, spec.replicates))
        target = spec.precision.confidence
        if target != confidence:  # a half-width above the target may be one that met it
            lines.append(
                f"  (the target is on {percent(target)} intervals, the summary shows "
                f"{percent(confidence)} "
                f"ones: `campaign query {spec.output} --confidence {target:g}` shows the target's)"
            )
    if "selection_state" in dataset:
        lines.append(selection_summary(dataset["selection_state"].values, spec.output))
    lines.append(f"results: {spec.output / RESULTS_FILE}")
    edited = edited_note(dataset.attrs)  # run of the output folder: the spec results.nc keeps
    lines += [f"  results.nc {edited}"] * bool(edited)
    if failed:
        lines.append(f"{failed} tasks failed: `campaign status {spec_words}` lists them")
    elif missing and where:
        lines.append(f"{missing} missing tasks are of levels --where left out: run them without it")
    return lines


def other_metrics_line(dataset: xr.Dataset, shown: list[str], output: Path) -> str | None:
    """One line under the summary: how many metrics it leaves out, which, and how to see them."""
    others = [m for m in metrics_of(dataset) if m not in shown]
    if not others:
        return None
    relative = os.path.relpath(output)
    output = output if relative.startswith("..") else relative
    named = ", ".join(others[:SHOWN_NAMES]) + (", ..." if len(others) > SHOWN_NAMES else "")
    noun = "metric" if len(others) == 1 else "metrics"
    return (
        f"{len(others)} other {noun} ({named}): `campaign query {output}` shows every metric, "
        "--metric NAME one (or run with --show-metrics N)"
    )


def shard_lines(dataset: xr.Dataset, spec: Any, spec_words: str = "SPEC") -> list[str]:
    """The end of a shard's run: how far the shard stands; its folder holds no results.nc."""
    attrs = dataset.attrs
    lines = [
        "",
        f"shard {attrs['shard']}: {attrs['shard_ok']} of {attrs['shard_tasks']} of its tasks "
        f"done, {attrs['shard_failed']} failed, {attrs['shard_missing']} missing",
        f"ledger: {spec.output / LEDGER_FOLDER} (a shard writes no results.nc: once every shard "
        "is done, `campaign merge SHARD_FOLDERS... -o OUT` writes the campaign's)",
    ]
    if attrs["shard_failed"]:
        lines.append(
            f"{attrs['shard_failed']} tasks failed: `campaign status {spec_words} --shard "
            f"{attrs['shard']}` lists them"
        )
    return lines


def verify_lines(verdict: Any) -> list[str]:
    """What `campaign verify` prints: each mismatch, what was left out, damaged outputs, the
    count reproduced."""
    lines = [mismatch.line() for mismatch in verdict.mismatches]
    if verdict.left_out:
        lines.append(
            f"verify: {verdict.left_out} stored results computed from other code or inputs "
            "than now were left out"
        )
    lines += [f"verify: {problem}" for problem in verdict.outputs]
    lines.append(verdict.summary())
    if verdict.outputs:
        lines.append(
            f"verify: {len(verdict.outputs)} finished tasks' kept outputs are missing or damaged"
        )
    return lines


def merge_lines(merged: Any) -> list[str]:
    """What `campaign merge` prints: notes, the counts, failed and missing tasks per shard."""
    attrs = merged.dataset.attrs
    lines = list(merged.notes)
    lines.append(
        f"merged {attrs.get('merged_shards', '')} into {merged.out}: {attrs['tasks_ok']} tasks "
        f"ok, {attrs['tasks_failed']} failed, {attrs['tasks_missing']} missing "
        f"({merged.copied} records copied)"
    )
    if merged.failed:
        lines.append(
            f"{merged.failed} tasks failed (their errors: group failures of results.nc); a "
            "rerun of the shard that owns a task retries it, then merge again"
        )
    lines.extend(merged.missing)
    if merged.missing:
        lines.append(
            "run the missing shards (or again where one stopped) and merge again into the "
            "same folder"
        )
    lines.append(f"results: {merged.out / RESULTS_FILE}")
    return lines
