"""What a model returns, checked: names a results file cannot hold fail their task with the
reason (a task that leaves out a kept metric too), a misspelt kept metric stops the run
once its first results all failed, NaN values are counted and shown, and
results.nc is always written."""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.design.tasks import Design
from campaign.results.assemble import assemble
from campaign.results.names import metric_values
from campaign.results.netcdf import write_netcdf
from campaign.results.table import failure_table
from campaign.spec.load import parse_spec
from campaign.store.ledger import Ledger
from tests.conftest import dask_cluster

MODEL = '''
"""A test model whose result depends on the level of its factor 'kind'."""

import math

import numpy as np

RESULTS = {
    "good": lambda v: {"v": v},
    "status": lambda v: {"v": v, "status": 1.0},
    "replicate": lambda v: {"replicate": v},
    "empty": lambda v: {},
    "int_key": lambda v: {1: v, "1": v},
    "slash": lambda v: {"a/b": v},
    "blank": lambda v: {"": v},
    "summary_name": lambda v: {"v": v, "v_mean": v},
    "factor_name": lambda v: {"kind": v},
    "text": lambda v: {"v": "fast"},
    "complex": lambda v: {"v": 1 + 2j},
    "numpy_complex": lambda v: {"v": np.complex128(v) + 1j},
    "numpy_bool": lambda v: {"v": np.bool_(v > 2)},
    "huge_integer": lambda v: {"v": 2**53 + 1},
}


def run(params, seed):
    rng = np.random.default_rng(seed)
    return RESULTS[params["kind"]](float(rng.random()))


def partial(params, seed):
    """Metrics a and b, but only a in the cells of n=3."""
    value = float(np.random.default_rng(seed).random())
    return {"a": value} if params["n"] == 3 else {"a": value, "b": 2 * value}


def undefined(params, seed):
    """NaN for about a third of the seeds (an undefined value), else a number."""
    rng = np.random.default_rng(seed)
    value = float(params["mean"] + rng.standard_normal())
    return {"v": math.nan if rng.random() < 0.35 else value, "w": value}


def many(params, seed):
    """300 metrics, m000 to m299; every tenth NaN in about half of the seeds."""
    values = np.random.default_rng(seed).random(301) * params["scale"]
    undefined = values[300] < 0.5 * params["scale"]
    return {
        f"m{i:03d}": math.nan if undefined and i % 10 == 0 else float(values[i])
        for i in range(300)
    }
'''

EXPECTED_ERRORS = {
    "status": "ValueError: metric name 'status' is reserved by the results layout; reserved "
    "names: replicate, point, status, seed, failure, failure_key, failure_cell, "
    "failure_replicate, failure_error, precision_met, precision_state, precision_replicates, "
    "selection_replicates, selection_state, selection_stage",
    "replicate": "ValueError: metric name 'replicate' is reserved by the results layout; "
    "reserved names: replicate, point, status, seed, failure, failure_key, failure_cell, "
    "failure_replicate, failure_error, precision_met, precision_state, precision_replicates, "
    "selection_replicates, selection_state, selection_stage",
    "empty": "ValueError: the model returned no metrics",
    "int_key": "ValueError: metric names must be strings, got 1 (int)",
    "slash": "ValueError: metric name 'a/b' is not allowed; use letters, digits, '_', '.', '-', "
    "'+' and '@', starting with a letter or digit",
    "blank": "ValueError: metric name '' is not allowed; use letters, digits, '_', '.', '-', '+' "
    "and '@', starting with a letter or digit",
    "summary_name": "ValueError: metric 'v_mean' has the name of a summary variable of metric 'v'",
    "factor_name": "ValueError: metric 'kind' has the name of factor 'kind'; a results file "
    "cannot hold both",
    "text": "TypeError: metric 'v' is not a number: 'fast'",
    "complex": "TypeError: metric 'v' is a complex number ((1+2j)); a metric is a real number: "
    "return its real part, imaginary part or modulus as metrics of their own",
    "numpy_complex": "TypeError: metric 'v' is a complex number",
    "numpy_bool": "TypeError: metric 'v' is a boolean (False), not a number; return 1.0 or 0.0 "
    "(the mean is then the share of replicates where it holds)",
    "huge_integer": "ValueError: metric 'v' is the integer 9007199254740993, which float64 (how "
    "results store metrics) cannot hold exactly: it would be rounded to 9007199254740992; every "
    "integer up to 2**53 is exact: return a float if the rounding is acceptable",
}

