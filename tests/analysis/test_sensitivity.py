"""`campaign sensitivity`: real campaigns of models whose sensitivities are known (Ishigami's
function, a linear model) on the shared Dask cluster, analysed from their results.nc."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import site
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from distributed import Client
from SALib.analyze import sobol

import campaign
from campaign.analysis.point_outputs import point_outputs
from campaign.analysis.sensitivity import check_saltelli_blocks, describe, sensitivity
from campaign.cli.main import main
from campaign.design.points import _generator, saltelli_points
from campaign.design.tasks import Design, cell_params
from campaign.errors import CampaignError
from campaign.results.assemble import assemble
from campaign.results.netcdf import open_results, write_netcdf
from campaign.spec.load import load_spec

FOLDER = Path(__file__).resolve().parent
sys.path.insert(0, str(FOLDER))
import sampled_models  # noqa: E402

ISHIGAMI = """
name: ishigami
model: sampled_models:ishigami
params: {{{params}}}
factors:
  x1: {{low: -3.141592653589793, high: 3.141592653589793}}
  x2: {{low: -3.141592653589793, high: 3.141592653589793}}
  x3: {{low: -3.141592653589793, high: 3.141592653589793}}
design: {{saltelli: {{points: {points}, second_order: {second}}}}}
replicates: {replicates}
seed: 26
output: out
"""


@pytest.fixture(scope="module")
def cluster(scheduler_address):
    """The shared cluster, its workers able to import this folder's models."""
    with Client(scheduler_address) as client:
        client.run(site.addsitedir, str(FOLDER))
    return scheduler_address


def run(folder: Path, text: str, cluster: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "spec.yaml"
    spec.write_text(textwrap.dedent(text))
    campaign.run(spec, scheduler=cluster, progress=False)
    return folder / "out"


def ishigami(folder, cluster, points=512, second="false", replicates=1, params=""):
    text = ISHIGAMI.format(points=points, second=second, replicates=replicates, params=params)
    return run(folder, text, cluster)


def csv_rows(capsys, *args) -> list[dict[str, str]]:
    assert main(["sensitivity", *map(str, args), "--format", "csv"]) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_sobol_indices_of_ishigami_hold_the_analytical_values(tmp_path, cluster, capsys):
    out = ishigami(tmp_path, cluster)
    assert main(["sensitivity", str(out), "--metric", "y", "--format", "csv"]) == 0
    printed = capsys.readouterr().out
    columns = "factor,S1,S1_conf,ST,ST_conf,noise_share,ci_level,ci_method"
    assert printed.splitlines()[0] == columns
    rows = list(csv.DictReader(io.StringIO(printed)))
    assert [row["factor"] for row in rows] == ["x1", "x2", "x3"]
    truth = sampled_models.ishigami_indices()
    for row in rows:
        s1, st = truth[row["factor"]]
        assert abs(float(row["S1"]) - s1) <= float(row["S1_conf"]), row
        assert abs(float(row["ST"]) - st) <= float(row["ST_conf"]), row
        assert float(row["S1_conf"]) < 0.1 and float(row["ST_conf"]) < 0.1
    # the same numbers as SALib's own analysis of its own sample of the function
    unit = saltelli_points(512, 3, False, 26)
    x = -math.pi + unit * 2 * math.pi
    y = np.array([sampled_models.ishigami(dict(zip(("x1", "x2", "x3"), p)), 0)["y"] for p in x])
    problem = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[0, 1]] * 3}
    expected = sobol.analyze(problem, y, calc_second_order=False, num_resamples=1000, seed=26)
    for j, row in enumerate(rows):
        assert float(row["S1"]) == pytest.approx(expected["S1"][j], rel=1e-12)
        assert float(row["ST_conf"]) == pytest.approx(expected["ST_conf"][j], rel=1e-12)
    assert main(["sensitivity", str(out), "--metric", "y"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(
        "y: Sobol indices (S1 first order, ST total), saltelli design of 2560 points\n"
    )
    assert "*_conf: half-width of the 95% bootstrap interval (1000 resamples)\n" in text
    assert "warning" not in text  # 2560 points: intervals of a few hundredths


def test_the_sample_is_salibs_saltelli_sample_drawn_from_the_campaign_seed(tmp_path, cluster):
    from SALib.sample import sobol as sobol_sample

    out = ishigami(tmp_path, cluster, points=8)
    results = open_results(out)
    problem = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[-math.pi, math.pi]] * 3}
    drawn = sobol_sample.sample(problem, 8, calc_second_order=False, seed=_generator(26, 0))
    stored = np.column_stack([results[n].values for n in ("x1", "x2", "x3")])
    np.testing.assert_allclose(stored, drawn, rtol=1e-12)
    assert results.attrs["design_samples"] == "8"
    assert results.attrs["design_second_order"] == "false"
    # the blocks name the factors: taken in another order, they are refused
    outputs = point_outputs(results, "y", None, whole=True)
    check_saltelli_blocks(outputs, False)
    swapped = dataclasses.replace(outputs, names=["x2", "x1", "x3"], values=stored[:, [1, 0, 2]])
    with pytest.raises(CampaignError, match="the step of x2 moves other factors too"):
        check_saltelli_blocks(swapped, False)


