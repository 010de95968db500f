"""The `campaign` command: validate, plan, status, query (table, csv, json) and its errors."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

import campaign
from campaign.cli.main import main
from tests.conftest import HTMLCells

SPEC = """
name: cli-test
model: mm1
params: {customers: 500}
factors:
  arrival_rate: [0.3, 0.6]
  service_rate: {fast: 2.0, slow: 1.0}
replicates: 4
seed: 17
output: out
"""


@pytest.fixture(scope="module")
def finished(run_campaign):
    """The spec of a finished campaign, and its results."""
    output = run_campaign("cli", SPEC)
    return output.parent / "spec.yaml", campaign.open_results(output)


def test_validate_prints_the_design(finished, capsys):
    path, _ = finished
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "factor arrival_rate: 2 levels (numbers): 0.3, 0.6" in out
    assert "factor service_rate: 2 levels: fast = 2.0 (number), slow = 1.0 (number)" in out
    assert "design: 4 cells x 4 replicates = 16 tasks; seed 17" in out


def test_plan_and_status_report_done_from_the_ledger(finished, capsys):
    path, _ = finished
    assert main(["plan", str(path)]) == 0
    assert "plan: 16 done, 0 failed (will be retried), 0 missing; 0 tasks would run" in (
        capsys.readouterr().out
    )
    assert main(["status", str(path)]) == 0
    assert "16 tasks: 16 done, 0 failed, 0 missing" in capsys.readouterr().out


def test_validate_plan_and_status_print_the_absolute_output_folder(
    finished, capsys, tmp_path, monkeypatch
):
    path, _ = finished
    monkeypatch.chdir(tmp_path)
    relative = os.path.relpath(path, tmp_path)
    for command in ("validate", "plan", "status"):
        assert main([command, str(relative)]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert f"  output: {path.parent / 'out'}" in lines, command


def test_query_csv_pools_other_factors_per_replicate(finished, capsys):
    path, ds = finished
    results = path.parent / "out" / "results.nc"
    code = main(
        [
            "query",
            str(results),
            "--metric",
            "mean_wait",
            "--by",
            "service_rate",
            "--where",
            "arrival_rate=0.3",
            "--format",
            "csv",
        ]
    )
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["service_rate"] for r in rows] == ["fast", "slow"]
    for row in rows:
        values = ds["mean_wait"].sel(arrival_rate=0.3, service_rate=row["service_rate"]).values
        half = stats.t.ppf(0.975, 3) * values.std(ddof=1) / 2
        assert float(row["mean_wait_mean"]) == pytest.approx(values.mean(), rel=1e-12)
        assert float(row["mean_wait_half_width"]) == pytest.approx(half, rel=1e-9)
        assert int(row["mean_wait_n"]) == 4


def test_query_json_and_table_by_every_cell(finished, capsys):
    path, ds = finished
    results = str(path.parent / "out")
    assert main(["query", results, "--metric", "max_wait", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 4
    for record in records:
        cell = ds["max_wait"].sel(
            arrival_rate=record["arrival_rate"], service_rate=record["service_rate"]
        )
        assert record["max_wait_mean"] == pytest.approx(float(cell.mean()), rel=1e-12)
    assert main(["query", results, "--metric", "max_wait", "--by", "arrival_rate"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["arrival_rate", "max_wait", "n"]
    assert len(table) == 6 and "±" in table[2]
    assert table[4] == (
        "mean ± half-width of the 95% confidence interval (Student t) over n replicates"
    )
    assert table[5].startswith("warning: some intervals rest on 4 replicate(s) (fewer than 5)")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--where", "speed=1"], "unknown factor 'speed'; factors: arrival_rate, service_rate"),
        (["--where", "arrival_rate=0.4"], "'0.4' is not a level of arrival_rate; levels: 0.3, 0.6"),
        (["--metric", "nope"], "--metric 'nope' is not in the results; metrics: mean_wait"),
        (["--by", "speed"], "--by 'speed' is not a factor"),
    ],
)
def test_query_errors_name_the_problem_and_the_choices(finished, capsys, args, message):
    path, _ = finished
    assert main(["query", str(path.parent / "out"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("module", ["campaign", "campaign.cli"])
def test_bad_spec_from_the_command_line_gives_one_line_and_exit_2(tmp_path, module):
    spec = tmp_path / "bad.yaml"
    spec.write_text("name: x\nmodel: mm1\nreplicates: 0\nseed: 1\n")
    result = subprocess.run(
        [sys.executable, "-m", module, "validate", str(spec)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"campaign: error: {spec}: replicates: 0 is not allowed; use an integer >= 1\n"
    )
    assert not (tmp_path / "outputs").exists()


def test_summary_values_match_numpy(finished):
    _, ds = finished
    assert np.array_equal(ds["mean_wait_mean"].values, ds["mean_wait"].values.mean(axis=-1))


def test_plot_draws_a_line_per_level_with_its_interval_band(finished, tmp_path, capsys):
    from campaign.render.figures import plot_metric

    path, ds = finished
    figure = plot_metric(ds, "mean_wait", x="arrival_rate", by="service_rate")
    axes = figure.axes[0]
    assert axes.get_xscale() == "linear"  # 0.3 and 0.6: no decade spanned
    bands = [c for c in axes.collections if (c.get_gid() or "").endswith("-interval")]
    for i, level in enumerate(["fast", "slow"]):
        (line,) = [line for line in axes.lines if line.get_gid() == f"series{i}"]
        values = ds["mean_wait"].sel(service_rate=level)
        assert np.allclose(line.get_ydata(), values.mean("replicate").values, rtol=1e-12)
        assert np.allclose(line.get_xdata(), [0.3, 0.6])
        half = stats.t.ppf(0.975, 3) * values.std("replicate", ddof=1).values / 2
        mean = values.mean("replicate").values
        low_high = bands[i].get_paths()[0].vertices[:, 1]
        assert np.allclose(
            sorted(set(np.round(low_high, 9))),
            sorted(np.round([*(mean - half), *(mean + half)], 9)),
        )
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["fast", "slow"]
    out = tmp_path / "p.png"
    assert main(["plot", str(path.parent / "out"), "--metric", "mean_wait", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_writes_one_page_with_a_figure_and_a_table_per_metric(finished, tmp_path):
    path, _ = finished
    folder = tmp_path / "report"
    assert main(["report", str(path.parent / "out"), "--out", str(folder)]) == 0
    text = (folder / "report.html").read_text()
    for metric in ("mean_wait", "max_wait", "utilization"):
        for fmt in ("png", "pdf", "svg"):
            assert (folder / "figures" / f"{metric}.{fmt}").stat().st_size > 1000
        assert f'<section class="metric" id="metric-{metric}">' in text
    assert text.count('src="data:image/png;base64,') == 3
    assert "name: cli-test" in text


def test_a_report_shows_the_headline_metrics_first(finished, tmp_path):
    import re

    from campaign.render.report import write_report
    from campaign.results.netcdf import open_results

    path, dataset = finished
    assert dataset.attrs["headline_metrics"] == "mean_wait"  # the model's, in results.nc
    stored = open_results(path.parent / "out")
    assert stored.attrs["headline_metrics"] == "mean_wait"
    stored.attrs["headline_metrics"] = "utilization"
    text = write_report(stored, tmp_path / "report").read_text()
    assert re.findall(r'<section class="metric" id="metric-(\w+)">', text) == [
        "utilization",
        "mean_wait",
        "max_wait",
    ]


def example_e(paired: str | None = None, **more):
    """Example E of the parallel-jobs model document as results: (mean_wait, mean_bsld,
    swct_w) per strategy, one replicate, every task ok; ``more`` strategies after A, B, C."""
    import xarray as xr

    values = {"A": (100, 2.0, 1000), "B": (150, 1.5, 1000), "C": (400, 3.0, 1100), **more}
    strategies = list(values)
    data = {
        metric: (("strategy", "replicate"), [[values[s][k]] for s in strategies])
        for k, metric in enumerate(["mean_wait", "mean_bsld", "swct_w"])
    }
    data["status"] = (("strategy", "replicate"), [[1]] * len(strategies))
    attrs = {"headline_metrics": "mean_wait mean_bsld swct_w"}
    if paired:
        attrs["paired"] = paired
    return xr.Dataset(data, coords={"strategy": strategies, "replicate": [0]}, attrs=attrs)


def test_query_rank_writes_every_format(tmp_path, capsys):
    import io
    import json

    import pandas as pd

    # Example E with a fourth strategy that has no value: unranked, last.
    path = tmp_path / "results.nc"
    example_e(D=(np.nan, np.nan, np.nan), paired="strategy").to_netcdf(path)
    header = ["rank", "strategy", "D_means(%)", "D_replicates(%)", "ci_low(%)", "ci_high(%)", "n"]
    header += ["ci_level", "ci_method"]
    # D is judged nowhere: the others' one replicate gives D_replicates, no interval; D n 0.
    expected = [(1, "A", 100 / 9), (2, "B", 50 / 3), (3, "C", 410 / 3), (None, "D", None)]

    def output(fmt):
        assert main(["query", str(path), "--rank", "strategy", "--format", fmt]) == 0
        return capsys.readouterr().out

    frame = pd.read_csv(io.StringIO(output("csv")))
    assert list(frame.columns) == header
    records = json.loads(output("json"))
    assert [list(r) for r in records] == [header] * 4
    for table in (frame.to_dict("records"), records):
        for row, (rank, level, d) in zip(table, expected, strict=True):
            assert row["strategy"] == level and pd.isna(row["ci_low(%)"])
            if rank is None:
                assert pd.isna(row["rank"]) and pd.isna(row["D_means(%)"]) and row["n"] == 0
                assert pd.isna(row["D_replicates(%)"])
            else:
                assert row["rank"] == rank and row["D_means(%)"] == pytest.approx(d)
                assert row["D_replicates(%)"] == pytest.approx(d) and row["n"] == 1
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in output("markdown").splitlines()[:6]
    ]
    # for a paper: one interval notation (D_replicates ± half-width), 4 significant digits
    paper = ["rank", "strategy", "D_means(%)", "D_replicates(%) ± half-width", "n"]
    assert rows[0] == paper and rows[1] == ["---:", "---", "---:", "---:", "---:"]
    assert rows[2:] == [
        ["1", "A", "11.11", "11.11", "1"],
        ["2", "B", "16.67", "16.67", "1"],
        ["3", "C", "136.7", "136.7", "1"],
        ["-", "D", "nan", "nan", "0"],
    ]
    latex = output("latex").splitlines()
    assert latex[0] == r"\begin{tabular}{rlrrr}"
    assert latex[4] == r"1 & A & 11.11 & 11.11 & 1 \\"

    cells = HTMLCells()
    cells.feed(output("html"))
    assert cells.rows[0] == paper
    assert cells.rows[1:] == rows[2:]


def test_the_report_ranks_with_the_words_of_query_rank(tmp_path, capsys):
    import html
    import re

    from campaign.render.report import write_report

    # a fourth strategy without values is unranked, judged nowhere: a note says so
    dataset = example_e(D=(np.nan, np.nan, np.nan), paired="strategy")
    dataset["seed"] = (("strategy", "replicate"), [[7]] * 4)  # paired: one seed per replicate
    dataset.to_netcdf(tmp_path / "results.nc")
    assert main(["query", str(tmp_path / "results.nc"), "--rank", "strategy"]) == 0
    said = capsys.readouterr().out
    assert "(the levels of strategy share seeds)" in said
    assert "\nunranked: D (no value in any instance: every task failed, missing or NaN)\n" in said
    page = write_report(dataset, tmp_path / "report").read_text()
    block = re.search(r"<h3>Ranking of strategy</h3>\n<pre>(.*?)</pre>", page, re.DOTALL)
    assert html.unescape(block.group(1)) + "\n" == said


def test_ranking_and_metric_choice_speak_python_words(tmp_path):
    import xarray as xr

    from campaign.analysis.metrics import choose_metrics
    from campaign.analysis.ranking_text import rank_levels
    from campaign.errors import CampaignError

    data = {"v": (("strategy", "replicate"), [[1.0], [2.0]])}
    data["status"] = (("strategy", "replicate"), [[1], [1]])
    dataset = xr.Dataset(data, coords={"strategy": ["a", "b"], "replicate": [0]})
    with pytest.raises(CampaignError) as error:
        rank_levels(dataset, "speed")
    assert str(error.value) == "factor 'speed' is not a factor; factors: strategy"
    with pytest.raises(CampaignError) as error:
        rank_levels(dataset, "strategy", ["w"])
    assert str(error.value) == "metrics 'w' is not in the results; metrics: v"
    with pytest.raises(CampaignError) as error:
        rank_levels(dataset, "strategy")
    assert str(error.value) == (
        "no metrics given (the results name no headline metrics); metrics: v"
    )
    assert choose_metrics(dataset, "report") == choose_metrics(dataset, "query") == ["v"]
    assert choose_metrics(dataset, "analysis") == ["v"]
    dataset["v"][:] = 3.0  # one value everywhere: nothing to analyse
    assert choose_metrics(dataset, "analysis") == []


def test_query_rank_orders_levels_by_mean_degradation(tmp_path, capsys):
    path = tmp_path / "results.nc"
    dataset = example_e()
    attrs = dict(dataset.attrs)
    dataset.to_netcdf(path)
    assert main(["query", str(path), "--rank", "strategy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == [
        "rank", "strategy", "D_means(%)", "D_replicates(%)", "ci_low(%)", "ci_high(%)", "n"
    ]  # fmt: skip
    rows = [line.split() for line in lines[2:5]]
    assert [row[:3] for row in rows] == [
        ["1", "A", "11.11"],
        ["2", "B", "16.67"],
        ["3", "C", "136.67"],
    ]
    assert lines[0].endswith(
        "95% interval over replicates, not paired (the levels of strategy have seeds of their "
        "own); best: the smallest value"
    )
    assert lines[5].startswith("D_means: degradation from the best, 100 (value - best) / |best|")
    warnings = [line for line in lines if line.startswith("warning: ")]
    assert [line.split(" (")[0] for line in warnings] == [
        "warning: strategy is not paired",
        "warning: no interval",
    ]
    dataset.attrs["paired"] = "strategy"
    dataset.to_netcdf(path)
    assert main(["query", str(path), "--rank", "strategy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(
        "95% interval over paired replicates (the levels of strategy share seeds); best: the "
        "smallest value"
    )
    assert not any("is not paired" in line for line in lines)
    with pytest.raises(SystemExit):
        main(["query", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "D_replicates (%): the same within each replicate, averaged over the replicates;" in text
    assert "n: the replicates in it" in text
    dataset.attrs = attrs
    assert main(["query", str(path), "--rank", "speed"]) == 2
    assert "--rank 'speed' is not a factor; factors: strategy" in capsys.readouterr().err
    dataset.attrs = {"model": "mm1"}  # an older file: the headline metrics of its model
    dataset.to_netcdf(path)
    assert main(["query", str(path), "--rank", "strategy"]) == 0
    assert "mean over mean_wait and over instances" in capsys.readouterr().out
    dataset.attrs = {}
    dataset.to_netcdf(path)
    assert main(["query", str(path), "--rank", "strategy"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --rank needs --metric (the results name no headline metrics); "
        "metrics: mean_wait, mean_bsld, swct_w\n"
    )


def test_workers_with_an_existing_cluster_is_refused(finished, scheduler_address, capsys):
    path, _ = finished
    code = main(["run", str(path), "--scheduler", scheduler_address, "--workers", "4"])
    assert code == 2
    assert "--workers 4 sizes the embedded cluster" in capsys.readouterr().err


def test_run_where_summarizes_the_cells_it_ran(tmp_path, scheduler_address, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    argv = ["run", str(spec), "--scheduler", scheduler_address, "--where", "arrival_rate=0.3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    summary = out.split("Summary (arrival_rate=0.3): mean ± half-width")[1].split("\n\n")[0]
    rows = [row.split() for row in summary.splitlines()[3:5]]
    # the two cells it ran, each with its 4 replicates, and no row of the levels left out
    assert [row[:2] + row[-1:] for row in rows] == [["0.3", "fast", "4"], ["0.3", "slow", "4"]]
    assert "nan" not in summary and "0.6" not in summary
    assert "8 tasks ok, 0 failed, 8 missing" in out
    assert "8 missing tasks are of levels --where left out: run them without it" in out
