"""Figures a journal takes as they are: column and page sizes, TrueType fonts in every PDF,
labels from the declared long names and units, pooled factors named, facets, several metrics,
paired differences with `compare`'s own intervals, and box plots and ECDFs of the replicates,
each checked against the numbers of the results file."""

from __future__ import annotations

import re
import subprocess

import matplotlib.pyplot as plt
import numpy as np
import pytest

import campaign
from campaign.cli.main import main
from campaign.models.rigid.metrics import METRICS
from campaign.render.figure_style import metric_label
from campaign.render.figures import plot, write_figures

RATES = [0.05, 0.3, 0.9]


def title_of(figure) -> str:
    """The figure's title as one line (it is wrapped to fit)."""
    return " ".join(figure.get_suptitle().split())


def pdf_fonts(path) -> list[str]:
    """The font types `pdffonts` lists for a PDF, one per embedded font."""
    lines = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True, check=True)
    rows = lines.stdout.splitlines()[2:]  # a header and a rule first
    return [re.split(r"\s{2,}", row.strip())[1] for row in rows]


def page_size(path) -> tuple[float, float]:
    """The PDF's page size in points (`pdfinfo`)."""
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
    match = re.search(r"Page size:\s+([\d.]+) x ([\d.]+) pts", info.stdout)
    return float(match.group(1)), float(match.group(2))


def replicates(dataset, metric: str, **cell) -> np.ndarray:
    values = dataset[metric].sel(**cell).values.astype(float)
    return values[np.isfinite(values)]


@pytest.mark.parametrize("style", ["paper", "screen"])
def test_every_pdf_embeds_truetype_fonts_and_no_type3(paper_results, tmp_path, style):
    # log axes (mathtext ticks), a legend, a title: every kind of text a figure holds
    for kind in ("mean", "ecdf"):
        out = tmp_path / f"{kind}-{style}.pdf"
        argv = ["plot", str(paper_results), "--metric", "mean_wait", "--kind", kind]
        assert main([*argv, "--style", style, "--out", str(out)]) == 0
        fonts = pdf_fonts(out)
        assert fonts and all(font == "CID TrueType" for font in fonts), fonts
        assert "Type 3" not in fonts


def test_sizes_are_a_column_a_page_or_given_inches(paper_results, tmp_path):
    for size, width, height in [("column", 252.0, None), ("page", 511.2, None), ("5x3", 360, 216)]:
        out = tmp_path / f"{size}.pdf"
        argv = ["plot", str(paper_results), "--metric", "mean_wait", "--size", size]
        assert main([*argv, "--out", str(out)]) == 0
        drawn = page_size(out)
        assert drawn[0] == pytest.approx(width, abs=0.01)  # the figure keeps its width
        if height is not None:
            assert drawn[1] == pytest.approx(height, abs=0.01)
        else:
            assert 0.45 * width < drawn[1] < 0.9 * width


