"""Figures for a paper: only measurements, dodged points for categories, lines and bands for
numbers, log axes where values span decades, 14 series told apart, nothing clipped; read back
from the files written (SVG text and matplotlib artists), not just their existence."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.render.figures import figure_metrics, left_out_metrics, plot_metric, style

TRACE = Path(__file__).resolve().parents[1] / "data" / "KTH-SP2-1996-2.1-cln.swf.gz"
STRATEGIES = [
    "random", "mlp", "mpl", "lbal_s", "lbal_t", "lbal_w", "mlb",
    "mct", "mwt", "mwwt_s", "mwwt_t", "mwwt_w", "mst", "mswct_w",
]  # fmt: skip
GRID_SPEC = f"""
name: grid-figures
model: grid
params: {{trace: {TRACE}, machines: [64, 36], jobs: 100}}
factors:
  strategy: [{", ".join(STRATEGIES)}]
  local_scheduler: [fcfs, easy]
paired: [strategy]
replicates: 2
seed: 3
output: out
"""
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"


@pytest.fixture(scope="module")
def grid(tmp_path_factory, scheduler_address):
    """The 14 allocation strategies of the two-level grid on a real trace slice: 14 series,
    and the model's constant counts and trace digest among the metrics."""
    folder = tmp_path_factory.mktemp("grid-figures")
    (folder / "spec.yaml").write_text(GRID_SPEC)
    campaign.run(folder / "spec.yaml", scheduler=scheduler_address, progress=False)
    return folder / "out"


def series_markers(svg: Path) -> dict[int, list[float]]:
    """Per series (the ``seriesN`` groups the figure names), the x of its markers."""
    root = ET.parse(svg).getroot()
    found = {}
    for group in root.iter(f"{SVG}g"):
        match = re.fullmatch(r"series(\d+)", group.get("id", ""))
        if match:
            found[int(match.group(1))] = [float(u.get("x")) for u in group.iter(f"{SVG}use")]
    return found


def svg_texts(svg: Path) -> list[str]:
    return [t.text or "" for t in ET.parse(svg).getroot().iter(f"{SVG}text")]


def test_digests_and_constants_are_left_out_and_named(grid):
    dataset = campaign.open_results(grid)
    skipped = left_out_metrics(dataset)
    assert skipped["digest_log1"] == "digest of an input, not a measurement"
    assert skipped["sites"] == "constant: 2 everywhere"
    assert skipped["processors"] == "constant: 100 everywhere"
    assert skipped["n_dropped_too_wide"] == "constant: 0 everywhere"
    shown = figure_metrics(dataset)
    assert {"mean_wait", "mean_bsld", "swct_w", "makespan"} <= set(shown)
    assert not set(shown) & set(skipped)
    for metric in shown:  # what is left varies somewhere
        values = dataset[metric].values
        assert np.nanmin(values) < np.nanmax(values), metric


def test_categories_are_dodged_points_one_series_per_strategy(grid, tmp_path):
    dataset = campaign.open_results(grid)
    figure = plot_metric(dataset, "mean_wait", x="local_scheduler", by="strategy")
    axes = figure.axes[0]
    offsets = [(i - 6.5) * 0.8 / 14 for i in range(14)]
    for i, strategy in enumerate(STRATEGIES):
        (points,) = [line for line in axes.lines if line.get_gid() == f"series{i}"]
        assert points.get_linestyle() == "None"  # categories are not joined by lines
        assert points.get_xdata() == pytest.approx([0 + offsets[i], 1 + offsets[i]])
        means = dataset["mean_wait"].sel(strategy=strategy).mean("replicate").values
        assert points.get_ydata() == pytest.approx(means, rel=1e-12)
    assert [t.get_text() for t in axes.get_xticklabels()] == ["fcfs", "easy"]
    styles = style(14)
    assert len(set(styles)) == 14 and len({colour for colour, _ in styles}) == 14
    svg = tmp_path / "wait.svg"
    figure.savefig(svg, bbox_inches="tight")
    plt.close(figure)
    markers = series_markers(svg)
    assert sorted(markers) == list(range(14))
    for category in (0, 1):  # 14 distinct x positions per category, evenly spaced
        xs = [markers[i][category] for i in range(14)]
        steps = np.diff(xs)
        assert np.all(steps > 0) and steps == pytest.approx(np.full(13, steps[0]), rel=1e-3)
    texts = svg_texts(svg)
    assert set(STRATEGIES) <= set(texts) and "strategy" in texts  # the legend, as text


