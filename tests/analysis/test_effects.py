"""Which factor matters: the analysis of variance against statsmodels and classical formulas,
on models with known effects, unequal replicate counts, paired factors, and the demo."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm

import campaign
from campaign.analysis.anova import BLOCKS, HIGHER, RESIDUAL, effects
from campaign.cli.main import main
from campaign.design.tasks import Design, cell_params
from campaign.plan.plan import replay_rounds
from campaign.render.effects import render_effects
from campaign.results.assemble import assemble
from campaign.results.netcdf import open_results, write_netcdf
from campaign.spec.load import load_spec


def known(params, seed):
    """True mean 10 + a + 0 b + 0 c, plus noise: common (shared by tasks of one seed, sd
    ``common``) and the task's own (sd 1)."""
    shared = np.random.default_rng(seed).standard_normal()
    key = int(round(100 * params["a"])) + 1000 * params["b"] + 10000 * params["c"]
    own = np.random.default_rng([seed, key]).standard_normal()
    return {"y": 10.0 + params["a"] + params["common"] * shared + own}


SPEC = """
name: known
model: known:run
params: {{common: {common}}}
factors:
  a: [-2.0, 0.0, 2.0]
  b: [1, 2]
  c: [1, 2]
paired: [{paired}]
{replicates}
seed: 7
output: out
"""


def results(tmp_path, paired="", common=0.0, replicates="replicates: 6", drop=0.0):
    """Results of the known-effects model, run here; ``drop`` leaves out that share of tasks
    (at random, fixed seed) for unequal replicate counts."""
    path = tmp_path / "known.yaml"
    path.write_text(SPEC.format(paired=paired, common=common, replicates=replicates))
    design = Design(load_spec(path))
    gone = np.random.default_rng(3).random(design.size) < drop
    records = {}
    for index, task in enumerate(design.tasks()):
        if gone[index]:
            continue
        metrics = known(cell_params(design.spec, task.cell), task.seed)
        records[task.key] = {"key": task.key, "status": "ok", "metrics": metrics}
    return assemble(design, records, 0.95, rounds=replay_rounds(design, records))


def frame_of(dataset) -> pd.DataFrame:
    """The finished values as a table with a block (seed) column, for statsmodels."""
    table = dataset[["y", "seed", "status"]].to_dataframe().reset_index()
    return table[table["status"] == 1].dropna(subset=["y"])


def rows(result) -> dict[str, dict]:
    return {str(term): {v: result[v].sel(term=term).item() for v in result.data_vars}
            for term in result["term"].values}  # fmt: skip


def test_unequal_replicates_give_statsmodels_type_ii_sums_of_squares(tmp_path):
    dataset = results(tmp_path, drop=0.25)
    assert len(set(dataset["y_n"].values.ravel())) > 2  # cells hold different counts
    got = rows(effects(dataset, "y"))
    frame = frame_of(dataset)
    model = smf.ols("y ~ (C(a, Sum) + C(b, Sum) + C(c, Sum))**2", data=frame).fit()
    table = anova_lm(model, typ=2)
    names = {"C(a, Sum)": "a", "C(b, Sum)": "b", "C(c, Sum)": "c"}
    for index, row in table.iterrows():
        if index == "Residual":
            continue
        term = ":".join(names[part] for part in index.split(":"))
        assert got[term]["sum_sq"] == pytest.approx(row["sum_sq"], rel=1e-9), term
        assert got[term]["df"] == row["df"], term
    # the residual is the variation within cells; the model's residual less it is the
    # three-factor interaction
    within = frame.groupby(["a", "b", "c"])["y"].transform(lambda v: v - v.mean())
    assert got[RESIDUAL]["sum_sq"] == pytest.approx(float((within**2).sum()), rel=1e-9)
    assert got[RESIDUAL]["df"] == len(frame) - 12
    assert got[HIGHER]["sum_sq"] == pytest.approx(
        table.loc["Residual", "sum_sq"] - got[RESIDUAL]["sum_sq"], rel=1e-9
    )
    total = float(((frame["y"] - frame["y"].mean()) ** 2).sum())
    assert got["a"]["share"] == pytest.approx(100 * got["a"]["sum_sq"] / total, rel=1e-12)
    mean_square = got[RESIDUAL]["sum_sq"] / got[RESIDUAL]["df"]
    f_value = got["a:b"]["sum_sq"] / got["a:b"]["df"] / mean_square
    assert got["a:b"]["F"] == pytest.approx(f_value, rel=1e-12)
    assert got["a:b"]["p_value"] == pytest.approx(
        stats.f.sf(f_value, got["a:b"]["df"], got[RESIDUAL]["df"]), rel=1e-9
    )