SPEC = """
name: names
model: returns:{function}
{params}
factors:
  {factor}
replicates: {replicates}
seed: 5
{metrics}
output: out
"""


def write(tmp_path, function, factor, replicates=2, params="", metrics=""):
    (tmp_path / "returns.py").write_text(MODEL)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        SPEC.format(
            function=function, factor=factor, replicates=replicates, params=params, metrics=metrics
        )
    )
    return spec


def campaign_cli(tmp_path, *args) -> subprocess.CompletedProcess:
    """The `campaign` command in this process, importing the test model beside the spec as a
    process started there would (a process's start is not what these tests are about): its
    exit status and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(tmp_path))
        patch.delitem(sys.modules, "returns", raising=False)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    sys.modules.pop("returns", None)
    return subprocess.CompletedProcess(["campaign", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def returns_cluster(tmp_path_factory):
    """The address of a cluster of one worker that imports the test model (MODEL, as each
    test writes it beside its spec): the module's runs share it instead of each starting an
    embedded cluster."""
    folder = tmp_path_factory.mktemp("returns")
    (folder / "returns.py").write_text(MODEL)
    with pytest.MonkeyPatch.context() as patch:
        path = os.environ.get("PYTHONPATH", "")
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(folder), path])))
        patch.syspath_prepend(str(folder))
        with dask_cluster(1) as cluster:
            yield cluster.scheduler_address


def query(capsys, *args) -> str:
    """What `campaign query ARGS` prints, run in this process (it reads results.nc, no
    model, so a process of its own proves nothing more)."""
    capsys.readouterr()
    assert main(["query", *args]) == 0
    return capsys.readouterr().out


def test_names_a_results_file_cannot_hold_fail_their_task_and_results_are_written(
    tmp_path, returns_cluster
):
    kinds = ["good", *EXPECTED_ERRORS]
    spec = write(tmp_path, "run", f"kind: [{', '.join(kinds)}]")
    result = campaign_cli(
        tmp_path, "run", str(spec), "--scheduler", returns_cluster, "--quiet", "--retries", "0"
    )
    assert result.returncode == 1, result.stderr
    assert f"2 tasks ok, {2 * len(EXPECTED_ERRORS)} failed, 0 missing" in result.stdout
    ds = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert ds["status"].sel(kind="good").values.tolist() == [1, 1]
    assert (ds["status"].drop_sel(kind="good") == 2).all()
    assert sorted(ds.data_vars) == [
        "seed",
        "status",
        "v",
        "v_ci_high",
        "v_ci_low",
        "v_mean",
        "v_n",
        "v_nan",
        "v_std",
    ]
    errors = {}
    failures = campaign.open_failures(tmp_path / "out")
    assert failures["kind"].values.tolist() == [c for c in kinds[1:] for _ in range(2)]
    for cell, error in zip(failures["failure_cell"].values, failures["failure_error"].values):
        errors.setdefault(cell, set()).add(error)
    complex_error = errors.pop('{"kind":"numpy_complex"}')  # the real part is the seed's draw
    assert len(complex_error) == 2
    assert all(e.startswith(EXPECTED_ERRORS["numpy_complex"]) for e in complex_error)
    expected = {k: e for k, e in EXPECTED_ERRORS.items() if k != "numpy_complex"}
    assert errors == {f'{{"kind":"{kind}"}}': {error} for kind, error in expected.items()}
    good = ds["v"].sel(kind="good").values
    assert np.isfinite(good).all() and ds["v_n"].sel(kind="good").item() == 2


def test_a_misspelt_kept_metric_stops_the_run_after_the_first_results(tmp_path, returns_cluster):
    spec = write(tmp_path, "run", "kind: [good]", replicates=20, metrics="metrics: [vv]")
    result = campaign_cli(
        tmp_path, "run", str(spec), "--scheduler", returns_cluster, "--quiet", "--batch-size", "2"
    )
    assert result.returncode == 2
    records = Ledger(tmp_path / "out").load()
    assert 8 <= len(records) < 20  # the first results, and nothing more than in flight
    assert {r["status"] for r in records.values()} == {"failed"}
    assert result.stderr == (
        f"campaign: error: {spec}: stopped: the first {len(records)} finished tasks (1 cell) "
        "all failed with the same error: ValueError: the model returned no metric 'vv', which "
        "the spec's metrics: keeps; it returned: v; they are stored, the rest did not run: fix "
        "it and run again (failed tasks are tried again), or run with --keep-going to run "
        "every task regardless\n"
    )
    # fixed, the rerun retries those tasks and runs the rest
    spec.write_text(spec.read_text().replace("metrics: [vv]", "metrics: [v]"))
    fixed = campaign_cli(tmp_path, "run", str(spec), "--scheduler", returns_cluster, "--quiet")
    assert fixed.returncode == 0, fixed.stderr
    assert "20 tasks ok, 0 failed, 0 missing" in fixed.stdout


def test_a_task_that_leaves_out_a_kept_metric_fails_alone_and_results_are_written(
    tmp_path, returns_cluster
):
    spec = write(
        tmp_path, "partial", "n: [1, 2, 3]", replicates=2, params="params: {}",
        metrics="metrics: [a, b]",
    )  # fmt: skip
    result = campaign_cli(tmp_path, "run", str(spec), "--scheduler", returns_cluster, "--quiet")
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    assert "4 tasks ok, 2 failed, 0 missing" in result.stdout
    ds = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert ds["status"].values.tolist() == [[1, 1], [1, 1], [2, 2]]
    assert np.array_equal(ds["b"].values[:2], 2 * ds["a"].values[:2])
    assert np.isnan(ds["a"].values[2]).all() and np.isnan(ds["b"].values[2]).all()
    failures = campaign.open_failures(tmp_path / "out")
    assert (
        failures["failure_error"].values.tolist()
        == [
            "ValueError: the model returned no metric 'b', which the spec's metrics: keeps; it "
            "returned: a"
        ]
        * 2
    )


def test_results_stored_before_metrics_kept_a_metric_are_judged_as_a_fresh_run_would(
    tmp_path, returns_cluster
):
    """Results stored without metrics:, then metrics: [a, b]: the tasks that returned no b
    fail in a fresh folder, so here too plan, run and status count them failed, a rerun
    retries them, and results.nc is the fresh folder's."""
    spec = write(tmp_path, "partial", "n: [1, 3]", replicates=2, params="params: {}")
    first = campaign_cli(tmp_path, "run", str(spec), "--scheduler", returns_cluster, "--quiet")
    assert "4 tasks ok, 0 failed, 0 missing" in first.stdout.splitlines(), first.stderr
    spec.write_text(spec.read_text().replace("output: out", "metrics: [a, b]\noutput: out"))
    plan = campaign_cli(tmp_path, "plan", str(spec))
    planned = plan.stdout.splitlines()
    assert planned[-2] == "plan: 2 done, 2 failed (will be retried), 0 missing; 2 tasks would run"
    assert planned[-1].startswith("  results.nc was written from another spec than the one")
    rerun = campaign_cli(tmp_path, "run", str(spec), "--scheduler", returns_cluster, "--quiet")
    fresh = campaign_cli(
        tmp_path,
        "run",
        str(spec),
        "--scheduler",
        returns_cluster,
        "--quiet",
        "--out",
        str(tmp_path / "new"),
    )
    for result in (rerun, fresh):
        assert result.returncode == 1, result.stderr
        assert "2 tasks ok, 2 failed, 0 missing" in result.stdout.splitlines()
    assert (
        rerun.stdout.splitlines()[0]
        == "names: 4 tasks (2 cells x 2 replicates); 2 already done, 2 to run"
    )
    stored = xr.load_dataset(tmp_path / "out" / "results.nc")
    new = xr.load_dataset(tmp_path / "new" / "results.nc")
    xr.testing.assert_identical(stored.drop_attrs(), new.drop_attrs())
    assert stored["status"].values.tolist() == [[1, 1], [2, 2]]
    assert stored["a_n"].values.tolist() == stored["b_n"].values.tolist() == [2, 0]
    assert stored["a_nan"].values.tolist() == stored["b_nan"].values.tolist() == [0, 0]
    assert stored["b"].values[0].tolist() == (2 * stored["a"].values[0]).tolist()
    error = (
        "ValueError: the model returned no metric 'b', which the spec's metrics: keeps; it "
        "returned: a"
    )
    assert campaign.open_failures(tmp_path / "out")["failure_error"].values.tolist() == [error] * 2
    status = campaign_cli(tmp_path, "status", str(spec))
    assert status.returncode == 1, status.stderr
    lines = status.stdout.splitlines()
    assert (
        lines[0]
        == f"names: 4 tasks: 2 done, 2 failed, 0 missing  (ledger {tmp_path / 'out' / 'ledger'})"
    )
    seeds = stored["seed"].sel(n=3).values.tolist()
    assert [line for line in lines if line.startswith("  failed:")] == [
        f"  failed: n=3 replicate {replicate} (seed {seed}, 1 attempts): {error}"
        for replicate, seed in enumerate(seeds)
    ]


