"""Level labels are text wherever they go: a `$` is a dollar sign in a figure (never mathtext),
and a label that looks like a formula, markup or a line break breaks no table or file."""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

from campaign.design import Design
from campaign.figures import plot_metric
from campaign.report import write_report
from campaign.results import assemble, failure_table, write_netcdf
from campaign.spec import load_spec

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
UNITS = {"v": {"units": "$", "long_name": "cost in $ per $ job"}}
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
        records[task.key] = {"key": task.key, "status": "ok", "metrics": {"v": value}}
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
    texts = [*ticks, *legend.get_texts(), axes.yaxis.label, axes.xaxis.label, axes.title]
    assert not any(t.get_parse_math() or t.get_usetex() for t in texts)
    labels = {"price": PRICES, "kind": KINDS}
    assert [t.get_text() for t in ticks] == labels[x]
    assert [t.get_text() for t in legend.get_texts()] == labels[by]  # "_hidden" too
    assert axes.yaxis.label.get_text() == "cost in $ per $ job [$]"
    svg = tmp_path / "v.svg"
    figure.savefig(svg, bbox_inches="tight")  # mathtext raised on "$\frac{1}{$"
    plt.close(figure)
    drawn = svg_texts(svg)
    assert set(PRICES + KINDS) <= set(drawn)
    assert "cost in $ per $ job [$]" in drawn


def test_a_report_with_dollar_labels_is_written_and_says_them(results, tmp_path):
    dataset = xr.load_dataset(results)
    page = write_report(dataset, tmp_path, baseline="price=cost $5 to $10").read_text()
    for label in PRICES + KINDS:
        assert html.escape(label) in page
    assert "<b>x</b>" not in page
    drawn = svg_texts(tmp_path / "figures" / "v.svg")
    assert set(PRICES + KINDS) <= set(drawn)