def test_a_known_effect_comes_first_and_absent_ones_are_not_significant(tmp_path):
    result = effects(results(tmp_path), "y")
    got = rows(result)
    assert [str(t) for t in result["term"].values] == [
        "a", *sorted([t for t in got if t not in ("a", HIGHER, RESIDUAL)],
                     key=lambda t: -got[t]["share"]), HIGHER, RESIDUAL,
    ]  # fmt: skip
    assert got["a"]["rank"] == 1 and got["a"]["p_value"] < 1e-10
    # a's levels -2, 0, 2 against noise of variance 1: it explains about 8/3 / (8/3 + 1)
    assert 65 < got["a"]["share"] < 80
    for term in ("b", "c", "a:b", "a:c", "b:c", HIGHER):
        assert got[term]["p_value"] > 0.01, term
    main_effects = json.loads(result.attrs["main_effects"])
    assert main_effects["a"] == pytest.approx({"-2.0": -2.0, "0.0": 0.0, "2.0": 2.0}, abs=0.5)


def test_paired_factors_make_a_split_plot_with_classical_sums_of_squares(tmp_path):
    """a paired, b and c not: blocks are (b, c, replicate). Against the textbook split plot
    computed by hand; the shared noise (sd 5) goes to the blocks, so a's test is sharp."""
    dataset = results(tmp_path, paired="a", common=5.0)
    got = rows(effects(dataset, "y"))
    y = dataset["y"].transpose("b", "c", "replicate", "a").values  # blocks x a
    block_means = y.mean(axis=-1)
    whole_cells = block_means.mean(axis=2, keepdims=True)
    levels_a = y.shape[-1]
    blocks_ss = levels_a * ((block_means - whole_cells) ** 2).sum()
    cell_means = y.mean(axis=2)  # b, c, a
    within = ((y - cell_means[:, :, None, :]) ** 2).sum()
    assert got[BLOCKS]["sum_sq"] == pytest.approx(blocks_ss, rel=1e-9)
    assert got[BLOCKS]["df"] == 2 * 2 * 5  # blocks (20) less the b x c cells (4)
    assert got[RESIDUAL]["sum_sq"] == pytest.approx(within - blocks_ss, rel=1e-9)
    assert got[RESIDUAL]["df"] == 4 * 5 * 2
    grand = y.mean()
    a_ss = 2 * 2 * 6 * ((y.mean(axis=(0, 1, 2)) - grand) ** 2).sum()
    assert got["a"]["sum_sq"] == pytest.approx(a_ss, rel=1e-9)
    assert got["a"]["F"] == pytest.approx(
        (a_ss / 2) / (got[RESIDUAL]["sum_sq"] / got[RESIDUAL]["df"]), rel=1e-9
    )
    b_ss = 3 * 2 * 6 * ((y.mean(axis=(1, 2, 3)) - grand) ** 2).sum()
    assert got["b"]["sum_sq"] == pytest.approx(b_ss, rel=1e-9)
    assert got["b"]["tested_against"] == BLOCKS
    assert got["b"]["F"] == pytest.approx(b_ss / (blocks_ss / 20), rel=1e-9)
    assert got["a"]["tested_against"] == got["a:b"]["tested_against"] == RESIDUAL
    assert got["b:c"]["tested_against"] == BLOCKS
    assert got["a"]["p_value"] < 1e-10 and got["a"]["rank"] == 1
    assert sum(r["share"] for r in got.values()) == pytest.approx(100.0, rel=1e-9)


