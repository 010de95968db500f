"""A breakdown's dimension is paired: the classes of one task come from one run with one seed,
so `compare`, `query --rank` and `effects` take them as paired levels. Checked against
intervals and tests recomputed here from the replicates the results file stores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import statsmodels.formula.api as smf
import xarray as xr
from scipy import stats

import campaign
from campaign.analysis.anova import BLOCKS, RESIDUAL
from campaign.cli.main import main
from tests.analysis.small_campaigns import small_campaign

SPEC = """
name: bd
model: small_models:classes
factors: {s: [x, y]}
replicates: 8
seed: 5
output: out
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory, scheduler_address) -> Path:
    """The results of `small_models.classes`: two classes per task, sharing its seed."""
    return small_campaign(tmp_path_factory, scheduler_address, "breakdown-pairing", SPEC)


def stored(results: Path, s: str) -> tuple[np.ndarray, np.ndarray]:
    """The replicates of classes a and b in the cell of ``s``, as the file stores them."""
    group = xr.load_dataset(results / "results.nc", group="breakdowns/cls")
    cell = group["m_by_cls"].sel(s=s).transpose("cls", "replicate")
    return cell.sel(cls="a").values, cell.sel(cls="b").values


def test_classes_of_one_task_are_compared_over_the_per_task_differences(results, capsys):
    result = campaign.compare(results, "cls", "a", "m")
    assert result.attrs["paired"] == 1
    assert result.attrs["method"].startswith(
        "paired: the levels break down one task's result (one run, one seed), so each "
        "interval (95%, Student t) is over the per-replicate differences"
    )
    unpaired = campaign.compare(results, "cls", "a", "m", paired=False)
    assert unpaired.attrs["method"].endswith(
        "ignoring that the levels break down one task's result"
    )
    for s in ("x", "y"):
        a, b = stored(results, s)
        low, high = stats.ttest_rel(b, a).confidence_interval(0.95)
        cell = result.sel(s=s, cls="b")
        assert float(cell["difference"]) == pytest.approx((b - a).mean(), rel=1e-12)
        assert float(cell["difference_low"]) == pytest.approx(low, rel=1e-9)
        assert float(cell["difference_high"]) == pytest.approx(high, rel=1e-9)
        assert int(cell["n"]) == 8 and float(cell["dof"]) == 7.0
        welch = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
        cell = unpaired.sel(s=s, cls="b")
        assert float(cell["difference_low"]) == pytest.approx(welch.low, rel=1e-9)
        assert float(cell["difference_high"]) == pytest.approx(welch.high, rel=1e-9)
        # the task's level (sd 10) cancels in the pairs, not between independent samples
        assert 5 * (high - low) < welch.high - welch.low
    assert campaign.compare(results, "cls", "a", "m", paired=True).identical(result)
    args = ["compare", str(results), "--factor", "cls", "--baseline", "a", "--metric", "m"]
    assert main(args) == 0
    said = capsys.readouterr().out
    assert "paired: the levels break down one task's result" in said
    assert "seeds of their own" not in said


def test_classes_are_ranked_over_paired_replicates_without_a_warning(results, capsys):
    ranking = campaign.rank(results, "cls", ["m"])
    assert ranking.title.endswith(
        "95% interval over paired replicates (the levels of cls break down one task's "
        "result); best: the smallest value"
    )
    assert not any("not paired" in note for note in ranking.notes)
    # per replicate: each class's degradation from the better one, averaged over s
    cells = [np.stack(stored(results, s)) for s in ("x", "y")]  # cls x replicate
    degradation = np.mean([100 * (c / c.min(axis=0) - 1) for c in cells], axis=0)
    for index, label in enumerate(("a", "b")):
        values = degradation[index]
        half = stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
        row = ranking.result.sel(cls=label)
        assert float(row["D_paired_mean"]) == pytest.approx(values.mean(), rel=1e-12, abs=1e-12)
        assert float(row["D_ci_low"]) == pytest.approx(values.mean() - half, rel=1e-9, abs=1e-12)
        assert float(row["D_ci_high"]) == pytest.approx(values.mean() + half, rel=1e-9, abs=1e-12)
    assert main(["query", str(results), "--rank", "cls", "--metric", "m"]) == 0
    said = capsys.readouterr().out
    assert "over paired replicates" in said and "under paired:" not in said


@pytest.mark.filterwarnings("ignore:The design matrix is rank-deficient")
def test_effects_test_the_classes_within_the_tasks(results, capsys):
    """A split plot whose blocks are the tasks: cls against the variation within tasks, s
    against the variation between them."""
    result = campaign.effects(results, "m", where={"cls": ["a", "b"]})
    got = {
        str(t): {v: result[v].sel(term=t).item() for v in result.data_vars}
        for t in result.term.values
    }
    view = campaign.open_breakdown(results, "cls")
    frame = view[["m", "seed"]].to_dataframe().reset_index().astype({"seed": str})
    full = smf.ols("m ~ C(seed) + C(s) * C(cls)", data=frame).fit()  # a block per task
    assert got[RESIDUAL]["sum_sq"] == pytest.approx(full.ssr, rel=1e-9)
    assert got[RESIDUAL]["df"] == full.df_resid == 14
    # balanced: cls moves every value by +-(mean difference of b and a) / 2
    differences = np.concatenate([b - a for a, b in (stored(results, s) for s in "xy")])
    cls_ss = 32 * (differences.mean() / 2) ** 2
    f_cls = cls_ss / (full.ssr / full.df_resid)
    assert got["cls"]["sum_sq"] == pytest.approx(cls_ss, rel=1e-9)
    assert got["cls"]["F"] == pytest.approx(f_cls, rel=1e-9)
    assert got["cls"]["p_value"] == pytest.approx(stats.f.sf(f_cls, 1, 14), rel=1e-6)
    assert got["cls"]["p_value"] < 1e-3
    assert got["cls"]["tested_against"] == got["s:cls"]["tested_against"] == RESIDUAL
    # the whole plot: s on the tasks' means, against the variation between the tasks
    means = view["m"].mean("cls")
    whole = stats.f_oneway(means.sel(s="x").values, means.sel(s="y").values)
    assert got["s"]["F"] == pytest.approx(whole.statistic, rel=1e-9)
    assert got["s"]["tested_against"] == BLOCKS
    assert main(["effects", str(results), "--metric", "m", "--where", "cls=a,b"]) == 0
    assert "split plot: cls paired (each task's values per cls form a block)" in (
        capsys.readouterr().out
    )
