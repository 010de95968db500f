"""A report of a results file: one self-contained HTML page, readable offline and printable.

The page holds the design, a figure and a summary table (means and intervals) per metric,
the metrics left out of the figures and why, which factors matter, a ranking and comparisons
against a baseline (`campaign.render.analysis_section`), a selection's outcome
(`campaign.render.selection_section`), on a design of points the
sensitivity to the sampled factors (`campaign.render.sensitivity_section`), the failed
tasks with their error line, and the provenance the results file records (spec, seeds,
versions, digests). Figures are embedded as PNG data, so the page is one file to mail or
archive; the same figures are written beside it as PNG, PDF and SVG for a paper.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import xarray as xr

from campaign.analysis.metrics import choose_metrics
from campaign.analysis.query import summary_table
from campaign.analysis.unfinished import written_before
from campaign.render.analysis_section import analysis_section, parse_baseline
from campaign.render.cost_section import cost_section
from campaign.render.figures import figure_metrics, left_out_metrics, plot_metric
from campaign.render.figures import write_figures as write_figure_files
from campaign.render.report_points import figure_axes, points_summary
from campaign.render.selection_section import selection_section
from campaign.render.sensitivity_section import sensitivity_section
from campaign.render.summary import render_summary
from campaign.results.assemble import factors_of, point_factors_of
from campaign.spec.command_model import COMMAND_MODEL
from campaign.store.folder import FIGURES_FOLDER, REPORT_FILE, make_folder, write_text

STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 1em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { padding: 0.2em 0.6em; border-bottom: 1px solid #ddd; vertical-align: top; }
th { text-align: left; border-bottom: 2px solid #888; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; height: auto; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; white-space: pre-wrap; }
.note { color: #555; font-size: 0.9em; }
.warning { border-left: 4px solid #c60; background: #fff4e5; padding: 0.5em 0.8em; }
section.metric { break-inside: avoid; }
@media print { body { max-width: none; } h2 { break-after: avoid; } }
"""


def report_metrics(dataset: xr.Dataset, metrics: list[str] | None = None) -> list[str]:
    """The metrics of a report, the model's headline ones first (default: all)."""
    return choose_metrics(dataset, "report", metrics)


def write_report(
    dataset: xr.Dataset,
    folder: Path,
    metrics: list[str] | None = None,
    failures: xr.Dataset | None = None,
    baseline: str | None = None,
    resources: xr.Dataset | None = None,
) -> Path:
    """Write ``folder/report.html`` and the figures in ``folder/figures``; return the page.
    ``resources`` (the results' group of that name) gives the section on what tasks cost.
    ``baseline`` (``FACTOR=LEVEL``, default the first level of a paired factor) is what the
    ranking and the comparisons are against."""
    folder = Path(folder)
    against = parse_baseline(dataset, baseline)  # a bad one: one line before anything is written
    make_folder(folder, "report")
    chosen = report_metrics(dataset, metrics)
    if metrics:
        for metric in metrics:
            summary_table(dataset, [metric])  # an unknown metric: one line before any figure
    sections = []
    for metric in figure_metrics(dataset, chosen):
        image = None
        x, by, caption = figure_axes(dataset, metric)
        if x is not None:
            paths = write_figure_files(
                plot_metric(dataset, metric, x, by), folder / FIGURES_FOLDER, metric
            )
            image = paths[0].read_bytes()
        sections.append(metric_section(dataset, metric, image, caption))
    reasons = left_out_metrics(dataset)
    skipped = {m: reasons[m] for m in chosen if m in reasons}  # in the report's order
    page = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(dataset.attrs.get('title', 'campaign results'))}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{esc(dataset.attrs.get('title', 'campaign results'))}</h1>",
        f"<p>{esc(overview(dataset))}</p>",
        *(f'<p class="warning">{esc(note)}</p>' for note in written_before(dataset.attrs)),
        design_section(dataset),
        '<h2 id="metrics">Metrics</h2>',
        *sections,
        left_out_section(skipped),
        analysis_section(dataset, against),
        selection_section(dataset),
        sensitivity_section(dataset),
        failures_section(failures, int(dataset.attrs.get("tasks_failed", 0))),
        cost_section(resources),
        provenance_section(dataset),
        "</body></html>",
    ]
    return write_text(folder / REPORT_FILE, "\n".join(page) + "\n")


def esc(value: object) -> str:
    return html.escape(str(value))


def overview(dataset: xr.Dataset) -> str:
    attrs = dataset.attrs
    return (
        f"Model {attrs.get('model')}, base seed {attrs.get('base_seed')}: "
        f"{attrs.get('tasks_ok')} of {attrs.get('tasks')} tasks ok, "
        f"{attrs.get('tasks_failed')} failed, {attrs.get('tasks_missing', 0)} missing; "
        f"created {attrs.get('created')}."
    )