def test_a_14_series_legend_sits_outside_the_axes_and_nothing_is_clipped(grid, tmp_path):
    dataset = campaign.open_results(grid)
    figure = plot_metric(dataset, "mean_bsld", x="local_scheduler", by="strategy")
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    (legend,) = figure.legends
    assert len(legend.get_texts()) == 14
    box = legend.get_window_extent(renderer)
    assert box.x0 >= axes.get_window_extent(renderer).x1  # beside the data, not over it
    # everything drawn (tick labels, axis labels, title, legend) lies within the figure
    drawn = figure.get_tightbbox(renderer)
    page = figure.bbox_inches
    assert page.x0 <= drawn.x0 and drawn.x1 <= page.x1 + 1e-9
    assert page.y0 <= drawn.y0 and drawn.y1 <= page.y1 + 1e-9
    pixels = figure.bbox
    for text in [axes.xaxis.label, axes.yaxis.label, axes.title, legend.get_title()]:
        extent = text.get_window_extent(renderer)
        assert pixels.x0 <= extent.x0 and extent.x1 <= pixels.x1, text.get_text()
        assert pixels.y0 <= extent.y0 and extent.y1 <= pixels.y1, text.get_text()
    plt.close(figure)


def test_numbers_are_lines_with_bands_on_log_axes_when_they_span_decades(paper_results):
    dataset = campaign.open_results(paper_results)
    figure = plot_metric(dataset, "mean_wait", x="arrival_rate", by="service_rate")
    axes = figure.axes[0]
    # arrival rates 0.05 to 0.9 (18x), mean waits about 0.02 to 7 s: both axes logarithmic
    assert axes.get_xscale() == "log" and axes.get_yscale() == "log"
    lines = [line for line in axes.lines if (line.get_gid() or "").startswith("series")]
    assert [line.get_linestyle() for line in lines] == ["-", "-"]
    bands = [c for c in axes.collections if (c.get_gid() or "").endswith("-interval")]
    assert len(bands) == 2
    for line, band, level in zip(lines, bands, ["fast", "slow"]):
        assert line.get_xdata() == pytest.approx([0.05, 0.3, 0.9])
        cell = dataset.sel(service_rate=level)
        assert line.get_ydata() == pytest.approx(cell["mean_wait_mean"].values, rel=1e-12)
        edges = band.get_paths()[0].vertices[:, 1]
        assert edges.min() == pytest.approx(cell["mean_wait_ci_low"].values.min(), rel=1e-9)
        assert edges.max() == pytest.approx(cell["mean_wait_ci_high"].values.max(), rel=1e-9)
    plt.close(figure)
    # utilization spans 0.026 to 0.9 too; on request, linear axes
    figure = plot_metric(dataset, "utilization", x="arrival_rate", log="none")
    assert figure.axes[0].get_xscale() == figure.axes[0].get_yscale() == "linear"
    plt.close(figure)
    # values within one decade stay linear unless asked
    narrow = dataset.sel(arrival_rate=[0.3, 0.9])
    figure = plot_metric(narrow, "utilization", x="arrival_rate", by="service_rate")
    assert figure.axes[0].get_yscale() == "linear"
    plt.close(figure)
    figure = plot_metric(narrow, "utilization", x="arrival_rate", log="y")
    assert figure.axes[0].get_xscale() == "linear" and figure.axes[0].get_yscale() == "log"
    plt.close(figure)


def test_plot_writes_png_pdf_and_svg_into_the_results_folder(paper_results, capsys):
    assert main(["plot", str(paper_results), "--metric", "mean_wait"]) == 0
    folder = paper_results / "figures"
    paths = [folder / f"mean_wait.{fmt}" for fmt in ("png", "pdf", "svg")]
    assert capsys.readouterr().out == "".join(f"plot: {p}\n" for p in paths)
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:5] == b"%PDF-"
    markers = series_markers(paths[2])  # by the paired factor: fast and slow, 3 rates each
    assert sorted(markers) == [0, 1] and [len(m) for m in markers.values()] == [3, 3]
    texts = svg_texts(paths[2])
    assert {"fast", "slow", "service_rate", "arrival_rate"} <= set(texts)
    # the title says what is drawn and over what; labels are the declared long name and units
    assert "Mean and 95% interval over 4 to 6 replicates" in texts
    assert "Mean waiting time in queue (s)" in texts


