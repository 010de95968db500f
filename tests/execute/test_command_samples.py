"""A program returns samples and breakdowns as a Python model does: a JSON array in its stdout
object, a file of one number per line, a CSV column, a parser's array; stored, summarised,
queried, plotted and recomputed from kept outputs exactly as a Python model's, and results.nc
reopens with the numbers the program printed."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.pipelines.remetric import remetric
from campaign.plan.plan import make_plan
from campaign.render.sample_ecdf import plot_ecdf
from campaign.results.names import QUANTILE_GRID
from campaign.store.ledger import Ledger
from tests.conftest import dask_cluster

TWIN = """
import numpy as np


def arrays(seed, load):
    rng = np.random.default_rng(seed)
    jobs = 40 + seed % 40
    wait = rng.exponential(10.0 * load, jobs)
    response = wait + rng.uniform(1.0, 5.0, jobs)
    bsld = np.maximum(response / rng.uniform(1.0, 20.0, jobs), 1.0)
    half = jobs // 2
    classes = {
        "short": {"mean_wait": float(wait[:half].mean())},
        "long": {"mean_wait": float(wait[half:].mean())},
    }
    return wait, response, bsld, classes


def run(params, seed):
    wait, response, bsld, classes = arrays(seed, params["load"])
    return {"mean_wait": float(wait.mean()), "wait": wait, "response": response, "bsld": bsld,
            "job_class": classes}


run.metrics = {
    "mean_wait": {"units": "s", "long_name": "mean wait"},
    "wait": {"units": "s", "long_name": "wait of each job", "kind": "sample"},
    "response": {"units": "s", "long_name": "response time of each job", "kind": "sample"},
    "bsld": {"units": "1", "long_name": "bounded slowdown of each job", "kind": "sample"},
    "job_class": {"units": "1", "long_name": "per job class", "kind": "breakdown"},
}
"""

SIM = """
import json, sys
import twin

wait, response, bsld, classes = twin.arrays(int(sys.argv[1]), float(sys.argv[2]))
with open("response.txt", "w") as out:
    out.write("".join(f"{value!r}\\n" for value in response.tolist()))
with open("jobs.csv", "w") as out:
    out.write("job,bsld\\n" + "".join(f"{i},{v!r}\\n" for i, v in enumerate(bsld.tolist())))
print("simulated", len(wait), "jobs")
print(json.dumps({"mean_wait": float(wait.mean()), "wait": wait.tolist(), "job_class": classes}))
"""

PROGRAM = """
name: program-samples
model:
  command: [{python}, sim.py, "{{seed}}", "{{load}}"]
  inputs: [sim.py, twin.py]
  keep: [stdout, response.txt, jobs.csv]
  declare:
    mean_wait: {{units: s, long_name: mean wait}}
    wait: {{kind: sample, units: s, long_name: wait of each job}}
    response: {{kind: sample, units: s, long_name: response time of each job,
               file: response.txt}}
    bsld: {{kind: sample, long_name: bounded slowdown of each job, file: jobs.csv,
           column: bsld}}
    job_class: {{kind: breakdown, long_name: per job class}}
factors:
  load: [0.5, 2.0]
replicates: 3
seed: 7
output: out
"""

PYTHON_MODEL = """
name: program-samples
model: twin:run
factors:
  load: [0.5, 2.0]