def test_nan_values_are_counted_per_cell_and_shown_by_run_and_query(
    tmp_path, capsys, returns_cluster
):
    spec = write(tmp_path, "undefined", "mean: [1.0, 5.0]", replicates=12, params="params: {}")
    result = campaign_cli(tmp_path, "run", str(spec), "--scheduler", returns_cluster, "--quiet")
    assert result.returncode == 0, result.stderr
    ds = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert (ds["status"] == 1).all()
    sys.path.insert(0, str(tmp_path))
    try:
        from returns import undefined
    finally:
        sys.path.remove(str(tmp_path))
    expected = {}
    for mean in (1.0, 5.0):
        seeds = ds["seed"].sel(mean=mean).values
        values = [undefined({"mean": mean}, int(seed))["v"] for seed in seeds]
        expected[mean] = sum(math.isnan(v) for v in values)
        finite = [v for v in values if not math.isnan(v)]
        assert ds["v_nan"].sel(mean=mean).item() == expected[mean]
        assert ds["v_n"].sel(mean=mean).item() == len(finite) == 12 - expected[mean]
        assert ds["v_mean"].sel(mean=mean).item() == pytest.approx(np.mean(finite), rel=1e-12)
        assert ds["w_nan"].sel(mean=mean).item() == 0
    total = sum(expected.values())
    assert 0 < total < 24
    lines = result.stdout.splitlines()
    assert f"v: {total} values NaN (finished tasks, the value undefined); left out of the " in (
        "\n".join(lines)
    )
    assert (
        f"NaN values (undefined; left out of the means and n): v {total}; each <metric>_nan in "
        "results.nc counts them per cell"
    ) in lines
    shown = query(capsys, str(tmp_path / "out"), "--metric", "v", "--by", "mean", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(shown)))
    assert [int(row["v_nan"]) for row in rows] == [expected[1.0], expected[5.0]]


