"""Factors drawn over ranges (along ``point``) treated like any factor: `query --by`, `--where`
with comparisons, `plot --x` (binned) and the report."""

from __future__ import annotations

import csv
import io

import matplotlib.pyplot as plt
import numpy as np
import pytest

from campaign.cli.main import main
from campaign.render.figure_layout import default_axes
from campaign.render.figures import plot_metric
from campaign.render.report import write_report
from campaign.results.netcdf import open_results
from tests.conftest import finished_campaign

SPEC = """
name: sampled
model: mm1
factors:
  arrival_rate: {low: 0.2, high: 0.8}
  customers: {low: 20, high: 23, integer: true}
design: {latin_hypercube: {points: 40}}
replicates: 3
seed: 9
output: out
"""


sampled = finished_campaign("sampled", SPEC)


def query(capsys, out, *args) -> list[dict[str, str]]:
    assert main(["query", str(out), "--metric", "mean_wait", *args, "--format", "csv"]) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_query_by_a_sampled_factor_pools_the_points_that_share_a_value(sampled, capsys):
    results = open_results(sampled)
    customers = results["customers"].values
    assert sorted(set(customers.tolist())) == [20, 21, 22, 23]
    rows = query(capsys, sampled, "--by", "customers")
    assert [int(r["customers"]) for r in rows] == [20, 21, 22, 23]
    wait = results["mean_wait"].values  # point x replicate, every task ok
    for row in rows:
        members = wait[customers == int(row["customers"])]
        per_replicate = members.mean(axis=0)  # the points pooled replicate by replicate
        assert float(row["mean_wait_mean"]) == pytest.approx(per_replicate.mean(), rel=1e-12)
        half = float(row["mean_wait_half_width"])
        assert half == pytest.approx(4.302652729749464 * per_replicate.std(ddof=1) / 3**0.5)
        assert int(row["mean_wait_n"]) == 3


def test_where_compares_a_sampled_factor_and_keeps_the_points_that_pass(sampled, capsys):
    results = open_results(sampled)
    rate = results["arrival_rate"].values
    rows = query(capsys, sampled, "--where", "arrival_rate<0.5", "--where", "arrival_rate>=0.3")
    kept = np.flatnonzero((rate < 0.5) & (rate >= 0.3))
    assert 0 < len(kept) < 40
    assert [int(r["point"]) for r in rows] == kept.tolist()
    assert list(rows[0])[:3] == ["point", "arrival_rate", "customers"]  # the values beside
    np.testing.assert_array_equal([float(r["arrival_rate"]) for r in rows], rate[kept])
    means = results["mean_wait"].values[kept].mean(axis=1)
    np.testing.assert_allclose([float(r["mean_wait_mean"]) for r in rows], means, rtol=1e-12)
    assert [int(r["point"]) for r in query(capsys, sampled, "--where", "customers=21")] == (
        np.flatnonzero(results["customers"].values == 21).tolist()
    )


@pytest.mark.parametrize(
    ("clause", "message"),
    [
        ("arrival_rate<0.1", "--where 'arrival_rate<0.1': no value of arrival_rate passes; its "
         "values run from"),
        ("arrival_rate<low", "--where 'arrival_rate<low': 'low' is not a number"),
        ("speed>1", "--where 'speed>1': unknown factor 'speed'; factors: point, arrival_rate, "
         "customers"),
    ],
)  # fmt: skip
def test_bad_comparisons_are_one_line(sampled, capsys, clause, message):
    assert main(["query", str(sampled), "--where", clause]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"campaign: error: {message}") and err.count("\n") == 1


def test_a_sampled_factor_is_plotted_in_bins_of_equal_width(sampled):
    results = open_results(sampled)
    assert default_axes(results) == ("arrival_rate", "customers")  # the ranges, not point
    figure = plot_metric(results, "mean_wait", x="arrival_rate", log="none")
    axes = figure.axes[0]
    assert (
        figure.get_suptitle()
        .replace("\n", " ")
        .endswith("interval over 3 replicates (arrival_rate: 10 equal bins)")
    )
    lines = axes.get_lines()
    assert [line.get_label() for line in lines] == ["20", "21", "22", "23"]
    rate, customers = results["arrival_rate"].values, results["customers"].values
    edges = np.linspace(rate.min(), rate.max(), 11)
    index = np.clip(np.searchsorted(edges, rate, side="right") - 1, 0, 9)
    centres = np.array([float(f"{c:.4g}") for c in (edges[:-1] + edges[1:]) / 2])
    wait = results["mean_wait"].values
    for line, value in zip(lines, (20, 21, 22, 23)):
        bins = sorted(set(index[customers == value].tolist()))
        np.testing.assert_allclose(line.get_xdata(), centres[bins])
        expected = [wait[(index == b) & (customers == value)].mean(axis=0).mean() for b in bins]
        np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-12)
    plt.close(figure)


def test_the_report_of_a_sampled_design_has_its_sensitivity_section(sampled, tmp_path):
    page = write_report(open_results(sampled), tmp_path).read_text()
    section = page.split('<h2 id="sensitivity">Sensitivity to the sampled factors</h2>')[1]
    section = section.split("<h2")[0]
    assert "<h3>Sensitivity: mean_wait</h3>" in section
    assert (
        "mean_wait: standardized regression coefficients (SRC), latin_hypercube design of 40 "
        "points" in section
    )
    assert "each point&#x27;s output is the mean of its 3 replicates" in section
