"""Pooling factors in a query takes complete replicates only, and says how many it left out."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import campaign
from campaign.analysis.query import summary_table
from campaign.analysis.stats import pooled
from campaign.cli.main import main
from campaign.design.tasks import Design
from campaign.spec.load import load_spec

MODEL = '''
"""Fails on the seeds listed in params['fail']; else a value drawn from the seed."""

import numpy as np


def run(params, seed):
    if seed in params["fail"]:
        raise RuntimeError("a chosen failure")
    return {"v": float(10 * params["level"] + np.random.default_rng(seed).random())}
'''

SPEC = """
name: pooling
model: chosen:run
params: {{fail: {fail}}}
factors:
  level: [1, 2, 3]
  kind: [a, b]
replicates: 6
seed: 3
output: out
"""

# (level, kind, replicate) of the failing tasks: kind a loses replicates 1 and 3 in one of its
# level cells each, kind b loses replicate 1; pooled over level, a has 4 complete replicates
# (0, 2, 4, 5) and b 5 (0, 2, 3, 4, 5).
FAILING = {(1, "a", 1), (2, "a", 3), (3, "b", 1)}
COMPLETE = {"a": [0, 2, 4, 5], "b": [0, 2, 3, 4, 5]}


def campaign_cli(folder, *args):
    """The `campaign` command in a process whose embedded cluster can import the test model."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "campaign", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def query(folder, *args) -> subprocess.CompletedProcess:
    """`campaign query ARGS` in this process, the test model importable as in the run (a
    query reads results.nc and runs no model: a process of its own proves nothing more)."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(folder))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["query", *args])
    sys.modules.pop("chosen", None)  # the test model, imported from the folder if at all
    return subprocess.CompletedProcess(
        ["campaign", "query", *args], code, out.getvalue(), err.getvalue()
    )


@pytest.fixture(scope="module")
def failed_some(tmp_path_factory):
    """A finished campaign whose chosen tasks failed; returns (folder, raw values)."""
    folder = tmp_path_factory.mktemp("pooling")
    (folder / "chosen.py").write_text(MODEL)
    spec = folder / "spec.yaml"
    spec.write_text(SPEC.format(fail="[]"))
    design = Design(load_spec(spec))
    labels = [f.labels for f in design.spec.factors]
    fail = [
        task.seed
        for task in design.tasks()
        if (labels[0][task.cell[0]], labels[1][task.cell[1]], task.replicate) in FAILING
    ]
    assert len(set(fail)) == 3
    spec.write_text(SPEC.format(fail=fail))
    result = campaign_cli(folder, "run", str(spec), "--workers", "1", "--quiet", "--retries", "0")
    assert result.returncode == 1, result.stderr
    assert "33 tasks ok, 3 failed, 0 missing" in result.stdout
    values = xr.load_dataset(folder / "out" / "results.nc")["v"]
    for level, kind, replicate in FAILING:
        assert np.isnan(values.sel(level=level, kind=kind, replicate=replicate).item())
    assert int(values.notnull().sum()) == 33
    return folder, values


def expected(values: xr.DataArray, kind: str) -> tuple[float, float]:
    """Mean and half-width over the complete replicates, by hand."""
    per_replicate = values.sel(kind=kind).values[:, COMPLETE[kind]].mean(axis=0)
    n = len(per_replicate)
    half = stats.t.ppf(0.975, n - 1) * per_replicate.std(ddof=1) / np.sqrt(n)
    return float(per_replicate.mean()), float(half)


def test_query_pools_complete_replicates_and_counts_those_left_out(failed_some):
    folder, values = failed_some
    result = query(folder, str(folder / "out"), "--by", "kind", "--format", "csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["kind"] for row in rows] == ["a", "b"]
    assert [int(row["v_n"]) for row in rows] == [4, 5]
    assert [int(row["v_left_out"]) for row in rows] == [2, 1]
    for row in rows:
        mean, half = expected(values, row["kind"])
        assert float(row["v_mean"]) == pytest.approx(mean, rel=1e-12)
        assert float(row["v_half_width"]) == pytest.approx(half, rel=1e-9)


def test_the_table_shows_the_replicates_left_out(failed_some):
    folder, values = failed_some
    result = query(folder, str(folder / "out"), "--by", "kind")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["kind", "v", "n", "left", "out"]
    assert lines[2].split()[-2:] == ["4", "2"] and lines[3].split()[-2:] == ["5", "1"]
    assert lines[4:] == [
        "mean ± half-width of the 95% confidence interval (Student t) over n replicates",
        "3 tasks failed in these cells: left out of the means and n (campaign status lists them)",
        "v: 3 replicates left out (some of the pooled cells have no value in them: failed, "
        "missing or NaN); means and n are over complete replicates",
        "warning: some intervals rest on 4 replicate(s) (fewer than 5): too few for an interval "
        "to say much; add replicates",
    ]
    by_level = query(folder, str(folder / "out"), "--by", "level")
    rows = [line.split() for line in by_level.stdout.splitlines()[2:5]]
    assert [row[0] for row in rows] == ["1", "2", "3"]  # integer levels shown as written
    assert [row[-2:] for row in rows] == [["5", "1"], ["5", "1"], ["5", "1"]]
    # without pooling nothing is left out, and the table says nothing of it
    cells = query(folder, str(folder / "out"))
    assert cells.stdout.splitlines()[0].split() == ["level", "kind", "v", "n"]
    assert "replicates left out" not in cells.stdout


def test_the_python_api_gives_the_same_pooled_table(failed_some):
    folder, values = failed_some
    frame = summary_table(campaign.open_results(folder / "out"), by=["kind"])
    assert frame["v_n"].tolist() == [4, 5] and frame["v_left_out"].tolist() == [2, 1]
    assert frame["v_mean"].tolist() == pytest.approx([expected(values, k)[0] for k in "ab"])
    where = summary_table(campaign.open_results(folder / "out"), by=["kind"], where=["level=2,3"])
    assert where["v_n"].tolist() == [5, 5] and where["v_left_out"].tolist() == [1, 1]
    cells = summary_table(campaign.open_results(folder / "out"))
    assert cells["v_left_out"].tolist() == [0] * 6
    assert cells["v_n"].tolist() == [5, 6, 5, 6, 6, 5]


def test_pooled_leaves_out_replicates_missing_a_cell_but_not_empty_ones():
    data = xr.DataArray(
        [[1.0, 2.0, np.nan, np.nan, 5.0], [3.0, np.nan, np.nan, 8.0, 7.0]],
        dims=("b", "replicate"),
    )
    result = pooled(data, [], 0.95)
    assert result["mean"].item() == (2.0 + 6.0) / 2  # replicates 0 and 4 are complete
    assert result["n"].item() == 2
    assert result["left_out"].item() == 2  # 1 and 3; replicate 2 holds no value at all
    unpooled = pooled(data, ["b"], 0.95)
    assert unpooled["n"].values.tolist() == [3, 3]
    assert unpooled["left_out"].values.tolist() == [0, 0]


def test_rank_pairs_complete_replicates_only(failed_some):
    folder, values = failed_some
    result = query(folder, str(folder / "out"), "--rank", "kind", "--metric", "v")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # by hand: in each replicate where all six cells ran, a level's degradation from the best
    # kind at each level, averaged over the levels
    complete = [0, 2, 4, 5]
    v = values.transpose("kind", "level", "replicate").values[:, :, complete]
    per_replicate = (100 * (v / v.min(axis=0) - 1)).mean(axis=1)  # kind x replicate
    rows = {line.split()[1]: line.split() for line in lines[2:4]}
    for index, kind in enumerate(["a", "b"]):
        mean = per_replicate[index].mean()
        half = stats.t.ppf(0.975, 3) * per_replicate[index].std(ddof=1) / 2
        assert [float(x) for x in rows[kind][3:6]] == pytest.approx(
            [round(mean, 2), round(mean - half, 2), round(mean + half, 2)], abs=0.0051
        )
        assert rows[kind][6] == "4"
    assert (
        "2 replicates left out of the interval (some kind, metric or instance has no "
        "value in them: failed, missing or NaN)"
    ) in lines
    from campaign.analysis.ranking import degradation

    ranked = degradation(campaign.open_results(folder / "out"), "kind", ["v"], ["level"])
    assert ranked["D_n"].values.tolist() == [4, 4] and int(ranked["D_left_out"]) == 2
    assert ranked["D_paired_mean"].values == pytest.approx(per_replicate.mean(axis=1), rel=1e-12)