def test_a_metric_some_tasks_do_not_return_is_counted_absent_not_nan(
    tmp_path, capsys, returns_cluster
):
    """Without metrics:, the cells of n=3 return a alone: b is absent there (the ledger holds
    no b), not an undefined value; run, query and results.nc say so, and keep a's values."""
    spec = write(tmp_path, "partial", "n: [1, 3]", replicates=3, params="params: {}")
    result = campaign_cli(tmp_path, "run", str(spec), "--scheduler", returns_cluster, "--quiet")
    assert result.returncode == 0, result.stderr
    ds = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert (ds["status"] == 1).all()
    assert ds["a_n"].values.tolist() == [3, 3] and ds["b_n"].values.tolist() == [3, 0]
    assert ds["a_nan"].values.tolist() == ds["b_nan"].values.tolist() == [0, 0]
    assert ds["b_absent"].values.tolist() == [0, 3] and "a_absent" not in ds
    assert np.isnan(ds["b"].sel(n=3).values).all()
    assert ds["a_mean"].values.tolist() == ds["a"].mean("replicate").values.tolist()
    lines = result.stdout.splitlines()
    at = lines.index("6 tasks ok, 0 failed, 0 missing")
    assert [line.split()[-1] for line in lines[at - 5 : at - 3]] == ["3", "0/3"]  # n: a/b
    assert lines[at - 3 :] == [
        "b: 3 values absent (finished tasks that did not return it); left out of the means and n",
        "warning: some intervals rest on 3 replicate(s) (fewer than 5): too few for an interval "
        "to say much; add replicates",
        "",
        "6 tasks ok, 0 failed, 0 missing",
        "Absent values (finished tasks that did not return them; left out of the means and n): "
        "b 3; each <metric>_absent in results.nc counts them per cell",
        f"results: {tmp_path / 'out' / 'results.nc'}",
    ]
    assert not any("NaN" in line for line in lines)
    shown = query(capsys, str(tmp_path / "out"), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(shown)))
    assert [(row["b_n"], row["b_nan"], row["b_absent"]) for row in rows] == [
        ("3", "0", "0"),
        ("0", "0", "3"),
    ]
    assert "a_absent" not in rows[0]