def design_section(dataset: xr.Dataset) -> str:
    paired = str(dataset.attrs.get("paired", "")).split()
    rows = [
        f"<tr><td>{esc(f)}</td><td>{esc(', '.join(str(v) for v in dataset[f].values))}</td>"
        f'<td class="number">{dataset.sizes[f]}</td><td>{"yes" if f in paired else "no"}</td></tr>'
        for f in factors_of(dataset)
    ]
    for f in point_factors_of(dataset):
        attrs = dataset[f].attrs
        if "valid_range" in attrs:
            low, high = (float(v) for v in attrs["valid_range"])
            levels = f"range {low:g} to {high:g}, a value per point"
        else:
            levels = ", ".join(str(v) for v in json.loads(attrs.get("levels", "[]")))
        rows.append(
            f'<tr><td>{esc(f)}</td><td>{esc(levels)}</td><td class="number"></td>'
            f"<td>{'yes' if f in paired else 'no'}</td></tr>"
        )
    cells = int(dataset["status"].size // max(dataset.sizes["replicate"], 1))
    replicates = f"replicates per cell: {dataset.sizes['replicate']}"
    adaptive = "precision_replicates" in dataset or "selection_replicates" in dataset
    if "precision_replicates" in dataset:
        replicates = (
            "replicates per cell: precision target (see precision_replicates in results.nc)"
        )
    if "selection_replicates" in dataset:
        replicates = "replicates per cell: a selection's stages (see the selection below)"
    tasks = task_count(dataset, cells, adaptive)
    params = dataset.attrs.get("params", "")
    return "\n".join(
        [
            '<h2 id="design">Design</h2>',
            "<table><thead><tr><th>factor</th><th>levels</th>"
            '<th class="number">count</th><th>paired (shared seeds)</th></tr></thead>',
            "<tbody>",
            *rows,
            "</tbody></table>",
            f"<p>{cells} cells; {esc(replicates)}; {esc(tasks)}.</p>",
            design_note(dataset),
            f"<p>Fixed params: <code>{esc(params)}</code></p>" if params else "",
        ]
    )


def task_count(dataset: xr.Dataset, cells: int, adaptive: bool) -> str:
    """The campaign's tasks, the count the overview gives (``status`` is as long as the cell
    with the most replicates: with a precision target or a selection, more than ran), and
    then the most the design allows."""
    tasks = int(dataset.attrs.get("tasks", dataset["status"].size))
    if not adaptive or "replicates" not in dataset.attrs:
        return f"{tasks} tasks"
    most = int(dataset.attrs["replicates"])
    return f"{tasks} tasks (at most {cells * most}: {most} replicates per cell)"


def design_note(dataset: xr.Dataset) -> str:
    """A paragraph on a design other than the full factorial: a fraction's generators,
    defining relation and aliases, or how the points were drawn."""
    attrs = dataset.attrs
    if attrs.get("design") == "fractional":
        aliases = attrs.get("design_aliases") or "none up to two-factor interactions"
        return (
            f"<p>{esc(attrs.get('design_title', 'fraction'))}: generators "
            f"{esc(attrs.get('design_generators', ''))}; defining relation "
            f"{esc(attrs.get('design_defining_relation', ''))}; aliases {esc(aliases)}.</p>"
        )
    if attrs.get("design") in ("latin_hypercube", "sobol"):
        return (
            f"<p>{esc(attrs['design'])} design: {esc(attrs.get('design_points', ''))} points over "
            f"the ranges {esc(attrs.get('design_ranges', ''))}, drawn from the base seed.</p>"
        )
    return ""


def metric_section(dataset: xr.Dataset, metric: str, image: bytes | None, caption: str = "") -> str:
    attrs = dataset[metric].attrs
    confidence = float(dataset.attrs.get("confidence", 0.95))
    frame, note = points_summary(dataset, summary_table(dataset, [metric]), metric)
    table = render_summary(frame, [metric], "html", {metric: attrs.get("units", "")}, confidence)
    units = attrs.get("units")
    parts = [
        f'<section class="metric" id="metric-{esc(metric)}">',
        f"<h3>{esc(metric)}</h3>",
        f'<p class="note">{esc(attrs.get("long_name", metric))}'
        + (f" [{esc(units)}]" if units else "")
        + "</p>",
    ]
    if image is not None:
        data = base64.b64encode(image).decode("ascii")
        parts.append(
            f'<img class="figure" alt="{esc(metric)}: mean and interval" '
            f'src="data:image/png;base64,{data}">'
        )
        if caption:
            parts.append(f'<p class="note">{esc(caption)}</p>')
    parts += [table, f'<p class="note">{esc(note)}</p>' if note else "", "</section>"]
    return "\n".join(parts)


def left_out_section(skipped: dict[str, str]) -> str:
    if not skipped:
        return ""
    items = "".join(f"<li><code>{esc(m)}</code>: {esc(r)}</li>" for m, r in skipped.items())
    return (
        '<h2 id="left-out">Metrics without a figure</h2>'
        f"<p>Left out of the figures and tables:</p><ul>{items}</ul>"
    )


def error_line(text: str) -> str:
    """The line of an error text that says what went wrong: its last non-empty line."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[-1] if lines else ""


def failures_section(failures: xr.Dataset | None, failed: int) -> str:
    """The failed tasks, one row each (``failed``: their count the results record, said when
    the failures themselves were not given)."""
    head = '<h2 id="failures">Failed tasks</h2>'
    if failures is None:
        if failed:
            return head + (
                f"<p>{failed} tasks failed; their error texts are in the group failures of "
                "results.nc (campaign.open_failures).</p>"
            )
        return head + "<p>No task failed.</p>"
    if failures.sizes.get("failure", 0) == 0:
        return head + "<p>No task failed.</p>"
    factors = [name for name in failures.data_vars if not name.startswith("failure_")]
    if factors:  # the levels as factor=level, in the order of the design
        cells = [
            ", ".join(f"{f}={failures[f].values[i]}" for f in factors)
            for i in range(failures.sizes["failure"])
        ]
    else:  # files made before the failures kept their levels: the cell as JSON
        cells = [str(cell) for cell in failures["failure_cell"].values]
    rows = [
        f"<tr><td>{esc(cell)}</td><td class='number'>{int(replicate)}</td>"
        f"<td><code>{esc(error_line(error))}</code></td><td><code>{esc(key)}</code></td></tr>"
        for key, cell, replicate, error in zip(
            failures["failure_key"].values,
            cells,
            failures["failure_replicate"].values,
            failures["failure_error"].values,
        )
    ]
    return "\n".join(
        [
            head,
            f"<p>{len(rows)} tasks failed.</p>",
            '<table class="failures"><thead><tr><th>levels</th><th class="number">replicate'
            "</th><th>error</th><th>task key</th></tr></thead><tbody>",
            *rows,
            "</tbody></table>",
        ]
    )


def digests(attrs: dict) -> list[tuple[str, str]]:
    """The digests a results file records: of the spec, of the model's code and of each of its
    files (``model_code_files``, for a program: its binary, platform and other inputs; a
    Python model's modules are the engine's or its own code, said by their digest), of each
    input file (``input_digests``, a JSON map of file to digest), choices made on changes, and
    for a program its version and what each program runs (``program_files``: its libraries and
    interpreter, by name), without which a paper could not say which simulator it ran."""
    facts = []
    for name, value in attrs.items():
        if name.endswith("_digest"):
            facts.append((name.replace("_", " "), value))
        elif name == "program_version":
            facts.append(("program version", value))
        elif name == "program_files":
            try:
                programs = json.loads(value)
            except ValueError:
                programs = {}
            for program, files in sorted(programs.items()):
                facts += [(f"{program} runs {file}", d) for file, d in sorted(files.items())]
        elif name == "model_code_files" and attrs.get("model") == COMMAND_MODEL:
            facts += [(f"model code file {file}", d) for file, d in sorted(parsed_map(value))]
        elif name in ("input_digests", "source_changes"):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = value
            if isinstance(parsed, dict):
                facts += [(f"input {file}", digest) for file, digest in sorted(parsed.items())]
            elif parsed:
                facts.append((name.replace("_", " "), json.dumps(parsed)))
    return facts


def parsed_map(value: str) -> list[tuple[str, str]]:
    """The (name, digest) pairs of an attribute holding a JSON map; none when it holds none."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return []
    return list(parsed.items()) if isinstance(parsed, dict) else []


def provenance_section(dataset: xr.Dataset) -> str:
    attrs = dataset.attrs
    try:
        versions = json.loads(attrs.get("versions", "{}"))
    except ValueError:
        versions = {"versions": attrs.get("versions")}
    facts = [
        ("model", attrs.get("model")),
        ("model reference", attrs.get("model_reference")),
        ("base seed", attrs.get("base_seed")),
        ("paired factors (shared seeds)", attrs.get("paired") or "none"),
        (
            "task seeds",
            "SeedSequence(base seed, replicate, unpaired levels); each task's in "
            "the variable seed of results.nc",
        ),  # fmt: skip
        *digests(attrs),
        ("confidence level", attrs.get("confidence")),
        ("created", attrs.get("created")),
        ("host", attrs.get("host")),
        ("history", attrs.get("history")),
    ]
    facts += [(f"version of {name}", value) for name, value in sorted(versions.items())]
    rows = [f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts if v is not None]
    spec = attrs.get("spec", "")
    return "\n".join(
        [
            '<h2 id="provenance">Provenance</h2>',
            '<table class="provenance"><tbody>',
            *rows,
            "</tbody></table>",
            "<h3>Spec</h3>",
            f'<pre class="spec">{esc(spec.strip())}</pre>',
        ]
    )
