"""Level labels are text wherever they go: a `$` is a dollar sign in a figure (never mathtext),
and a label that looks like a formula, markup or a line break breaks no table or file."""

from __future__ import annotations

import csv
import html
import io
import json
import xml.etree.ElementTree as ET

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

from campaign.analysis.anova import effects
from campaign.analysis.comparison import compare
from campaign.analysis.query import summary_table
from campaign.analysis.ranking import degradation
from campaign.cli.main import main
from campaign.design.tasks import Design
from campaign.render.comparison import render_comparison
from campaign.render.effects import render_effects
from campaign.render.figures import plot_metric
from campaign.render.ranking import render_ranking
from campaign.render.report import write_report
from campaign.render.summary import render_summary
from campaign.results.assemble import assemble
from campaign.results.netcdf import write_netcdf
from campaign.results.table import failure_table
from campaign.spec.load import load_spec

SPEC = """
name: labels
model: nowhere:run
factors:
  price: ['$\\frac{1}{$', 'cost $5 to $10', '_hidden']
  kind: {'=HYPERLINK("http://example.com")': 1, '+1+1': 2, '-2+3': 3, '<b>x</b> & y | z': 4}
paired: [price]
replicates: 3
seed: 1
output: out
"""
PRICES = ["$\\frac{1}{$", "cost $5 to $10", "_hidden"]
KINDS = ['=HYPERLINK("http://example.com")', "+1+1", "-2+3", "<b>x</b> & y | z"]
UNITS = {"v": {"units": "$", "long_name": "cost in $ per $ job"}, "w": {"units": "$"}}
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Results whose level labels hold dollars, formulas and markup; ``v`` in dollars."""
    folder = tmp_path_factory.mktemp("labels")
    (folder / "spec.yaml").write_text(SPEC)
    design = Design(load_spec(folder / "spec.yaml"))
    assert [list(f.labels) for f in design.spec.factors] == [PRICES, KINDS]
    records = {}
    for task in design.tasks():
        noise = np.random.default_rng(task.seed).random()
        value = 10.0 * (task.cell[0] + 1) + task.cell[1] + noise
        metrics = {"v": value, "w": -value}  # w: negative numbers, which stay numbers in CSV
        records[task.key] = {"key": task.key, "status": "ok", "metrics": metrics}
    dataset = assemble(design, records, 0.95, UNITS)
    path = folder / "results.nc"
    write_netcdf(dataset, path, failure_table(dataset, design, records))
    return path


def svg_texts(svg) -> list[str]:
    return [t.text or "" for t in ET.parse(svg).getroot().iter(f"{SVG}text")]


@pytest.mark.parametrize(("x", "by"), [("price", "kind"), ("kind", "price")])
def test_a_figure_draws_labels_with_dollars_as_written(results, tmp_path, x, by):
    dataset = xr.load_dataset(results)
    figure = plot_metric(dataset, "v", x=x, by=by)
    axes = figure.axes[0]
    (legend,) = figure.legends
    ticks = axes.get_xticklabels()
    title = figure._suptitle  # the figure's title: the statistic and what it pools
    texts = [*ticks, *legend.get_texts(), axes.yaxis.label, axes.xaxis.label, title]
    assert not any(t.get_parse_math() or t.get_usetex() for t in texts)
    labels = {"price": PRICES, "kind": KINDS}
    assert [t.get_text() for t in ticks] == labels[x]
    assert [t.get_text() for t in legend.get_texts()] == labels[by]  # "_hidden" too
    assert axes.yaxis.label.get_text() == "Cost in $ per $ job ($)"
    svg = tmp_path / "v.svg"
    figure.savefig(svg, bbox_inches="tight")  # mathtext raised on "$\frac{1}{$"
    plt.close(figure)
    drawn = svg_texts(svg)
    assert set(PRICES + KINDS) <= set(drawn)
    assert "Cost in $ per $ job ($)" in drawn


def test_a_report_with_dollar_labels_is_written_and_says_them(results, tmp_path):
    dataset = xr.load_dataset(results)
    page = write_report(dataset, tmp_path, ["v"], baseline="price=cost $5 to $10").read_text()
    for label in PRICES + KINDS:
        assert html.escape(label) in page
    assert "<b>x</b>" not in page
    drawn = svg_texts(tmp_path / "figures" / "v.svg")
    assert set(PRICES + KINDS) <= set(drawn)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_csv(text: str, column: str, expected: list[str]) -> list[dict]:
    """No cell a spreadsheet would evaluate; ``column`` holds the ``expected`` labels, those
    that start like a formula behind a ``'``; numbers (negative ones too) as numbers."""
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        for cell in row.values():
            assert is_number(cell) or not cell.startswith(FORMULA_STARTS), cell
    shown = list(dict.fromkeys(row[column] for row in rows))
    quoted = ["'" + k if k.startswith(FORMULA_STARTS) else k for k in expected]
    assert shown == quoted
    return rows