def test_a_campaign_of_300_metrics_reopens_with_every_value_and_queries_agree(
    tmp_path, capsys, returns_cluster
):
    """Many metrics go through the paths that read variables without building a DataArray
    per variable: results.nc holds each task's numbers, summaries and NaN counts, and the
    run's table, its NaN line and a query of one metric or of all agree with them."""
    spec = write(tmp_path, "many", "scale: [1, 10]", replicates=3, params="params: {}")
    result = campaign_cli(tmp_path, "run", str(spec), "--scheduler", returns_cluster, "--quiet")
    assert result.returncode == 0, result.stderr
    ds = campaign.open_results(tmp_path / "out")
    sys.path.insert(0, str(tmp_path))
    try:
        from returns import many
    finally:
        sys.path.remove(str(tmp_path))
    names = [f"m{i:03d}" for i in range(300)]
    assert campaign.results.assemble.metrics_of(ds) == names
    assert len(ds.data_vars) == 300 * 7 + 2
    undefined = {name: 0 for name in names}
    assert ds["scale"].values.tolist() == [1, 10]

    def stored(name: str, at: int):
        """A variable's values at the scale of index ``at``, read without building a
        DataArray (each of which scans the dataset's 2,102 variables)."""
        return ds.variables[name].isel(scale=at).values

    for at, scale in enumerate((1, 10)):
        returned = [many({"scale": scale}, int(s)) for s in stored("seed", at)]
        for name in names:
            column = [task[name] for task in returned]
            assert np.array_equal(stored(name, at), column, equal_nan=True), (scale, name)
            finite = [v for v in column if not math.isnan(v)]
            undefined[name] += 3 - len(finite)
            assert stored(f"{name}_nan", at) == 3 - len(finite)
            assert stored(f"{name}_n", at) == len(finite)
            if finite:
                mean = stored(f"{name}_mean", at)
                assert mean == pytest.approx(np.mean(finite), rel=1e-12)
    nan_metrics = [name for name in names if undefined[name]]
    assert nan_metrics == names[::10]  # some seed of the six drew a NaN
    shown = ", ".join(f"{name} {undefined[name]}" for name in nan_metrics[:8])
    assert (
        f"NaN values (undefined; left out of the means and n): {shown} and 22 more metrics "
        "(campaign query shows them); each <metric>_nan in results.nc counts them per cell"
    ) in result.stdout.splitlines()
    one = query(capsys, str(tmp_path / "out"), "--metric", "m299")
    every = query(capsys, str(tmp_path / "out"), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(every)))
    assert [row["scale"] for row in rows] == ["1", "10"]
    for at, row in enumerate(rows):
        for name in names:
            assert float(row[f"{name}_mean"]) == pytest.approx(
                stored(f"{name}_mean", at), rel=1e-12, nan_ok=True
            )
            assert int(row[f"{name}_nan"]) == stored(f"{name}_nan", at)
    m299 = [line.split() for line in one.splitlines()[2:4]]
    means = [f"{ds['m299_mean'].sel(scale=s).item():.6g}" for s in (1, 10)]
    assert [(row[0], row[1]) for row in m299] == [("1", means[0]), ("10", means[1])]