# the seed blocks contain the unpaired factors' effects, so statsmodels' design is rank
# deficient by construction (it says so); the paired terms are still determined
@pytest.mark.filterwarnings("ignore:The design matrix is rank-deficient")
def test_a_precision_design_with_a_paired_factor_matches_statsmodels_with_blocks(tmp_path):
    precision = (
        "precision: {metrics: [y], half_width: 1.0, relative: false, min_replicates: 3, "
        "max_replicates: 12}"
    )
    dataset = results(tmp_path, paired="a", common=0.3, replicates=precision)
    counts = dataset["precision_replicates"].values
    assert counts.min() < counts.max()  # paired levels got different replicate counts
    result = effects(dataset, "y")
    # replicates past a cell's count are no task of it: none is said to be left out
    assert (dataset["status"].values == 0).sum() > 0
    assert result.attrs["left_out_missing"] == 0
    got = rows(result)
    frame = frame_of(dataset)
    model = smf.ols(
        "y ~ C(seed) + (C(a, Sum) + C(b, Sum) + C(c, Sum))**2", data=frame.astype({"seed": str})
    ).fit()
    table = anova_lm(model, typ=2)
    for term, index in (("a", "C(a, Sum)"), ("a:b", "C(a, Sum):C(b, Sum)")):
        assert got[term]["sum_sq"] == pytest.approx(table.loc[index, "sum_sq"], rel=1e-6), term
    with_cells = smf.ols("y ~ C(seed) + C(a):C(b):C(c)", data=frame.astype({"seed": str})).fit()
    assert got[RESIDUAL]["sum_sq"] == pytest.approx(with_cells.ssr, rel=1e-6)
    assert got[RESIDUAL]["df"] == with_cells.df_resid


DEMO = """
name: demo-effects
model: jobs
params: {workload: synthetic, jobs: 500, processors: 128}
factors:
  scheduler: [fcfs, easy, conservative]
  load: [1.0, 2.0]
paired: [scheduler]
replicates: 6
seed: 20260101
metrics: [mean_wait]
output: out
"""