def test_second_order_indices_find_the_x1_x3_interaction(tmp_path, cluster, capsys):
    out = ishigami(tmp_path, cluster, points=256, second="true")
    rows = csv_rows(capsys, out, "--metric", "y", "--second-order")
    assert [(r["factor"], r["with"]) for r in rows] == [("x1", "x2"), ("x1", "x3"), ("x2", "x3")]
    truth = sampled_models.ishigami_indices()
    interaction = truth["x1"][1] - truth["x1"][0]  # V13 / V
    expected = {("x1", "x2"): 0.0, ("x1", "x3"): interaction, ("x2", "x3"): 0.0}
    for row in rows:
        assert abs(float(row["S2"]) - expected[row["factor"], row["with"]]) <= float(
            row["S2_conf"]
        ), row


def test_replicates_are_averaged_per_point_and_their_noise_is_stated(tmp_path, cluster):
    out = ishigami(tmp_path, cluster, points=64, replicates=3, params="noise: 2.0")
    results = open_results(out)
    result = sensitivity(results, "y")
    y = results["y"].values  # point x replicate
    means, variances = y.mean(axis=1), y.var(axis=1, ddof=1)
    assert result.noise_share == pytest.approx(np.mean(variances / 3) / np.var(means, ddof=1))
    assert 0.01 < result.noise_share < 0.2
    problem = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[0, 1]] * 3}
    expected = sobol.analyze(problem, means, calc_second_order=False, num_resamples=1000, seed=26)
    np.testing.assert_allclose(result.table["ST"], expected["ST"], rtol=1e-12)
    from campaign.render.sensitivity import render_sensitivity

    text = render_sensitivity([result])
    assert (
        "each point's output is the mean of its 3 replicates (the noise averaged out); "
        f"replicate noise left in those means: {100 * result.noise_share:.3g}% of the variance "
        "of the point means\n" in text
    )