def test_a_ledger_with_names_that_clash_still_gives_a_results_file(tmp_path):
    spec = parse_spec(
        {
            "name": "c",
            "model": "busy",
            "factors": {"kind": ["a", "b", "c"]},
            "replicates": 2,
            "seed": 1,
            "output": str(tmp_path),
        },
    )
    design = Design(spec)
    returned = {"a": {"x": 1.5}, "b": {"x_mean": 2.5}, "c": {"kind": 3.5, "x": 4.5}}
    records = {}
    for task in design.tasks():
        kind = spec.factors[0].labels[task.cell[0]]
        records[task.key] = {"key": task.key, "status": "ok", "metrics": returned[kind]}
    dataset = assemble(design, records, 0.95)
    failures = failure_table(dataset, design, records)
    path = write_netcdf(dataset, tmp_path / "results.nc", failures)
    reopened = xr.load_dataset(path)
    xr.testing.assert_identical(reopened, dataset)
    xr.testing.assert_identical(xr.load_dataset(path, group="failures"), failures)
    assert reopened["status"].values.tolist() == [[1, 1], [2, 2], [2, 2]]
    assert reopened["x"].sel(kind="a").values.tolist() == [1.5, 1.5]
    assert "x_mean" in reopened and reopened["x_mean"].sel(kind="a").item() == 1.5
    assert sorted(set(failures["failure_error"].values)) == [
        "ValueError: metric 'kind' has the name of factor 'kind'; a results file cannot hold both",
        "ValueError: metric 'x_mean' has the name of a summary variable of metric 'x'; a results "
        "file cannot hold both",
    ]


def test_a_metric_of_another_kind_than_in_other_tasks_fails_its_task(tmp_path):
    """One name holds one kind of metric: a number where other tasks give a sample or a
    breakdown, or named as what results derive from them, was dropped without a word (its
    tasks counted as NaN or absent, the sample's values shown alone); now it fails its task,
    and the others stand."""
    spec = parse_spec(
        {
            "name": "k",
            "model": "busy",
            "factors": {"kind": ["a", "b", "c", "d", "e", "f"]},
            "replicates": 1,
            "seed": 1,
            "output": str(tmp_path),
        },
    )
    design = Design(spec)
    returned = {
        "a": {"wait": [1.0, 2.0, 3.0], "jc": {"short": {"m": 1.0}}},
        "b": {"wait": 5.0},
        "c": {"wait_p95": 9.0, "wait_count": 4.0},
        "d": {"jc": 2.0},
        "e": {"m_by_jc": 3.0},
        "f": {"jc": [4.0, 5.0]},
    }
    records = {}
    for task in design.tasks():
        kind = spec.factors[0].labels[task.cell[0]]
        metrics = metric_values(returned[kind])
        records[task.key] = {"key": task.key, "status": "ok", "metrics": metrics}
    dataset = assemble(design, records, 0.95)
    failures = failure_table(dataset, design, records)
    assert dataset["status"].values.ravel().tolist() == [1, 2, 2, 2, 2, 2]
    assert dataset["wait_count"].values.ravel().tolist()[0] == 3.0
    assert np.isnan(dataset["wait_count"].values.ravel()[1:]).all()
    assert dataset["wait_count_nan"].values.tolist() == [0] * 6
    end = "; a results file cannot hold both"
    assert dict(zip(failures["kind"].values, failures["failure_error"].values)) == {
        "b": f"ValueError: metric 'wait' is a number in this task and a sample in others{end}",
        "c": "ValueError: metric 'wait_p95' has the name of a metric results derive from the "
        f"sample 'wait' of other tasks (its size or a percentile){end}",
        "d": f"ValueError: metric 'jc' is a number in this task and a sample in others{end}",
        "e": "ValueError: metric 'm_by_jc' has the name results give a metric of the "
        f"breakdown 'jc' of other tasks{end}",
        "f": f"ValueError: metric 'jc' is a sample in this task and a breakdown in others{end}",
    }