replicates: 3
seed: 7
output: out
"""

SAMPLES = ("wait", "response", "bsld")


@pytest.fixture(scope="module")
def twin_cluster(tmp_path_factory):
    """A folder holding the twin model (twin.py) and its program (sim.py), and the address of
    a cluster of two workers that import the twin model: one cluster for the module's runs
    instead of a cluster started by each."""
    folder = tmp_path_factory.mktemp("twins")
    (folder / "twin.py").write_text(textwrap.dedent(TWIN))
    (folder / "sim.py").write_text(textwrap.dedent(SIM))
    with pytest.MonkeyPatch.context() as patch:
        path = os.environ.get("PYTHONPATH", "")
        patch.setenv("PYTHONPATH", f"{folder}{os.pathsep}{path}")
        patch.syspath_prepend(str(folder))
        with dask_cluster(2) as cluster:
            yield folder, cluster.scheduler_address


@pytest.fixture(scope="module")
def twins(twin_cluster):
    """The same campaign run by a program and by a Python model computing the same arrays:
    the two output folders."""
    folder, address = twin_cluster
    (folder / "program").mkdir()
    (folder / "python").mkdir()
    program = folder / "program" / "spec.yaml"
    program.write_text(textwrap.dedent(PROGRAM).format(python=sys.executable))
    for name in ("sim.py", "twin.py"):
        (folder / "program" / name).write_text((folder / name).read_text())
    (folder / "python" / "spec.yaml").write_text(textwrap.dedent(PYTHON_MODEL))
    campaign.run(program, scheduler=address, progress=False)
    campaign.run(folder / "python" / "spec.yaml", scheduler=address, progress=False)
    return folder / "program" / "out", folder / "python" / "out", folder


def twin_arrays(folder: Path):
    sys.path.insert(0, str(folder))
    try:
        import twin
    finally:
        sys.path.remove(str(folder))
    return twin.arrays


def whole(path: Path) -> xr.Dataset:
    """A results file as one Dataset: its root with the samples' quantiles (group
    ``samples``) and each breakdown (group ``breakdowns/<dimension>``) beside it, as these
    tests compare them."""
    from campaign.results.netcdf import open_breakdown, open_samples, stored_breakdowns

    samples = open_samples(path)
    parts = [
        xr.load_dataset(path),
        samples[[n for n in samples.data_vars if "quantile" in samples[n].dims]],
    ]
    parts += [open_breakdown(path, dimension) for dimension in stored_breakdowns(path)]
    return xr.merge(parts, combine_attrs="override")


def test_results_reopen_with_the_programs_numbers(twins):
    program, _, folder = twins
    arrays = twin_arrays(folder)
    results = whole(program / "results.nc")
    assert int((results.status == 1).sum()) == 6
    for load in (0.5, 2.0):
        for replicate in range(3):
            task = results.sel(load=load, replicate=replicate)
            wait, response, bsld, classes = arrays(int(task.seed), load)
            for name, values in (("wait", wait), ("response", response), ("bsld", bsld)):
                np.testing.assert_array_equal(task[name].values, np.quantile(values, QUANTILE_GRID))
                assert float(task[f"{name}_count"]) == values.size
                for percentile in (50, 95, 99):
                    assert float(task[f"{name}_p{percentile}"]) == np.percentile(values, percentile)
            assert float(task.mean_wait) == float(wait.mean())
            by_class = task.mean_wait_by_job_class
            assert by_class.job_class.values.tolist() == ["short", "long"]
            assert by_class.values.tolist() == [
                classes["short"]["mean_wait"],
                classes["long"]["mean_wait"],
            ]
    assert results.response.attrs["units"] == "s"
    assert results.response.attrs["long_name"] == "quantiles of response time of each job per task"
    assert results.bsld_p95.attrs == {
        "units": "1",
        "long_name": "95th percentile of bounded slowdown of each job",
    }


def test_a_programs_samples_are_stored_as_a_python_models(twins):
    program, python, _ = twins
    ours, theirs = whole(program / "results.nc"), whole(python / "results.nc")
    assert sorted(ours.variables) == sorted(theirs.variables)
    for name in theirs.variables:
        assert ours[name].identical(theirs[name]), name
    assert "wait_p95_mean" in ours and "bsld_count_ci_low" in ours
    assert "quantile" in ours["wait"].dims and "mean_wait_by_job_class" in ours


def cli(*args: str) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


def test_query_and_plot_show_a_programs_sample_as_a_python_models(twins, tmp_path):
    program, python, _ = twins
    for metric in ("wait_p95", "response_p50", "bsld_count"):
        shown = cli("query", str(program), "--metric", metric, "--by", "load")
        assert shown == cli("query", str(python), "--metric", metric, "--by", "load")
        assert metric in shown and "load" in shown
    ours, theirs = campaign.open_samples(program), campaign.open_samples(python)
    for sample in SAMPLES:
        drawn = plot_ecdf(ours, sample, by="load").axes[0]
        expected = plot_ecdf(theirs, sample, by="load").axes[0]
        assert [line.get_label() for line in drawn.lines] == ["0.5", "2"]  # general format
        assert drawn.get_title() == expected.get_title()
        assert drawn.get_xlabel() == expected.get_xlabel()
        for line, twin in zip(drawn.lines, expected.lines):
            np.testing.assert_array_equal(line.get_xdata(), twin.get_xdata())
            np.testing.assert_array_equal(line.get_ydata(), twin.get_ydata())
    figure = tmp_path / "response.png"
    cli("plot", str(program), "--metric", "response", "--by", "load", "--out", str(figure))
    assert figure.stat().st_size > 10_000


def test_remetric_recomputes_a_programs_samples_from_its_kept_outputs(twins):
    program, _, _ = twins
    before = whole(program / "results.nc")
    stored = Ledger(program).load()
    done = remetric(program)
    assert done.tasks == 6
    assert done.metrics == ["bsld", "job_class", "mean_wait", "response", "wait"]
    after = whole(program / "results.nc")
    (stamp,) = json.loads(after.attrs["metrics_recomputed"])
    assert stamp["tasks"] == 6
    for name in before.data_vars:
        assert after[name].identical(before[name]), name
    records = Ledger(program).load()
    for key, record in stored.items():
        assert records[key]["metrics"] == record["metrics"]
        assert records[key]["metrics_from"]["parser"] == "stdout"


UNDECLARED = """
name: waits-later
model:
  command: [{python}, sim.py, "{{seed}}", "{{load}}"]
  inputs: [sim.py, twin.py]
  keep: [response.txt]