def test_a_bad_size_or_an_ecdf_with_an_x_axis_is_one_line_naming_the_option(
    paper_results, tmp_path, capsys
):
    out = tmp_path / "p.pdf"
    argv = ["plot", str(paper_results), "--metric", "mean_wait", "--out", str(out)]
    assert main([*argv, "--size", "wide"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --size 'wide' is not allowed; use column (3.5 in wide), page (7.1 "
        "in) or WxH in inches, such as 5x3\n"
    )
    assert main([*argv, "--kind", "ecdf", "--x", "arrival_rate"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --x: an ECDF has the metric's values on its x axis; use --facet for "
        "panels per level of a factor\n"
    )
    assert main([*argv, "--baseline", "fast"]) == 2
    assert "--baseline is for kind 'difference'" in capsys.readouterr().err
    assert not out.exists()


def test_labels_are_the_long_names_and_units_without_formulas():
    cases = {
        "mean_wait": "Mean waiting time (s)",
        "mean_bsld": "Mean bounded slowdown",
        "utilization": "Utilization",
        "mean_slowdown": "Mean slowdown",
        "makespan": "Last completion time, from time 0 (s)",
        "swct_w": "Sum of completion times weighted by work (proc·s²)",
        "throughput": "Completed jobs per second of makespan (1/s)",
        "competitive_factor_lb": "Competitive factor lb",
    }
    assert {m: metric_label(METRICS[m], m) for m in cases} == cases
    assert metric_label(METRICS["mean_bsld"], "mean_bsld", formula=True) == (
        "Mean bounded slowdown max(1, (end - submit) / max(runtime, 10 s))"
    )
    assert metric_label(METRICS["mean_wait"], "mean_wait", prefix="difference in") == (
        "Difference in mean waiting time (s)"
    )


def test_a_pooled_factor_is_named_and_labels_carry_no_unit_of_one(paper_results):
    dataset = campaign.open_results(paper_results)
    figure = plot(dataset, "utilization", kind="ecdf", by="arrival_rate", facet=False)
    assert title_of(figure) == (
        "Empirical distribution of 4 to 6 replicates; each replicate's mean over service_rate"
    )
    assert figure.axes[0].get_xlabel() == "Utilization"  # a formula long name, units "1"
    plt.close(figure)
    # by default a factor of two levels is shown in panels, not averaged over
    figure = plot(dataset, "utilization", kind="ecdf", by="arrival_rate")
    assert title_of(figure) == "Empirical distribution of 4 to 6 replicates"
    titles = [axes.get_title() for axes in figure.axes]
    assert titles == ["service_rate = fast", "service_rate = slow"]
    plt.close(figure)
    figure = plot(dataset, "utilization", x="arrival_rate", where={"arrival_rate": [0.3, 0.9]})
    assert title_of(figure) == "Mean and 95% interval over 6 replicates"
    plt.close(figure)


def test_points_without_values_are_counted_in_the_title(paper_results):
    """Every task of one cell has no value (as when it failed or never ran): its point is not
    drawn, the title says so, and the replicates it states are those of the points drawn."""
    dataset = campaign.open_results(paper_results).copy(deep=True)
    dataset["utilization"].loc[{"arrival_rate": 0.9, "service_rate": "fast"}] = np.nan
    figure = plot(dataset, "utilization", x="arrival_rate", where={"arrival_rate": [0.3, 0.9]})
    assert title_of(figure) == (
        "Mean and 95% interval over 6 replicates; 1 point without values not drawn"
    )
    plt.close(figure)
    figure = plot(dataset, "utilization", kind="box", x="arrival_rate", by="service_rate")
    assert title_of(figure).endswith("; 1 point without values not drawn")
    renderer = figure.canvas.get_renderer()  # the longer title stays clear of the legend
    title = figure.get_suptitle() and figure._suptitle.get_window_extent(renderer)
    assert not title.overlaps(figure.legends[0].get_window_extent(renderer))
    assert not title_of(figure).startswith("0")  # not "0 to 6 replicates"
    plt.close(figure)


def test_paired_differences_are_the_intervals_compare_computes(paper_results):
    dataset = campaign.open_results(paper_results)
    figure = plot(
        dataset, "mean_wait", kind="difference", x="arrival_rate", by="service_rate",
        baseline="fast", log="none",
    )  # fmt: skip
    (axes,) = figure.axes
    result = campaign.compare(dataset, "service_rate", "fast", "mean_wait", by=["arrival_rate"])
    assert result.attrs["paired"] == 1
    (line,) = [line for line in axes.lines if line.get_gid() == "series0"]
    (band,) = [c for c in axes.collections if c.get_gid() == "series0-interval"]
    slow = result.sel(service_rate="slow")
    assert line.get_xdata() == pytest.approx(RATES)
    assert line.get_ydata() == pytest.approx(slow["difference"].values, rel=1e-12)
    edges = band.get_paths()[0].vertices
    for i, rate in enumerate(RATES):  # the band's edges at each rate: the paired interval
        at = edges[np.isclose(edges[:, 0], rate), 1]
        assert at.min() == pytest.approx(float(slow["difference_low"][i]), rel=1e-12)
        assert at.max() == pytest.approx(float(slow["difference_high"][i]), rel=1e-12)
    assert title_of(figure) == (
        "Difference from service_rate = fast, paired 95% interval over 4 to 6 replicates"
    )
    assert axes.get_ylabel().replace("\n", " ") == "Difference in mean waiting time in queue (s)"
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["slow"]
    plt.close(figure)


def test_an_ecdf_steps_through_each_series_replicates_per_panel(paper_results):
    dataset = campaign.open_results(paper_results)
    figure = plot(dataset, "mean_wait", kind="ecdf", by="service_rate", facet="arrival_rate")
    assert len(figure.axes) == 3
    assert [a.get_title() for a in figure.axes] == [f"arrival_rate = {r}" for r in RATES]
    for axes, rate in zip(figure.axes, RATES):
        for i, level in enumerate(["fast", "slow"]):
            (line,) = [line for line in axes.lines if line.get_gid() == f"series{i}"]
            values = np.sort(
                replicates(dataset, "mean_wait", arrival_rate=rate, service_rate=level)
            )
            n = values.size
            assert line.get_xdata() == pytest.approx(np.concatenate([[values[0]], values]))
            assert line.get_ydata() == pytest.approx(np.concatenate([[0], np.arange(1, n + 1) / n]))
    assert figure.axes[1].get_xlabel().replace("\n", " ") == "Mean waiting time in queue (s)"
    assert figure.axes[0].get_ylabel().replace("\n", " ") == "Fraction of replicates"
    plt.close(figure)


def test_box_plots_of_several_metrics_in_facets(paper_results, tmp_path):
    dataset = campaign.open_results(paper_results)
    figure = plot(
        dataset, ["mean_wait", "max_wait"], kind="box", x="arrival_rate", facet="service_rate",
        size="column",
    )  # fmt: skip
    assert len(figure.axes) == 4  # a row per metric, a column per service rate
    top_left, top_right, bottom_left, _ = figure.axes
    assert [top_left.get_title(), top_right.get_title()] == [
        "service_rate = fast",
        "service_rate = slow",
    ]
    assert top_left.get_ylabel().replace("\n", " ") == "Mean waiting time in queue (s)"
    assert bottom_left.get_ylabel().replace("\n", " ") == "Maximum waiting time in queue (s)"
    medians = [line for line in top_right.lines if line.get_gid() == "series0-median"]
    expected = [
        np.median(replicates(dataset, "mean_wait", arrival_rate=rate, service_rate="slow"))
        for rate in RATES
    ]
    assert [m.get_ydata()[0] for m in medians] == pytest.approx(expected, rel=1e-12)
    paths = write_figures(figure, tmp_path, "box", ("png", "pdf"))
    assert pdf_fonts(paths[1]) and "Type 3" not in pdf_fonts(paths[1])