def test_a_results_file_of_many_metrics_is_written_coordinates_first_and_reopens_whole(
    tmp_path,
):
    """Coordinates are defined before the variables that use them (netCDF-4 would otherwise
    attach every variable to its dimensions twice) and the file reopens as assembled."""
    import netCDF4

    spec = parse_spec(
        {
            "name": "many",
            "model": "busy",
            "factors": {"kind": ["a", "b", "c"], "load": [1, 2]},
            "replicates": 3,
            "seed": 1,
            "output": str(tmp_path),
        },
    )
    design = Design(spec)
    names = [f"metric_{i:03d}" for i in range(300)]
    rng = np.random.default_rng(2)
    records = {
        key: {"key": key, "status": "ok", "metrics": dict(zip(names, rng.random(300).tolist()))}
        for key in design.keys()
    }
    documented = {name: {"units": "s", "long_name": f"number {name[7:]}"} for name in names}
    dataset = assemble(design, records, 0.95, documented)
    path = write_netcdf(dataset, tmp_path / "results.nc")
    with netCDF4.Dataset(path) as handle:
        stored = list(handle.variables)
    assert stored[:3] == ["kind", "load", "replicate"]
    assert sorted(stored) == sorted(dataset.variables)
    reopened = xr.load_dataset(path)
    xr.testing.assert_identical(reopened, dataset)
    assert len(reopened.data_vars) == 300 * 7 + 2  # status and seed; failures in their group
    column = [records[key]["metrics"]["metric_299"] for key in design.keys()]
    assert reopened["metric_299"].values.ravel().tolist() == column
    assert reopened["metric_299"].attrs == {"units": "s", "long_name": "number 299"}
    # A dataset built in another order is written coordinates first too.
    shuffled = xr.Dataset({"v": (("kind", "replicate"), np.ones((3, 2)))})
    shuffled = shuffled.assign_coords(kind=["a", "b", "c"], replicate=[0, 1])
    with netCDF4.Dataset(write_netcdf(shuffled, tmp_path / "other.nc")) as handle:
        assert list(handle.variables) == ["kind", "replicate", "v"]
    xr.testing.assert_identical(xr.load_dataset(tmp_path / "other.nc"), shuffled)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "the model returned no metrics"),
        ([("v", 1.0)], "the model returned list, not a mapping metric: value"),
        ({"v": True}, r"metric 'v' is a boolean \(True\), not a number; return 1.0 or 0.0"),
        ({"v": np.bool_(False)}, r"metric 'v' is a boolean \(False\), not a number"),
        ({"v": np.array(True)}, r"metric 'v' is a boolean \(True\), not a number"),
        ({"v": 0.5 + 1j}, r"metric 'v' is a complex number \(\(0.5\+1j\)\); a metric is a real"),
        ({"v": np.complex64(2)}, r"metric 'v' is a complex number \(\(2\+0j\)\)"),
        (
            {"v": 2**53 + 1},
            "integer 9007199254740993, which float64 .* rounded to 9007199254740992",
        ),
        ({"v": -(2**60) - 1}, "integer -1152921504606846977, which float64 .* cannot hold exactly"),
        ({"v": np.int64(2**62 + 1)}, "integer 4611686018427387905, which float64"),
        ({"v": np.uint64(2**64 - 1)}, "integer 18446744073709551615, which float64"),
        ({"v": 10**400}, "integer 1000.*0, which float64 .* it is beyond float64's range"),
        ({"seed": 1.0}, "metric name 'seed' is reserved by the results layout"),
        ({"x": 1.0, "x_nan": 0.0}, "metric 'x_nan' has the name of a summary variable of"),
    ],
)
def test_metric_values_refuse_what_a_results_file_cannot_hold(raw, message):
    with pytest.raises((TypeError, ValueError), match=message):
        metric_values(raw)


def test_metric_values_keep_nan_and_numpy_numbers():
    values = metric_values({"a": np.float32(0.5), "b": np.int64(3), "c": math.nan})
    assert values["a"] == 0.5 and values["b"] == 3.0 and math.isnan(values["c"])
    assert all(type(v) is float for v in values.values())


def test_metric_values_keep_integers_float64_holds_exactly_and_infinities():
    exact = {"a": 2**53, "b": -(2**53), "c": 2**60, "d": np.int64(-(2**62)), "e": math.inf}
    values = metric_values(exact)
    assert values == {k: float(v) for k, v in exact.items()}
    assert [int(v) for v in list(values.values())[:4]] == [2**53, -(2**53), 2**60, -(2**62)]


def test_metric_values_refuse_the_same_once_their_names_were_seen_with_plain_numbers():
    """Names already checked skip their second check, not the check of their values."""
    assert metric_values({"v": 1.0}) == {"v": 1.0}
    assert metric_values({"v": 7}) == {"v": 7.0}
    for value, message in [
        (True, "is a boolean"),
        (2**53 + 1, "which float64"),
        (0.5 + 1j, "is a complex number"),
        ("1.0", "is not a number"),
    ]:
        with pytest.raises((TypeError, ValueError), match=message):
            metric_values({"v": value})
    assert metric_values({"v": np.float32(0.25)}) == {"v": 0.25}
    assert math.isnan(metric_values({"v": math.nan})["v"])
    assert list(metric_values({"v": [1.0, 2.0]}))[:2] == ["v@n", "v@q0"]
    assert metric_values({"v": {"a": {"m": 1}}}) == {"m@v=a": 1.0}