def test_export_csv_cells_are_never_formulas_and_numbers_stay_numbers(results, capsys):
    dataset = xr.load_dataset(results)
    assert main(["export", str(results), "-o", str(results.with_suffix(".csv"))]) == 0
    rows = check_csv(results.with_suffix(".csv").read_text(), "kind", KINDS)
    assert len(rows) == 3 * 4 * 3
    raw = dataset["w"].transpose("price", "kind", "replicate").values.ravel()
    assert sorted(float(row["w"]) for row in rows) == sorted(raw)  # negative: numbers
    assert all(row["w"].startswith("-") for row in rows)


@pytest.mark.parametrize(
    "argv",
    [
        ["query", "--by", "kind", "--format", "csv"],
        ["query", "--rank", "kind", "--metric", "v", "--format", "csv"],
        ["compare", "--factor", "kind", "--baseline", "<b>x</b> & y | z", "--metric", "w"]
        + ["--by", "", "--format", "csv"],
    ],
    ids=["query", "rank", "compare"],
)
def test_csv_of_a_query_a_ranking_and_a_comparison_is_never_a_formula(results, capsys, argv):
    command, *options = argv
    assert main([command, str(results), *options]) == 0
    kinds = KINDS[:3] if command == "compare" else KINDS  # compare: all but the baseline
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert sorted(r["kind"] for r in rows) == sorted(
        "'" + k if k.startswith(FORMULA_STARTS) else k for k in kinds
    )
    for row in rows:
        for cell in row.values():
            assert is_number(cell) or not cell.startswith(FORMULA_STARTS), cell
    if "--by" in argv and command == "query":
        assert all(float(row["w_mean"]) < 0 for row in rows)  # negative numbers as numbers


AWKWARD = ["two\nlines", "tab\there", "<b>x</b> & y | z", "=1+2"]
SHOWN = ["two\\nlines", "tab\\there", "<b>x</b> & y | z", "=1+2"]


@pytest.fixture
def awkward(results):
    """The results with labels no spec lets through (line breaks, tabs), as a results file
    from elsewhere may hold them."""
    return xr.load_dataset(results).assign_coords(kind=AWKWARD)


def test_text_tables_keep_a_label_with_a_line_break_on_its_row(awkward):
    frame = summary_table(awkward, ["v"], ["kind"])
    lines = render_summary(frame, ["v"]).splitlines()
    assert len(lines) == 2 + 4 + 1  # the header, a row per label, the few replicates' warning
    assert [line.split("  ")[0] for line in lines[2:6]] == SHOWN
    assert lines[6].startswith("warning: some intervals rest on 3 replicate(s)")
    texts = [
        render_comparison(compare(awkward, "kind", "=1+2", "v", by=[])),
        render_ranking(degradation(awkward, "kind", ["v"], ["price"])),
        render_effects(effects(awkward, "v")),
    ]
    for text in texts:
        assert not any(line.startswith(("lines", "here")) for line in text.splitlines())
        assert "two\\nlines" in text


def test_markdown_cells_escape_markup_pipes_and_line_breaks(awkward):
    frame = summary_table(awkward, ["v"], ["kind"])
    lines = render_summary(frame, ["v"], "markdown").splitlines()
    assert lines[6:] == [
        "",
        "mean ± half-width of the 95% confidence interval (Student t) over n replicates",
        "warning: some intervals rest on 3 replicate(s) (fewer than 5): too few for an interval "
        "to say much; add replicates",
    ]
    cells = [line.strip("| ").split(" | ") for line in lines[:6]]
    assert {len(row) for row in cells} == {3}  # kind, v ± half-width, n: no column broken
    assert [row[0] for row in cells[2:]] == [
        "two\\nlines",
        "tab\\there",
        "&lt;b&gt;x&lt;/b&gt; &amp; y &#124; z",
        "=1+2",
    ]
    assert "<b>" not in "\n".join(lines)


@pytest.mark.parametrize("label", ["a\nb", "a\tb", "a\rb", "a\x1bb"])
@pytest.mark.parametrize("form", ["list", "mapping"])
def test_a_spec_refuses_a_label_with_a_control_character(tmp_path, capsys, label, form):
    levels = f"[{json.dumps(label)}]" if form == "list" else f"{{{json.dumps(label)}: 1}}"
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        SPEC.split("factors:")[0] + f"factors:\n  kind: {levels}\nreplicates: 1\nseed: 1\n"
    )
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    word = "level" if form == "list" else "level label"
    assert err == (
        f"campaign: error: {spec}: factors.kind: {word} {label!r} holds a control character "
        f"({label[1]!r}); a label is one line of text: write it without line breaks, tabs or "
        "other control characters\n"
    )