factors:
  load: [0.5, 2.0]
replicates: 2
seed: 3
output: out
"""

PARSER = """
import numpy as np


def responses(folder):
    return {"response": np.loadtxt(folder / "response.txt")}
"""


def test_remetric_adds_a_sample_a_parser_returns_from_kept_files(
    twins, twin_cluster, tmp_path, monkeypatch
):
    _, _, folder = twins
    for name in ("sim.py", "twin.py"):
        (tmp_path / name).write_text((folder / name).read_text())
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(UNDECLARED).format(python=sys.executable))
    campaign.run(tmp_path / "spec.yaml", scheduler=twin_cluster[1], progress=False)
    (tmp_path / "later_responses.py").write_text(textwrap.dedent(PARSER))
    monkeypatch.syspath_prepend(str(tmp_path))
    first = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert "response" not in first
    assert cli("remetric", str(tmp_path / "spec.yaml"), "--parse", "later_responses:responses")
    results = whole(tmp_path / "out" / "results.nc")
    arrays = twin_arrays(folder)
    for load in (0.5, 2.0):
        for replicate in range(2):
            task = results.sel(load=load, replicate=replicate)
            _, response, _, _ = arrays(int(task.seed), load)
            np.testing.assert_array_equal(
                task.response.values, np.quantile(response, QUANTILE_GRID)
            )
            assert float(task.response_p99) == np.percentile(response, 99)
    assert results.mean_wait.identical(first.mean_wait)


def test_stdout_not_kept_is_said_so_by_remetric(twins, twin_cluster, tmp_path, capsys):
    _, _, folder = twins
    for name in ("sim.py", "twin.py"):
        (tmp_path / name).write_text((folder / name).read_text())
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(UNDECLARED).format(python=sys.executable))
    campaign.run(tmp_path / "spec.yaml", scheduler=twin_cluster[1], progress=False)
    assert main(["remetric", str(tmp_path / "spec.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "stdout is empty" not in err
    assert "stdout was not kept for this task" in err and "keep: [stdout]" in err


def test_a_parser_returning_an_array_and_a_breakdown(tmp_path, write_spec, monkeypatch):
    (tmp_path / "arrayparser.py").write_text(
        "import numpy as np\n"
        "def metrics(folder):\n"
        "    values = [float(v) for v in (folder / 'stdout').read_text().split()]\n"
        "    return {'value': np.array(values), 'total': np.float64(sum(values)),\n"
        "            'size': np.int64(len(values)),\n"
        "            'part': {'low': {'total': sum(values[:2])}, 'high': {'total': 0.5}}}\n"
    )
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = write_spec(
        """
        name: parsed-array
        model:
          command: [/bin/sh, -c, "seq {n}"]
          metrics: {parse: "arrayparser:metrics"}
          declare:
            value: {kind: sample}
            total: {}
            size: {}
            part: {kind: breakdown}
        factors:
          n: [3, 7]
        replicates: 1
        seed: 1
        output: out
        """
    )
    campaign.run(spec, workers=1, progress=False)
    results = whole(tmp_path / "out" / "results.nc")
    for n in (3, 7):
        task = results.sel(n=n, replicate=0)
        values = np.arange(1.0, n + 1)
        np.testing.assert_array_equal(task.value.values, np.quantile(values, QUANTILE_GRID))
        assert float(task.value_count) == n and float(task.size) == n
        assert float(task.total) == values.sum()
        assert task.total_by_part.values.tolist() == [3.0, 0.5]


def refusal(write_spec, declare: str, metrics: str = "stdout") -> str:
    spec = write_spec(
        f"""
        name: refused
        model:
          command: [/bin/echo, hi]
          metrics: {metrics}
          declare: {declare}
        replicates: 1
        seed: 1
        """
    )
    with pytest.raises(CampaignError) as caught:
        make_plan(spec)
    assert "\n" not in str(caught.value)
    return str(caught.value)


@pytest.mark.parametrize(
    "declare, metrics, error",
    [
        ("{w: {kind: samples}}", "stdout", "model.declare.w.kind: 'samples' is not allowed; use"),
        ("{w: {file: w.txt}}", "stdout", "'w' is declared kind: scalar; write kind: sample"),
        ("{c: {kind: breakdown, file: c.txt}}", "stdout", "'c' is declared kind: breakdown"),
        ("{w: {kind: sample, column: wait}}", "stdout", "column: names a column of file:, which"),
        ("{w: {kind: sample, file: ../w.txt}}", "stdout", "must name a file of the task's"),
        ("{Class: {kind: breakdown}}", "stdout", "a breakdown is named by its dimension"),
        ("{w: {kind: sample}, w_p95: {}}", "stdout", "'w_p95' is the name results give to the"),
        ("{w: {kind: sample, file: w.txt}}", "stdout", "every metric of model.declare lies in a"),
        ("{w: {kind: sample, file: o.json}, m: {}}", "{file: o.json}", "is also the file of"),
    ],
)
def test_a_kind_the_output_cannot_give_is_refused_before_any_work(
    write_spec, tmp_path, declare, metrics, error
):
    assert error in refusal(write_spec, declare, metrics)
    assert not (tmp_path / "outputs").exists()


PROGRAMS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "programs.md"

DOCUMENTED_PROGRAM = """
import json
print("a log line")
print(json.dumps({"mean_wait": 2.0, "wait": [1.0, 3.0],
                  "job_class": {"short": {"mean_wait": 1.0}, "long": {"mean_wait": 3.0}}}))