def test_on_the_demo_the_scheduler_dominates_mean_wait(tmp_path, scheduler_address, capsys):
    path = tmp_path / "demo.yaml"
    path.write_text(DEMO)
    campaign.run(path, scheduler=scheduler_address, progress=False)
    result = campaign.effects(tmp_path / "out", "mean_wait")
    assert str(result["term"].values[0]) == "scheduler"
    got = rows(result)
    assert got["scheduler"]["share"] > 2 * max(got["load"]["share"], got["scheduler:load"]["share"])
    assert got["scheduler"]["p_value"] < 0.01
    assert main(["effects", str(tmp_path / "out"), "--metric", "mean_wait"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "mean_wait: analysis of variance of 36 values (every replicate of every cell; type II "
        "sums of squares; share = % of the total sum of squares)"
    )
    assert lines[4].split()[:2] == ["1", "scheduler"]
    assert lines[-3].startswith("main effects [s] (level mean over the other factors' cells")
    assert lines[-2].startswith("  scheduler: fcfs +")


def test_bad_options_are_one_line(tmp_path, capsys):
    path = write_netcdf(results(tmp_path), tmp_path / "results.nc")
    for argv, message in (
        (["--metric", "z"], "--metric 'z' is not in the results; metrics: y"),
        (
            ["--metric", "y", "--where", "a=9"],
            "--where 'a=9': '9' is not a level of a; levels: -2.0, 0.0, 2.0",
        ),
    ):
        assert main(["effects", str(path), *argv]) == 2
        assert capsys.readouterr().err == f"campaign: error: {message}\n"


LEFT_OUT = """
name: gaps
model: m:run
factors: {a: [1, 2], s: [x, y]}
replicates: 3
seed: 5
output: out
"""


def test_values_left_out_are_counted_and_the_main_effects_use_the_analysed_ones(tmp_path, capsys):
    """Each cell's replicates are 10 a + (0 or 4 for s) + (-1, 0, 1); one task of a=1, s=x
    fails and one of a=2, s=y gives +inf: the analysis has 10 values, says which 2 it left
    out, and its main effects are of those 10 (a=2's is not 'nan', a=1's not '-inf')."""
    path = tmp_path / "spec.yaml"
    path.write_text(LEFT_OUT)
    design = Design(load_spec(path))
    records = {}
    for task in design.tasks():
        params = cell_params(design.spec, task.cell)
        value = 10.0 * params["a"] + (4.0 if params["s"] == "y" else 0.0) + task.replicate - 1
        record = {"key": task.key, "status": "ok", "metrics": {"y": value}}
        if (params["a"], params["s"], task.replicate) == (1, "x", 0):
            record = {"key": task.key, "status": "failed", "error": "ValueError: boom"}
        if (params["a"], params["s"], task.replicate) == (2, "y", 2):
            record["metrics"] = {"y": float("inf")}
        records[task.key] = record
    path = write_netcdf(assemble(design, records, 0.95), tmp_path / "results.nc")
    result = effects(open_results(path), "y")
    assert result.attrs["observations"] == 10
    assert (result.attrs["left_out_failed"], result.attrs["left_out_infinite"]) == (1, 1)
    assert result.attrs["left_out_nan"] == 0
    # cell means of the values analysed: a=1 x 10.5, y 14; a=2 x 20, y 23.5 (grand 17)
    assert json.loads(result.attrs["main_effects"]) == {
        "a": {"1": -4.75, "2": 4.75},
        "s": {"x": -1.75, "y": 1.75},
    }
    frame = pd.DataFrame(
        [(10 * a + (4 if s == "y" else 0) + r - 1, a, s) for a in (1, 2) for s in "xy"
         for r in range(3) if (a, s, r) not in ((1, "x", 0), (2, "y", 2))],
        columns=["y", "a", "s"],
    )  # fmt: skip
    table = anova_lm(smf.ols("y ~ C(a, Sum) * C(s, Sum)", frame).fit(), typ=2)
    got = rows(result)
    assert got["a"]["sum_sq"] == pytest.approx(table.loc["C(a, Sum)", "sum_sq"], rel=1e-9)
    assert got["s"]["sum_sq"] == pytest.approx(table.loc["C(s, Sum)", "sum_sq"], rel=1e-9)
    assert got[RESIDUAL]["df"] == 6
    assert main(["effects", str(path), "--metric", "y"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "y: analysis of variance of 10 values (the replicates of every cell that have a finite "
        "value; type II sums of squares; share = % of the total sum of squares)"
    )
    assert lines[1] == "left out: 1 value of a failed task, 1 infinite (inf or -inf) value"
    assert lines[-2:] == ["  a: 1 -4.75, 2 +4.75", "  s: x -1.75, y +1.75"]
    assert main(["effects", str(path), "--metric", "y", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.rstrip().endswith(lines[1])


def test_tasks_not_run_are_counted_among_the_values_left_out(tmp_path):
    """An interrupted campaign of fixed replicates: the analysis is of the tasks that ran,
    and says how many of the designed ones did not, instead of 'every replicate of every
    cell'."""
    dataset = results(tmp_path, drop=0.2)
    gone = int((dataset["status"].values == 0).sum())
    assert 0 < gone < dataset["status"].size
    result = effects(dataset, "y")
    assert result.attrs["observations"] == dataset["status"].size - gone
    assert result.attrs["left_out_missing"] == gone
    lines = render_effects(result).splitlines()
    assert lines[0].startswith(
        f"y: analysis of variance of {dataset['status'].size - gone} values (the replicates of "
        "every cell that have a finite value;"
    )
    assert lines[1] == f"left out: {gone} values of tasks not run (missing)"


def test_a_factor_with_values_at_one_level_only_is_no_term(tmp_path, capsys):
    """A campaign run with `--where b=1` (the tasks of b=2 never ran): b was never varied, so
    the analysis is of a and c, as with `--where b=1`; b was ranked with a share of 0.00 %,
    read as 'b does not matter'."""
    dataset = results(tmp_path)
    ran = dataset.where(dataset["b"] == 1)
    ran["status"] = dataset["status"].where(dataset["b"] == 1, 0).astype(dataset["status"].dtype)
    path = write_netcdf(ran.assign_attrs(dataset.attrs), tmp_path / "results.nc")
    result = effects(open_results(path), "y")
    terms = [str(term) for term in result["term"].values]
    assert sorted(terms) == sorted(["a", "c", "a:c", RESIDUAL])
    assert set(json.loads(result.attrs["main_effects"])) == {"a", "c"}
    assert result.attrs["left_out_missing"] == dataset["status"].size // 2
    same = effects(open_results(path), "y", where=["b=1"])
    pd.testing.assert_frame_equal(result.to_dataframe(), same.to_dataframe())


@pytest.mark.parametrize("paired", ["", "a"])
def test_sums_of_squares_do_not_depend_on_where_the_values_lie(tmp_path, paired):
    """Values near 1e9 (a makespan in seconds, a count of core-seconds) give the sums of
    squares of the same values near 0: a shift changes no effect. Summing squares of the
    raw values lost every digit of the effects (b's and c's 0, a:b's 2048 with p 2e-10)."""
    dataset = results(tmp_path, paired=paired, common=0.5, drop=0.25)
    near_zero = rows(effects(dataset, "y"))
    far = rows(effects(dataset.assign(y=dataset["y"] + 1e9), "y"))
    for term, row in near_zero.items():
        assert far[term]["df"] == row["df"], term
        assert far[term]["sum_sq"] == pytest.approx(row["sum_sq"], rel=1e-5, abs=1e-6), term
        assert far[term]["p_value"] == pytest.approx(row["p_value"], rel=1e-4, nan_ok=True), term


def test_csv_and_json_carry_the_main_effects_the_table_shows(tmp_path, capsys):
    """The text table shows each factor's main effects under the terms; CSV and JSON had the
    terms alone. Each level's effect is now a row of its own: term (the factor), level,
    main_effect (in the metric's units, named in the units column)."""
    path = write_netcdf(results(tmp_path), tmp_path / "results.nc")
    expected = json.loads(effects(open_results(path), "y").attrs["main_effects"])
    assert main(["effects", str(path), "--metric", "y", "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype={"level": str})
    terms = frame[frame["level"].isna()]
    assert terms["rank"].astype(int).tolist()[:6] == [1, 2, 3, 4, 5, 6]  # whole numbers still
    shown = frame.dropna(subset=["level"])
    assert {
        (term, level): effect
        for term, level, effect in shown[["term", "level", "main_effect"]].values
    } == {(f, level): v for f, levels in expected.items() for level, v in levels.items()}
    assert shown[["rank", "df", "F"]].isna().all().all()
    assert main(["effects", str(path), "--metric", "y", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[-1] == {
        "rank": None, "term": "c", "df": None, "sum_sq": None, "share": None, "F": None,
        "p_value": None, "tested_against": None, "level": 2,
        "main_effect": expected["c"]["2"], "units": "",
    }  # fmt: skip


def test_digits_are_refused_with_csv_and_json_which_carry_full_precision(tmp_path, capsys):
    """``--digits 3 --format csv`` printed every number at full precision, the digits taken
    and left unused (as in every command with --digits and --format)."""
    path = write_netcdf(results(tmp_path), tmp_path / "results.nc")
    for fmt in ("csv", "json"):
        assert main(["effects", str(path), "--metric", "y", "--format", fmt, "--digits", "3"]) == 2
        assert capsys.readouterr() == (
            "",
            f"campaign: error: --digits is for the table, markdown, latex and html formats; {fmt} "
            "carries every number at full precision: leave --digits out\n",
        )
    with pytest.raises(campaign.CampaignError, match="^digits is for the text"):
        campaign.table(campaign.effects(path, "y"), "csv", digits=3)