def test_failed_points_stop_sobol_indices_and_are_left_out_of_the_others(tmp_path, cluster, capsys):
    out = ishigami(tmp_path, cluster, points=16, params="fail_above: 2.5")
    results = open_results(out)
    failed = [int(p) for p in np.flatnonzero(results["x1"].values > 2.5)]
    assert failed and int((results["status"] != 1).sum()) == len(failed)
    assert main(["sensitivity", str(out), "--metric", "y"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: sobol indices need every point of the saltelli sample (each is paired "
        f"with the others of its block); {len(failed)} points have no value (every replicate "
        f"failed or is NaN): point {', '.join(map(str, failed))}; rerun them, or use method "
        "delta, rbd_fast or regression, which leave them out\n"
    )
    result = sensitivity(results, "y", method="regression")
    assert result.left_out == failed and result.points == 80 - len(failed)
    assert main(["sensitivity", str(out), "--metric", "y", "--method", "regression"]) == 0
    assert (
        f"{len(failed)} points left out (no replicate has a value): point "
        f"{', '.join(map(str, failed))}; the indices are those of the other points, unbiased "
        "only if failing does not depend on the inputs\n" in capsys.readouterr().out
    )


LINEAR = """
name: linear
model: sampled_models:linear
params: {{noise: 0.3}}
factors:
  a: {{low: 0, high: 1}}
  b: {{low: 0, high: 2}}
  c: {{low: 1, high: 10, scale: log}}
  k: {{low: 1, high: 64, scale: log, integer: true}}
design: {design}
replicates: 2
seed: 5
output: out
"""


def test_standardized_regression_coefficients_match_a_linear_model(tmp_path, cluster, capsys):
    out = run(tmp_path, LINEAR.format(design="{latin_hypercube: {points: 200}}"), cluster)
    results = open_results(out)
    k = results["k"].values
    assert k.dtype.kind == "i" and k.min() >= 1 and k.max() <= 64
    rows = csv_rows(capsys, out, "--metric", "y")  # regression: the default on a hypercube
    assert list(rows[0]) == [
        "factor", "SRC", "SRC_conf", "r_squared", "noise_share", "ci_level", "ci_method"
    ]  # fmt: skip
    inputs = {
        "a": results["a"].values,
        "b": results["b"].values,
        "c": np.log(results["c"].values),  # a log-scaled range enters as log(value)
        "k": np.log(k),
    }
    means = results["y"].values.mean(axis=1)
    for row in rows:
        name = row["factor"]
        true = sampled_models.COEFFICIENTS[name] * inputs[name].std(ddof=1) / means.std(ddof=1)
        assert abs(float(row["SRC"]) - true) <= float(row["SRC_conf"]), row
        assert float(row["SRC_conf"]) < 0.05
    result = sensitivity(results, "y")
    exact = 3 * inputs["a"] - 2 * inputs["b"] + 0.5 * inputs["k"]
    # what the inputs explain of the means: all but the noise of a mean of two replicates
    assert result.r_squared == pytest.approx(1 - 0.3**2 / 2 / np.var(exact, ddof=1), abs=0.01)
    # first-order indices of a linear model: each term's share of the variance
    variance = np.var(means, ddof=1)
    for method in ("rbd_fast", "delta"):
        table = sensitivity(results, "y", method=method, resamples=20).table.set_index("factor")
        for name in ("a", "b", "c"):
            share = sampled_models.COEFFICIENTS[name] ** 2 * np.var(inputs[name], ddof=1)
            s1, conf = table.loc[name, "S1"], table.loc[name, "S1_conf"]
            assert abs(s1 - share / variance) <= max(conf, 0.05), (method, name)
    with pytest.raises(CampaignError) as caught:
        sensitivity(results, "one")
    assert str(caught.value) == (
        "one has the same value at every point: it depends on none of the factors, and no "
        "index is defined"
    )


def test_morris_effects_of_a_linear_model_are_its_slopes_over_each_range(tmp_path, cluster):
    design = "{morris: {trajectories: 10, levels: 4}}"
    text = LINEAR.format(design=design).replace("noise: 0.3", "noise: 0.0")
    results = open_results(run(tmp_path, text, cluster))
    assert results.sizes["point"] == 50
    table = sensitivity(results, "y").table.set_index("factor")
    # an elementary effect is the change of y per whole range of the factor (on its scale):
    # the slope times the width, 3 x 1 for a and -2 x 2 for b
    np.testing.assert_allclose(table.loc[["a", "b", "c"], "mu"], [3.0, -4.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(table.loc[["a", "b", "c"], "sigma"], [0.0, 0.0, 0.0], atol=1e-9)
    # k, integers 1..64 on a log scale, lies on the grid of 4 levels as 1, 4, 16, 64: evenly
    # spaced on its scale, so its effect is 0.5 ln k over the whole range
    np.testing.assert_allclose(table.loc["k", ["mu", "sigma"]], [0.5 * np.log(64), 0.0], atol=1e-9)


def test_a_method_the_design_cannot_carry_is_one_line(tmp_path, cluster):
    out = run(tmp_path, LINEAR.format(design="{latin_hypercube: {points: 20}}"), cluster)
    with pytest.raises(CampaignError) as caught:
        sensitivity(open_results(out), "y", method="sobol")
    assert str(caught.value) == (
        "method 'sobol' needs a saltelli design (its estimators pair the points of its "
        "blocks); these results are of a latin_hypercube design: use delta, rbd_fast, regression"
    )
    with pytest.raises(CampaignError, match="rbd_fast needs more than 40 points"):
        sensitivity(open_results(out), "y", method="rbd_fast")


def test_delta_on_too_few_points_is_one_line(tmp_path, cluster, capsys):
    """SALib's delta cuts each range into classes of at least 10 points and needs two: on 6
    points it gives NaN for every index; that is refused, saying how many points it needs."""
    out = run(tmp_path, LINEAR.format(design="{latin_hypercube: {points: 6}}"), cluster)
    assert main(["sensitivity", str(out), "--metric", "y", "--method", "delta"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "campaign: error: delta needs at least 20 points (SALib's estimator cuts each factor's "
        "range into classes of at least 10 points, and needs two); 6 points have a value: draw "
        "more points, or use method regression\n"
    )


def test_sobol_on_too_few_points_warns_and_says_how_many_would_do(tmp_path, cluster, capsys):
    out = ishigami(tmp_path, cluster, points=8)
    result = sensitivity(open_results(out), "y")
    table = result.table.set_index("factor")
    widest = float(table[["S1_conf", "ST_conf"]].to_numpy().max())
    assert widest > table["ST"].max()  # intervals wider than the indices themselves
    needed = 8 * (widest / (table["ST"].max() / 10)) ** 2
    base = 2 ** math.ceil(math.log2(needed))
    # the interval shrinks as 1 / sqrt(points): at the power of 2 drawn, below the tenth
    assert widest * math.sqrt(8 / base) <= table["ST"].max() / 10
    warning = (
        f"warning: too few points for these indices: intervals up to ±{widest:.2g}, wider than "
        f"the largest index ({table['ST'].max():.2g}); about {base} base points (design: "
        f"{{saltelli: {{points: {base}}}}}, {base * 5} points here) would narrow them to "
        f"about ±{widest * math.sqrt(8 / base):.2g}, within a tenth of the largest index"
    )
    assert result.warnings == [warning]
    assert main(["sensitivity", str(out), "--metric", "y"]) == 0
    assert f"\n{warning}\n" in capsys.readouterr().out
    assert main(["sensitivity", str(out), "--metric", "y", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"campaign: y: {warning}\n"
    columns = "factor,S1,S1_conf,ST,ST_conf,noise_share,ci_level,ci_method"
    assert captured.out.splitlines()[0] == columns


def test_a_log_transform_of_the_output_and_its_refusal(tmp_path, cluster, capsys):
    out = run(tmp_path, LINEAR.format(design="{latin_hypercube: {points: 30}}"), cluster)
    results = open_results(out)
    logged = campaign.sensitivity(results, "ey", transform="log")
    plain = sensitivity(results, "y")
    # each replicate's log, then their mean: exactly the analysis of y = log(ey)
    np.testing.assert_allclose(logged.table["SRC"], plain.table["SRC"], rtol=1e-9)
    assert logged.transform == "log"
    assert main(["sensitivity", str(out), "--metric", "ey", "--transform", "log"]) == 0
    assert capsys.readouterr().out.startswith(
        "log(ey): standardized regression coefficients (SRC), latin_hypercube design of 30 points\n"
    )
    y = results["y"].values
    assert main(["sensitivity", str(out), "--metric", "y", "--transform", "log"]) == 2
    point = int(np.argwhere(y == y.min())[0][0])
    assert capsys.readouterr().err == (
        f"campaign: error: --transform log: y has {int((y <= 0).sum())} values <= 0 (the "
        f"smallest {y.min():.6g}, at point {point}); log needs positive values\n"
    )
    # SALib's notices on its bins are not the command's output
    args = ["--metric", "ey", "--method", "delta", "--resamples", "10"]
    assert main(["sensitivity", str(out), *args]) == 0
    assert capsys.readouterr().err == ""
    with pytest.raises(CampaignError, match="transform 'sqrt' is not allowed; transforms: log"):
        sensitivity(results, "ey", transform="sqrt")


def test_a_bad_level_in_where_lists_each_level_once(tmp_path, cluster):
    out = run(tmp_path, LINEAR.format(design="{latin_hypercube: {points: 30}}"), cluster)
    results = open_results(out)
    # an infinite output is no output an index can take: refused, not averaged away
    infinite = np.flatnonzero(results["a"].values > 0.9)
    assert infinite.size
    with pytest.raises(CampaignError) as caught:
        sensitivity(results, "capped")
    assert str(caught.value) == (
        "capped is infinite (a replicate's value is, or undefined: +inf and -inf) at "
        f"{infinite.size} points: point {', '.join(map(str, infinite))}; sensitivity indices "
        "need finite outputs"
    )
    levels = list(dict.fromkeys(results["k"].values.tolist()))
    assert len(levels) < results.sizes["point"]  # integer values repeat along the points
    shown = ", ".join(map(str, levels[:20])) + (
        f", ... ({len(levels)} levels)" if len(levels) > 20 else ""
    )
    with pytest.raises(CampaignError) as caught:
        sensitivity(results, "y", where=["k=1000"])
    assert str(caught.value) == f"where 'k=1000': '1000' is not a level of k; levels: {shown}"


def test_the_report_of_320_points_shows_a_few_and_plots_the_most_influential_factor(
    tmp_path, cluster
):
    from campaign.render.report import write_report
    from campaign.render.report_points import figure_axes

    out = run(tmp_path, LINEAR.format(design="{latin_hypercube: {points: 320}}"), cluster)
    results = open_results(out)
    table = sensitivity(results, "y").table.set_index("factor")
    # y = 3 a - 2 b + 0.5 ln k over a in [0, 1], b in [0, 2]: b drives it most, not a (first)
    assert table["SRC"].abs().idxmax() == "b"
    assert figure_axes(results, "y") == (
        "b",
        None,
        "Against b: the factor with the largest |SRC| (standardized regression coefficient) "
        "(regression; see Sensitivity).",
    )
    page = write_report(results, tmp_path / "report", ["y"]).read_text()
    section = page.split('<section class="metric" id="metric-y">')[1].split("</section>")[0]
    assert (
        '<p class="note">Against b: the factor with the largest |SRC| (standardized regression '
        "coefficient) (regression; see Sensitivity).</p>" in section
    )
    body = section.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr>") == 10  # not 320 rows
    first = body.split("</tr>")[0]
    for name in ("a", "b", "c"):  # each value to 4 significant digits
        assert f">{float(results[name].values[0]):.4g}<" in first
    assert repr(float(results["a"].values[0])) not in section
    assert (
        "The first 10 of 320 rows (each point&#x27;s factor values to 4 significant digits); "
        "every one, in full: campaign query RESULTS --metric y --format csv." in section
    )


@pytest.mark.parametrize(
    ("seed", "design", "method"),
    [
        (0, "{latin_hypercube: {points: 60}}", "delta"),
        (2**40, "{latin_hypercube: {points: 60}}", "delta"),
        (0, "{saltelli: {points: 16, second_order: false}}", "sobol"),
    ],
)
def test_the_bootstrap_is_drawn_from_the_campaign_seed_whatever_it_is(
    tmp_path, cluster, seed, design, method
):
    """A base seed of 0 was no seed to SALib's sobol and delta, whose intervals were then drawn
    from numpy's global generator (another table at each call on the same results); delta
    refused one of 2^32 or more (a ValueError's traceback), and reseeded numpy's global
    generator, the caller's own draws after it included."""
    text = LINEAR.format(design=design).replace("seed: 5", f"seed: {seed}")
    results = open_results(run(tmp_path, text, cluster))
    np.random.seed(1)
    first = sensitivity(results, "y", method=method, resamples=20).table
    drawn = np.random.random()  # what the caller draws next is as without the analysis
    np.random.seed(1)
    assert np.random.random() == drawn
    np.random.seed(2)  # another state of numpy's global generator: the same table
    again = sensitivity(results, "y", method=method, resamples=20).table
    pd.testing.assert_frame_equal(first, again)


def one_in_seven_failing(design: Design) -> dict[str, dict]:
    """The records of the linear model's tasks of ``design``, every seventh one failed."""
    records = {}
    for index, task in enumerate(design.tasks()):
        record = {"key": task.key, "status": "failed", "error": "ValueError: boom"}
        if index % 7:
            metrics = sampled_models.linear(cell_params(design.spec, task.cell), task.seed)
            record = {"key": task.key, "status": "ok", "metrics": metrics}
        records[task.key] = record
    return records


def test_the_replicates_behind_each_point_are_those_with_a_value(tmp_path):
    """One task in 7 fails: a point's output is the mean of 2 or 3 of its 3 replicates, and
    the note says so; it said "the mean of its 3 replicates" whatever had failed."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        LINEAR.format(design="{latin_hypercube: {points: 20}}")
        .replace("{noise: 0.3}", "{noise: 0.3, k: 1}")
        .replace("  c: {low: 1, high: 10, scale: log}\n", "")
        .replace("  k: {low: 1, high: 64, scale: log, integer: true}\n", "")
        .replace("replicates: 2", "replicates: 3")
    )
    design = Design(load_spec(spec))
    records = one_in_seven_failing(design)
    result = sensitivity(assemble(design, records, 0.95), "y", method="regression")
    note = describe(result)[1][1]
    assert note.startswith(
        "each point's output is the mean of its replicates with a value, 2 to 3 of 3 (failed "
        "and NaN ones left out; the noise averaged out); replicate noise left in those means: "
    )
    every = {key: {**record, "status": "ok"} for key, record in records.items()}
    for key, record in every.items():
        if "metrics" not in record:
            task = next(t for t in design.tasks() if t.key == key)
            record["metrics"] = sampled_models.linear(cell_params(design.spec, task.cell), 1)
    whole = sensitivity(assemble(design, every, 0.95), "y", method="regression")
    assert describe(whole)[1][1].startswith("each point's output is the mean of its 3 replicates")


def linear_results(folder: Path, points: int = 20, failing: int = 0) -> Path:
    """The results.nc of the linear model on a latin_hypercube design, run here; the first
    ``failing`` points' tasks fail."""
    spec = folder / "spec.yaml"
    spec.write_text(LINEAR.format(design=f"{{latin_hypercube: {{points: {points}}}}}"))
    design = Design(load_spec(spec))
    records, cells = {}, []
    for task in design.tasks():
        cells += [task.cell] if task.cell not in cells else []
        records[task.key] = {"key": task.key, "status": "failed", "error": "ValueError: boom"}
        if cells.index(task.cell) >= failing:
            metrics = sampled_models.linear(cell_params(design.spec, task.cell), task.seed)
            records[task.key] = {"key": task.key, "status": "ok", "metrics": metrics}
    return write_netcdf(assemble(design, records, 0.95), folder / "results.nc")


def test_resamples_are_refused_with_the_regression_which_draws_none(tmp_path, capsys):
    """``--resamples 50`` on a latin_hypercube design (the regression by default) printed the
    same table as without it: its intervals are Student t, no bootstrap."""
    path = linear_results(tmp_path)
    assert sensitivity(open_results(path), "y").method == "regression"
    for argv in (["--resamples", "50"], ["--resamples", "50", "--method", "regression"]):
        assert main(["sensitivity", str(path), "--metric", "y", *argv]) == 2
        assert capsys.readouterr() == (
            "",
            "campaign: error: --resamples is for the bootstrap intervals of sobol, morris, "
            "delta and rbd_fast; the regression's intervals are Student t: leave --resamples "
            "out, or give --method delta or rbd_fast\n",
        )
    with pytest.raises(CampaignError, match="^resamples is for the bootstrap intervals"):
        campaign.sensitivity(path, "y", resamples=50)


def test_csv_and_json_carry_the_numbers_and_notes_the_text_shows(tmp_path, capsys):
    """The text says R^2, the replicate noise left in the point means, the points left out and
    that a log transform was analysed; CSV and JSON had the indices alone."""
    path = linear_results(tmp_path, failing=1)
    result = campaign.sensitivity(path, "ey", transform="log")
    rows = csv_rows(capsys, path, "--metric", "ey", "--transform", "log")
    assert list(rows[0]) == [
        "factor", "SRC", "SRC_conf", "r_squared", "noise_share", "ci_level", "ci_method"
    ]  # fmt: skip
    assert {float(row["r_squared"]) for row in rows} == {result.r_squared}
    assert {float(row["noise_share"]) for row in rows} == {result.noise_share}
    assert main(["sensitivity", str(path), "--metric", "ey", "--transform", "log", "--format",
                 "json"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert json.loads(captured.out)[0]["r_squared"] == result.r_squared
    assert captured.err.splitlines() == [
        "campaign: ey: the indices are of log(ey): each replicate's log, then their mean per point",
        "campaign: ey: 1 points left out (no replicate has a value): point 0; the indices are "
        "those of the other points, unbiased only if failing does not depend on the inputs",
    ]


def test_a_metric_the_results_lack_is_refused_before_any_indices(tmp_path, capsys, monkeypatch):
    """``--metric y --metric nope``: y's indices (a bootstrap of seconds to minutes on a large
    design) were computed before nope was refused; now no analysis runs, and the metrics
    that are there are analysed from one read of the file."""
    path = linear_results(tmp_path)
    analysed = []
    monkeypatch.setattr(
        campaign.api, "sensitivity", lambda results, metric, **options: analysed.append(metric)
    )
    assert main(["sensitivity", str(path), "--metric", "y", "--metric", "nope"]) == 2
    assert capsys.readouterr().err.startswith("campaign: error: --metric 'nope' is not in the")
    assert analysed == []


def test_csv_says_on_stderr_that_point_means_leave_failed_replicates_out(tmp_path, capsys):
    """One task in 7 fails: the text says each point's output is the mean of 2 to 3 of its 3
    replicates; CSV and JSON said nothing of it (their noise_share column alone)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        LINEAR.format(design="{latin_hypercube: {points: 20}}").replace(
            "replicates: 2", "replicates: 3"
        )
    )
    design = Design(load_spec(spec))
    records = one_in_seven_failing(design)
    path = write_netcdf(assemble(design, records, 0.95), tmp_path / "results.nc")
    for fmt in ("csv", "json"):
        assert main(["sensitivity", str(path), "--metric", "y", "--format", fmt]) == 0
        said = capsys.readouterr().err.splitlines()
        assert any(
            line.startswith(
                "campaign: y: each point's output is the mean of its replicates with a value, "
                "2 to 3 of 3 (failed and NaN ones left out;"
            )
            for line in said
        ), said