open("response.txt", "w").write("2.5\\n4.5\\n")
open("jobs.csv", "w").write("job,bsld\\n1,1.0\\n2,1.5\\n")
"""


def readme_declare() -> str:
    """The ``declare:`` block of the reference's Samples and breakdowns, as written there."""
    part = PROGRAMS_PAGE.read_text().split("- **Samples and breakdowns**", 1)[1]
    block = part.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert block.lstrip().startswith("declare:")
    return textwrap.dedent(block)


def test_the_documented_declare_example_runs(tmp_path, twin_cluster):
    (tmp_path / "sim.py").write_text(textwrap.dedent(DOCUMENTED_PROGRAM))
    model = textwrap.indent(readme_declare(), "  ")
    (tmp_path / "spec.yaml").write_text(
        f"name: readme\nmodel:\n  command: [{sys.executable}, sim.py]\n  inputs: [sim.py]\n"
        f"{model}replicates: 1\nseed: 1\noutput: out\n"
    )
    campaign.run(tmp_path / "spec.yaml", scheduler=twin_cluster[1], progress=False)
    results = whole(tmp_path / "out" / "results.nc").isel(replicate=0)
    assert float(results.mean_wait) == 2.0
    assert [float(results[f"{name}_p50"]) for name in SAMPLES] == [2.0, 3.5, 1.25]
    assert results.mean_wait_by_job_class.values.tolist() == [1.0, 3.0]
    assert results.bsld.attrs["long_name"] == "quantiles of bounded slowdown per task"
    assert results.response.attrs["units"] == "s"