def test_a_metric_with_nothing_to_plot_is_one_line(grid, tmp_path, capsys):
    out = tmp_path / "p.svg"
    for metric, reason in [
        ("sites", "constant: 2 everywhere"),
        ("digest_log1", "digest of an input, not a measurement"),
    ]:
        assert main(["plot", str(grid), "--metric", metric, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(
            f"campaign: error: --metric {metric!r} has nothing to plot ({reason}); "
            "metrics to plot: mean_wait, "
        )
        assert err.count("\n") == 1
    assert main(["plot", str(grid), "--metric", "mean_wait", "--log", "x", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --log x: the x axis (local_scheduler) is not numeric\n"
    )
    assert not out.exists()


def test_the_report_draws_no_figure_of_a_digest_or_a_constant(grid, tmp_path):
    from campaign.render.report import write_report

    dataset = campaign.open_results(grid)
    chosen = ["mean_wait", "sites", "digest_log1", "n_dropped_size"]
    page = write_report(dataset, tmp_path / "r", metrics=chosen).read_text()
    written = sorted(p.name for p in (tmp_path / "r" / "figures").iterdir())
    assert written == ["mean_wait.pdf", "mean_wait.png", "mean_wait.svg"]
    assert re.findall(r'<section class="metric" id="metric-(\w+)">', page) == ["mean_wait"]
    assert page.count('src="data:image/png;base64,') == 1
    left_out = page[page.index('<h2 id="left-out">') :].split("</ul>")[0]
    assert re.findall(r"<li><code>(\w+)</code>: ([^<]*)</li>", left_out) == [
        ("sites", "constant: 2 everywhere"),
        ("digest_log1", "digest of an input, not a measurement"),
        ("n_dropped_size", "constant: 0 everywhere"),
    ]


def test_an_interval_beside_a_cell_without_one_is_drawn_as_a_bar():
    """A band joins neighbouring intervals: a cell whose neighbours have none (a single
    replicate, NaN) still shows its own, as a bar."""
    values = np.full((2, 2, 4), np.nan)
    values[0] = [[10.0, 11.0, 12.0, 13.0], [20.0, 21.0, 22.0, 23.0]]  # a: intervals at both
    values[1, 0] = [10.0, 11.0, 12.0, 13.0]  # b at load 1: 4 replicates; at load 2 only one
    values[1, 1, 0] = 30.0
    dataset = xr.Dataset(
        {
            "y": (("strategy", "load", "replicate"), values),
            "status": (("strategy", "load", "replicate"), np.isfinite(values).astype("i1")),
        },
        {"strategy": ["a", "b"], "load": [1.0, 2.0], "replicate": np.arange(4)},
        attrs={"confidence": 0.95},
    )
    figure = campaign.plot(dataset, "y", x="load", by="strategy")
    axes = figure.axes[0]
    half = 3.182446305284263 * np.sqrt(5 / 3) / 2  # t(0.975, 3) sd / sqrt(4) = 2.0543
    (bars,) = [c for c in axes.collections if c.get_gid() == "series1-interval-bars"]
    (segment,) = bars.get_segments()
    assert np.ravel(segment).tolist() == pytest.approx([1.0, 11.5 - half, 1.0, 11.5 + half])
    assert not [c for c in axes.collections if c.get_gid() == "series0-interval-bars"]
    plt.close(figure)


def test_each_figure_file_names_the_results_it_was_drawn_from(paper_results, tmp_path):
    """Kept for a paper after results.nc was written again, a figure says which results it
    shows: results.nc's digest, time of writing and spec digest, in its metadata."""
    from PIL import Image

    attrs = campaign.open_results(paper_results).attrs
    source = (
        f"campaign results {attrs['results_digest']} (results.nc created {attrs['created']}, "
        f"spec {attrs['spec_digest']})"
    )
    png, pdf, svg = (tmp_path / f"wait.{suffix}" for suffix in ("png", "pdf", "svg"))
    for path in (png, pdf, svg):
        assert campaign.plot(paper_results, "mean_wait", out=path) == path
    assert Image.open(png).text["Source"] == source
    escaped = source.replace("(", "\\(").replace(")", "\\)")
    assert f"/Subject ({escaped})".encode() in pdf.read_bytes()
    assert f"<dc:source>{source}</dc:source>" in svg.read_text()
    campaign.report(paper_results, out=tmp_path / "report")  # the report's figures/ too
    assert Image.open(tmp_path / "report" / "figures" / "mean_wait.png").text["Source"] == source


def test_a_level_without_an_interval_gets_no_bar_on_a_categorical_axis():
    """A bar of length 0 would read as an exact value: a level with one replicate has none."""
    values = np.array([[10.0, 11.0, 12.0, 13.0], [30.0, np.nan, np.nan, np.nan]])
    dataset = xr.Dataset(
        {
            "y": (("strategy", "replicate"), values),
            "status": (("strategy", "replicate"), np.isfinite(values).astype("i1")),
        },
        {"strategy": ["a", "b"], "replicate": np.arange(4)},
        attrs={"confidence": 0.95},
    )
    figure = campaign.plot(dataset, "y", x="strategy")
    axes = figure.axes[0]
    half = 3.182446305284263 * np.sqrt(5 / 3) / 2  # t(0.975, 3) sd / sqrt(4) = 2.0543
    (line,) = [line for line in axes.lines if line.get_gid() == "series0"]
    assert line.get_ydata().tolist() == [11.5, 30.0]
    (bars,) = [c for c in axes.collections if c.get_segments()]
    segments = [np.ravel(s).tolist() for s in bars.get_segments() if len(s)]
    assert segments == [pytest.approx([0.0, 11.5 - half, 0.0, 11.5 + half])]
    caps = [line.get_ydata() for line in axes.lines if line.get_gid() != "series0"]
    assert [np.isfinite(np.asarray(c, dtype=float)).tolist() for c in caps] == [
        [True, False],
        [True, False],
    ]
    plt.close(figure)


def test_a_mean_or_a_replicate_at_inf_is_named_in_the_title_not_left_out_unsaid():
    """No axis draws inf (the mean wait of jobs that never start), which `query` shows: the
    title counts the points and values a figure leaves out for it."""
    values = np.array([[1.0, 2.0, 3.0, np.inf], [5.0, 6.0, 7.0, -np.inf], [1.0, 2.0, 3.0, 4.0]])
    dataset = xr.Dataset(
        {
            "y": (("strategy", "replicate"), values),
            "status": (("strategy", "replicate"), np.ones(values.shape, "i1")),
        },
        {"strategy": ["a", "b", "c"], "replicate": np.arange(4)},
        attrs={"confidence": 0.95},
    )
    titles = {
        kind: campaign.plot(dataset, "y", kind, x=x, by=by).get_suptitle().replace("\n", " ")
        for kind, x, by in [("mean", "strategy", None), ("box", "strategy", None)]
        + [("ecdf", None, "strategy")]
    }
    assert titles["mean"] == (
        "Mean and 95% interval over 4 replicates; 1 point at +inf, 1 point at -inf not drawn"
    )
    assert titles["box"].endswith("; 1 value at +inf, 1 value at -inf not drawn")
    assert titles["ecdf"].endswith("; 1 value at +inf, 1 value at -inf not drawn")
    finite = dataset.assign(y=dataset["y"].where(np.isfinite(dataset["y"]), 0.0))
    assert "inf" not in campaign.plot(finite, "y", x="strategy").get_suptitle()


@pytest.mark.parametrize("kind", ["box", "violin", "ecdf"])
def test_a_confidence_is_refused_by_a_figure_that_draws_no_interval(kind):
    """``--kind box --confidence 0.9`` drew the same figure as without it: box, violin and
    ECDF figures draw the replicates, no interval."""
    values = np.array([[10.0, 11.0, 12.0], [30.0, 31.0, 29.0]])
    dataset = xr.Dataset(
        {
            "y": (("strategy", "replicate"), values),
            "status": (("strategy", "replicate"), np.ones(values.shape, "i1")),
        },
        {"strategy": ["a", "b"], "replicate": np.arange(3)},
        attrs={"confidence": 0.95},
    )
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.plot(dataset, "y", kind, confidence=0.9)
    assert str(caught.value) == (
        f"confidence is for kinds 'mean' and 'difference' (their intervals), not {kind!r}, "
        "which draws the replicates"
    )
    plt.close("all")
