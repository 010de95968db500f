"""Every selection path takes exactly the levels asked, whatever their type (boolean, integer,
float, string with a comma): query --where and --by, compare --baseline, effects, plot, rank,
report --baseline and export, each against a hand computation from the raw replicates."""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from campaign.analysis.anova import effects
from campaign.analysis.comparison import compare
from campaign.cli.main import main
from campaign.design.tasks import Design
from campaign.render.analysis_section import ranking_text
from campaign.render.comparison import render_comparison
from campaign.render.export import export
from campaign.render.figures import plot
from campaign.render.report import write_report
from campaign.results.assemble import assemble
from campaign.results.netcdf import write_netcdf
from campaign.results.table import failure_table
from campaign.spec.load import load_spec

SPEC = """
name: levels
model: nowhere:run
factors:
  flag: [false, true]
  k: [1, 2, 3]
  x: [0.5, 1.5]
  name: ["a", "b c", "c,d"]
paired: [flag]
replicates: 3
seed: 1
output: out
"""
FACTORS = ["flag", "k", "x", "name"]

# (factor, --where levels as typed, positions of the levels meant, in the order asked)
CASES = [
    ("flag", "false,true", [0, 1]),
    ("flag", "true", [1]),
    ("flag", "False", [0]),
    ("k", "3,1", [2, 0]),
    ("k", "2", [1]),
    ("x", "1.5", [1]),
    ("x", "0.5,1.5", [0, 1]),
    ("name", '"c,d",a', [2, 0]),
    ("name", "b c", [1]),
]
IDS = [f"{f}={text}" for f, text, _ in CASES]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A results file over a boolean, an integer, a float and a string factor, each level
    adding its own amount to ``v`` (flag 1000, k 100 k, x 10 x, name its position), plus
    noise drawn from the task's seed; returns (path, dataset, raw array flag x k x x x name
    x replicate)."""
    folder = tmp_path_factory.mktemp("levels")
    (folder / "spec.yaml").write_text(SPEC)
    design = Design(load_spec(folder / "spec.yaml"))
    records = {}
    for task in design.tasks():
        level = design.cell_label(task.cell)
        noise = np.random.default_rng(task.seed).random()
        value = 1000 * level["flag"] + 100 * level["k"] + 10 * level["x"] + task.cell[3] + noise
        records[task.key] = {"key": task.key, "status": "ok", "metrics": {"v": float(value)}}
    dataset = assemble(design, records, 0.95, {"v": {"units": "s", "long_name": "a value"}})
    path = folder / "results.nc"
    write_netcdf(dataset, path, failure_table(dataset, design, records))
    dataset = xr.load_dataset(path)
    raw = dataset["v"].transpose(*FACTORS, "replicate").values
    assert raw.shape == (2, 3, 2, 3, 3) and np.isfinite(raw).all()
    return path, dataset, raw


def other_factor(factor: str) -> str:
    return "k" if factor != "k" else "x"


def hand_means(raw, factor, picked, by) -> np.ndarray:
    """Mean over every value of the picked levels, per level of ``by`` (complete data:
    pooling replicate by replicate gives the plain mean)."""
    sub = np.take(raw, picked, axis=FACTORS.index(factor))
    axis = FACTORS.index(by)
    return np.array(
        [np.take(sub, i, axis=axis).mean() for i in range(sub.shape[axis])], dtype=float
    )


def levels_of(dataset, factor, picked) -> list:
    return [dataset[factor].values[i].item() for i in picked]


def run_json(capsys, argv) -> list[dict]:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("factor", "text", "picked"), CASES, ids=IDS)
def test_query_where_pools_exactly_the_levels_asked(results, capsys, factor, text, picked):
    path, dataset, raw = results
    by = other_factor(factor)
    where = ["--where", f"{factor}={text}", "--metric", "v", "--format", "json"]
    rows = run_json(capsys, ["query", str(path), "--by", by, *where])
    assert [row[by] for row in rows] == dataset[by].values.tolist()
    expected = hand_means(raw, factor, picked, by)
    assert [row["v_mean"] for row in rows] == pytest.approx(expected, rel=1e-13)
    assert {row["v_n"] for row in rows} == {3}

    rows = run_json(capsys, ["query", str(path), "--by", factor, *where])
    assert [row[factor] for row in rows] == levels_of(dataset, factor, picked)
    per_level = [hand_means(raw, factor, [i], factor)[0] for i in picked]
    assert [row["v_mean"] for row in rows] == pytest.approx(per_level, rel=1e-13)


@pytest.mark.parametrize(("factor", "text", "picked"), CASES, ids=IDS)
def test_compare_takes_the_baseline_and_the_levels_asked(results, capsys, factor, text, picked):
    path, dataset, raw = results
    baseline = str(dataset[factor].values[picked[0]])
    where = ["--where", f"{factor}={text}"] if len(picked) > 1 else []
    argv = ["compare", str(path), "--factor", factor, "--baseline", baseline, "--metric", "v"]
    rows = run_json(capsys, [*argv, "--by", "", *where, "--format", "json"])
    others = picked[1:] or [i for i in range(dataset.sizes[factor]) if i != picked[0]]
    assert [row[factor] for row in rows] == levels_of(dataset, factor, others)
    base = hand_means(raw, factor, [picked[0]], factor)[0]
    assert [row["baseline_mean"] for row in rows] == pytest.approx([base] * len(rows), rel=1e-13)
    means = [hand_means(raw, factor, [i], factor)[0] for i in others]
    assert [row["mean"] for row in rows] == pytest.approx(means, rel=1e-13)
    assert [row["difference"] for row in rows] == pytest.approx(
        [m - base for m in means], rel=1e-12
    )


@pytest.mark.parametrize(("factor", "text", "picked"), CASES, ids=IDS)
def test_effects_analyse_the_values_of_the_levels_asked(results, factor, text, picked):
    _, dataset, raw = results
    result = effects(dataset, "v", [f"{factor}={text}"])
    values = np.take(raw, picked, axis=FACTORS.index(factor))
    assert result.attrs["observations"] == values.size
    total = float(((values - values.mean()) ** 2).sum())
    assert result.attrs["total_sum_sq"] == pytest.approx(total, rel=1e-12)
    main_effects = json.loads(result.attrs["main_effects"])
    if len(picked) > 1:
        assert list(main_effects[factor]) == [str(v) for v in levels_of(dataset, factor, picked)]
    else:
        assert factor not in main_effects


@pytest.mark.parametrize(("factor", "text", "picked"), CASES, ids=IDS)
def test_plot_draws_a_series_per_level_asked(results, factor, text, picked):
    _, dataset, raw = results
    x = other_factor(factor)
    # no panels: the third factor averaged over, as the hand means are
    figure = plot(dataset, "v", x=x, by=factor, where=[f"{factor}={text}"], facet=False)
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert legend == [str(v) for v in levels_of(dataset, factor, picked)]
    axes = figure.axes[0]
    for i, level in enumerate(picked):
        (line,) = [line for line in axes.lines if line.get_gid() == f"series{i}"]
        expected = hand_means(raw, factor, [level], x)
        assert line.get_ydata() == pytest.approx(expected, rel=1e-13)


def hand_degradation(raw, factor, picked_axis, picked) -> np.ndarray:
    """D per level of ``factor``: the mean over the instances (cells of the other factors)
    of 100 (cell mean / best cell mean - 1), on the levels picked of ``picked_axis``."""
    sub = np.take(raw, picked, axis=FACTORS.index(picked_axis)).mean(axis=-1)
    sub = np.moveaxis(sub, FACTORS.index(factor), 0)
    deg = 100 * (sub / sub.min(axis=0) - 1)
    return deg.reshape(deg.shape[0], -1).mean(axis=1)


@pytest.mark.parametrize(("factor", "text", "picked"), CASES, ids=IDS)
def test_rank_ranks_over_the_levels_asked(results, capsys, factor, text, picked):
    path, dataset, raw = results
    ranked = factor if len(picked) > 1 else ("flag" if factor != "flag" else "k")
    argv = ["query", str(path), "--rank", ranked, "--metric", "v", "--format", "json"]
    rows = run_json(capsys, [*argv, "--where", f"{factor}={text}"])
    levels = dataset[ranked].values
    shown = picked if ranked == factor else range(len(levels))
    expected = dict(
        zip([levels[i].item() for i in shown], hand_degradation(raw, ranked, factor, picked))
    )
    got = {row[ranked]: row["D_means(%)"] for row in rows}
    assert got == pytest.approx(expected, rel=1e-9)  # the ranking's JSON has 10 digits


@pytest.mark.parametrize(
    ("factor", "baseline"),
    [("flag", None), ("flag", "True"), ("k", "2"), ("x", "1.5"), ("name", "c,d")],
)
def test_report_compares_and_ranks_against_the_baseline_asked(results, tmp_path, factor, baseline):
    _, dataset, _ = results
    option = None if baseline is None else f"{factor}={baseline}"
    page = write_report(dataset, tmp_path, ["v"], baseline=option).read_text()
    level = baseline or "False"
    comparison = render_comparison(compare(dataset, factor, level, "v")).rstrip("\n")
    assert f"each level of {factor} against {level};" in comparison
    assert html.escape(comparison) in page
    assert html.escape(ranking_text(dataset, factor, ["v"])) in page
    assert 'class="note">' not in page.split('id="analysis"')[1].split('id="failures"')[0]


def test_export_keeps_every_level_with_its_values(results, tmp_path):
    _, dataset, raw = results
    (table, _) = export(dataset, None, tmp_path / "results.csv")
    frame = pd.read_csv(table, keep_default_na=False)
    for factor in FACTORS:
        for i, level in enumerate(dataset[factor].values):
            rows = frame[frame[factor].astype(str) == str(level)]
            expected = np.take(raw, [i], axis=FACTORS.index(factor))
            assert sorted(rows["v"]) == pytest.approx(sorted(expected.ravel()), rel=1e-15)


@pytest.mark.parametrize(
    ("clause", "message"),
    [
        (
            "name=c,d",
            "--where 'name=c,d': 'c' is not a level of name; levels: a, b c, \"c,d\" (a level "
            "holding a comma goes in double quotes: --where 'name=\"c,d\"')",
        ),
        ('name="c,d', "--where 'name=\"c,d': unexpected end of data; write levels as a,b"),
        ("flag=yes", "--where 'flag=yes': 'yes' is not a level of flag; levels: False, True"),
    ],
)
def test_a_level_that_is_not_there_is_one_line_saying_how_to_quote(
    results, capsys, clause, message
):
    path, _, _ = results
    assert main(["query", str(path), "--where", clause]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"campaign: error: {message}")
    assert captured.err.count("\n") == 1