OLD_VERSION = '#!/bin/sh\necho "wait=2.5"\necho "y=$1"\n'
NEW_VERSION = '#!/bin/sh\necho "{\\"wait\\": [1, 2, 3], \\"y\\": $1}"\n'
VERSIONS = """
name: versions
model:
  command: ["{sim}", "{replicate}"]
factors:
  sim: {old: ./old.sh, new: ./new.sh}
paired: [sim]
replicates: 2
seed: 3
output: out
"""


@pytest.mark.parametrize("metrics", ["", "metrics: [wait, y]\n"])
def test_a_metric_one_version_prints_as_a_number_and_another_as_a_sample_is_not_mixed(
    tmp_path, twin_cluster, metrics, capsys
):
    """The old version prints its mean wait, the new one every job's wait. The old one's
    values were dropped without a word (counted as NaN: 'finished tasks, the value
    undefined') beside the new one's wait_count and percentiles; now its tasks fail saying
    why, and the new one's stand."""
    for name, text in (("old.sh", OLD_VERSION), ("new.sh", NEW_VERSION)):
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    (tmp_path / "spec.yaml").write_text(VERSIONS + metrics)
    campaign.run(tmp_path / "spec.yaml", scheduler=twin_cluster[1], progress=False)
    results = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert results.status.sel(sim="old").values.tolist() == [2, 2]
    assert results.status.sel(sim="new").values.tolist() == [1, 1]
    assert np.isnan(results.wait_count.sel(sim="old").values).all()
    assert results.wait_count.sel(sim="new").values.tolist() == [3.0, 3.0]
    assert results.wait_count_nan.values.tolist() == [0, 0]
    assert results.y.sel(sim="new").values.tolist() == [0.0, 1.0]
    with xr.open_dataset(tmp_path / "out" / "results.nc", group="failures") as failed:
        errors = sorted(str(error) for error in failed.failure_error.values)
    error = (
        "ValueError: metric 'wait' is a number in this task and a sample in others; a results "
        "file cannot hold both"
    )
    assert errors == [error, error]
    # status counts and lists them as results.nc does (it said "2 done, 0 failed" of the 2
    # tasks that results.nc counts failed, when they were stored before the clash was seen)
    assert main(["status", str(tmp_path / "spec.yaml")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("versions: 4 tasks: 2 done, 2 failed, 0 missing  (ledger ")
    failed = [line.split(": ", 2)[2] for line in lines if line.startswith("  failed:")]
    assert failed == [error, error]
