"""How a program's output becomes metrics: a metric given twice, an integer float64 would
round, printf's NaN forms, a huge stdout read as a stream, an output a task did not keep."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.execute.command_metrics import FolderOutputs, metrics_from_outputs
from campaign.spec.command_model import MetricsSource

STDOUT = MetricsSource()


def from_stdout(text: bytes) -> dict:
    return metrics_from_outputs(STDOUT, {"stdout": text})


def refused(text: bytes, source: MetricsSource = STDOUT, **files: bytes) -> str:
    outputs = {"stdout": text, **{f"files/{name}": data for name, data in files.items()}}
    with pytest.raises(ValueError) as caught:
        metrics_from_outputs(source, outputs)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    "text, error",
    [
        (b"y=1\ny=2\n", "stdout: metric 'y' is printed twice; print each metric once"),
        (b"x=1\ny = 1\nlog\ny=1\n", "stdout: metric 'y' is printed twice"),
        (b'{"y": 1, "y": 2}', "stdout: 'y' is given twice in the JSON object"),
        (b'log\n{"x": 0, "y": 1, "y": 2}\n', "stdout: 'y' is given twice in the JSON object"),
        (b'{"c": {"a": {"m": 1}, "a": {"m": 2}}}', "stdout: 'a' is given twice in the JSON"),
        (b"y,x,y\n1,2,3\n", "stdout: metric 'y' is given twice in the CSV header"),
    ],
)
def test_a_metric_given_twice_is_refused(text, error):
    assert error in refused(text)


def test_a_metric_given_by_stdout_and_by_its_own_file_is_refused():
    from campaign.spec.command_model import SampleFile

    source = MetricsSource(samples=(SampleFile("wait", "waits.txt"),))
    assert refused(b'{"wait": [1, 2]}', source, **{"waits.txt": b"1\n2\n"}) == (
        "metric 'wait' is given twice: by stdout and by its own file waits.txt; give each "
        "metric once"
    )


@pytest.mark.parametrize(
    "text",
    [
        b"y=9007199254740993",
        b'{"y": 9007199254740993}',
        b"y=-9007199254740993",
        b"y,z\n2,9007199254740993",
    ],
)
def test_an_integer_float64_would_round_is_refused(text):
    name = "z" if text.startswith(b"y,") else "y"
    value = text.rsplit(b"=", 1)[-1].rsplit(b":", 1)[-1].rsplit(b",", 1)[-1].strip(b" }")
    rounded = int(float(int(value)))
    assert refused(text) == (
        f"stdout: metric {name!r} is the integer {int(value)}, which float64 (how results "
        f"store metrics) would round to {rounded}; every integer up to 2**53 is exact: print "
        "it as a float (with a decimal point) if the rounding is acceptable"
    )


def test_integers_float64_holds_exactly_are_kept():
    assert from_stdout(b"a=9007199254740992\nb=-9007199254740992\nc=18014398509481984\n") == {
        "a": 2.0**53,
        "b": -(2.0**53),
        "c": 2.0**54,  # beyond 2**53 but a float64 exactly
    }
    assert from_stdout(b"a=9007199254740993.0") == {"a": 2.0**53}  # a float: rounding accepted
    assert "beyond float64's range" in refused(b"a=" + b"9" * 400)
    # a sample is kept as its quantiles, as a Python model's: its integers as float64 holds them
    assert from_stdout(b'{"w": [9007199254740993, 2]}')["w"].tolist() == [2.0**53, 2.0]


@pytest.mark.parametrize(
    "text, error",
    [
        (
            b"y=1e400",
            "stdout: metric 'y' is 1e400, beyond float64's range (it would be stored as inf)",
        ),
        (b"y=-1.8e308", "stdout: metric 'y' is -1.8e308, beyond float64's range"),
        (b"y,z\n1,2e999\n", "stdout: metric 'z' is 2e999, beyond float64's range"),
        (b'{"y": 1e400}', "stdout: the JSON object holds 1e400, beyond float64's range"),
        (b'{"w": [1.5, -3e999]}', "stdout: the JSON object holds -3e999, beyond float64's range"),
        (b'{"c": {"a": {"m": 1e309}}}', "stdout: the JSON object holds 1e309, beyond float64's"),
        (b"y=5_000", "stdout: metric 'y' is '5_000', not a number"),
        ("y=\u0665".encode(), "stdout: metric 'y' is '\u0665', not a number"),
    ],
)
def test_a_finite_number_too_large_for_float64_or_no_printed_number_is_refused(text, error):
    assert error in refused(text)


def test_the_largest_numbers_and_infinities_printed_so_are_kept():
    found = from_stdout(b"a=1.7976931348623157e308\nb=-inf\nc=Infinity\nd=4e-320\n")
    assert found == {"a": 1.7976931348623157e308, "b": -math.inf, "c": math.inf, "d": 4e-320}
    found = from_stdout(b'{"a": 1.7976931348623157e308, "b": -Infinity, "w": [Infinity, 2]}')
    assert (found["a"], found["b"], found["w"].tolist()) == (
        1.7976931348623157e308,
        -math.inf,
        [math.inf, 2.0],
    )
    assert from_stdout(b"7\n1e400\n" + b"x=2") == {"x": 2.0}  # lines without = are the program's


def test_printf_nan_forms_are_nan_and_infinities_stay_infinite():
    text = b"a=nan\nb=-nan\nc=-NaN\nd=NAN\ne=nan(0x8000)\nf=inf\ng=-inf\nh=-INF\n"
    found = from_stdout(text)
    assert all(math.isnan(found[name]) for name in "abcde")
    assert [found["f"], found["g"], found["h"]] == [math.inf, -math.inf, -math.inf]
    assert math.isnan(from_stdout(b'{"a": "-nan"}')["a"])
    assert math.isnan(from_stdout(b"a,b\n-nan,1\n")["a"])
    assert "metric 'a' is 'nano', not a number" in refused(b"a=nano")


def test_a_program_printing_minus_nan_finishes_with_an_undefined_value(
    tmp_path, write_spec, scheduler_address
):
    spec = write_spec(
        """
        name: undefined
        model:
          command: [/bin/sh, -c, "printf 'y=%f\\nz=%f\\nw=%s\\n' -nan inf 2.5", "{seed}"]
        replicates: 2
        seed: 2
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.status.values.tolist() == [1, 1]
    assert np.isnan(data.y.values).all() and data.y_nan.values.tolist() == 2
    assert data.z.values.tolist() == [math.inf, math.inf] and data.w.values.tolist() == [2.5, 2.5]


SOMETIMES_Z = '#!/bin/sh\necho "y=$1"\n[ "$1" -ne 1 ] && echo "z=$1"\nexit 0\n'
DECLARED = """
name: declared
model:
  command: [./sim.sh, "{replicate}"]
  inputs: [sim.sh]DECLARE
replicates: 3
seed: 1
output: out
"""


def test_metrics_declared_after_results_were_stored_judge_them_as_a_fresh_run_would(
    tmp_path, write_spec, capsys, scheduler_address
):
    """A program that prints z except in replicate 1, run, then given declare: {y, z}: a
    fresh run fails that task, so here too plan, run and status count its stored success
    failed, a rerun retries it, and results.nc is the fresh folder's."""
    (tmp_path / "sim.sh").write_text(SOMETIMES_Z)
    (tmp_path / "sim.sh").chmod(0o755)
    spec = write_spec(DECLARED.replace("DECLARE", ""))
    assert main(["run", str(spec), "--scheduler", scheduler_address, "--quiet"]) == 0
    write_spec(DECLARED.replace("DECLARE", "\n  declare: {y: {}, z: {}}"))
    capsys.readouterr()
    assert main(["plan", str(spec)]) == 0
    planned = capsys.readouterr().out.splitlines()
    assert planned[-2] == "plan: 2 done, 1 failed (will be retried), 0 missing; 1 tasks would run"
    assert planned[-1].startswith("  results.nc was written from another spec than the one")
    assert main(["run", str(spec), "--scheduler", scheduler_address, "--quiet"]) == 1
    rerun = capsys.readouterr().out.splitlines()
    assert rerun[0] == "declared: 3 tasks (1 cells x 3 replicates); 2 already done, 1 to run"
    fresh = [
        "run",
        str(spec),
        "--scheduler",
        scheduler_address,
        "--quiet",
        "--out",
        str(tmp_path / "fresh"),
    ]
    assert main(fresh) == 1
    for lines in (rerun, capsys.readouterr().out.splitlines()):
        assert "2 tasks ok, 1 failed, 0 missing" in lines
        assert not any("NaN" in line for line in lines)
    stored = xr.load_dataset(tmp_path / "out" / "results.nc")
    xr.testing.assert_identical(
        stored.drop_attrs(), xr.load_dataset(tmp_path / "fresh" / "results.nc").drop_attrs()
    )
    assert stored["status"].values.tolist() == [1, 2, 1]
    assert stored["y"].values.tolist()[::2] == stored["z"].values.tolist()[::2] == [0.0, 2.0]
    assert np.isnan(stored["y"].values[1]) and np.isnan(stored["z"].values[1])
    assert stored["y_n"].item() == stored["z_n"].item() == 2
    assert stored["y_nan"].item() == stored["z_nan"].item() == 0
    error = "declared metric 'z' is missing from the program's output"
    assert failures(tmp_path / "out") == failures(tmp_path / "fresh") == [error]
    assert main(["status", str(spec)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("declared: 3 tasks: 2 done, 1 failed, 0 missing  (ledger ")
    seed = stored["seed"].values[1]
    assert [line for line in lines if line.startswith("  failed:")] == [
        f"  failed: (single cell) replicate 1 (seed {seed}, 1 attempts): {error}"
    ]


def failures(output: Path) -> list[str]:
    with xr.open_dataset(output / "results.nc", group="failures") as failed:
        return sorted(str(error) for error in failed.failure_error.values)


@pytest.mark.parametrize(
    "printed, error",
    [
        ("y=1\\nlog\\ny=2\\n", "stdout: metric 'y' is printed twice; print each metric once"),
        ('{\\"y\\": 1, \\"y\\": 2}', "stdout: 'y' is given twice in the JSON object"),
        ("y=9007199254740993\\n", "metric 'y' is the integer 9007199254740993, which float64"),
        ('{\\"y\\": 9007199254740993}', "would round to 9007199254740992"),
    ],
)
def test_a_task_printing_a_metric_twice_or_an_inexact_integer_fails_in_one_line(
    tmp_path, write_spec, scheduler_address, printed, error
):
    spec = write_spec(
        f"""
        name: refused
        model:
          command: [/bin/sh, -c, "printf '{printed}'"]
        replicates: 1
        seed: 2
        output: out
        """
    )
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    (found,) = failures(tmp_path / "out")
    assert error in found and "\n" not in found


def test_a_program_printing_a_name_of_a_samples_stored_entry_fails_in_one_line(
    tmp_path, write_spec, scheduler_address
):
    """x@n=5 was taken for a sample's size: every task succeeded, then writing results.nc
    failed on the quantiles it lacked (KeyError: 'x@q0') and no results file was written."""
    spec = write_spec(
        """
        name: entry
        model:
          command: [/bin/sh, -c, "printf 'y=1.5\\nx@n=5\\n'", "{seed}"]
        replicates: 2
        seed: 2
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.status.values.tolist() == [2, 2]
    assert (
        failures(tmp_path / "out")
        == [
            "metric name 'x@n' has the form of a sample's stored entry (NAME@n, "
            "NAME@q<k>); rename it"
        ]
        * 2
    )


def records(output: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted((output / "ledger").glob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line
    ]


def test_200_mb_of_stdout_leaves_the_workers_memory_as_a_small_output_does(tmp_path, write_spec):
    """Before the metrics were read as a stream the worker held stdout whole, as text and as
    lines: 200 MB of short log lines peaked at 2.3 GB; now at what a 1 kB output takes."""
    spec = write_spec(
        """
        name: huge
        model:
          command: [/bin/sh, -c, "yes 'step done' | head -c {size}; echo; echo done=1"]
        factors:
          size: [1000, 200000000]
        replicates: 1
        seed: 2
        output: out
        """
    )
    data = campaign.run(spec, workers=1, progress=False)
    assert data.done.values.ravel().tolist() == [1.0, 1.0]
    peaks = {r["cell"]["size"]: r["peak_memory"] for r in records(tmp_path / "out")}
    assert 0 < peaks[200_000_000] < peaks[1000] + 40_000_000


def test_metrics_text_read_as_a_stream_from_the_tasks_files(tmp_path):
    """On the worker the outputs are files: a log of many blocks, key=value lines among it,
    a progress line of carriage returns, and the JSON object on the last line."""
    log = b"".join(b"step %d of the run\n" % i for i in range(200_000))
    (tmp_path / "out").write_bytes(log + b"a = 1\nprogress 10%\rprogress 90%\rb=2\n" + log)
    (tmp_path / "folder").mkdir()
    outputs = FolderOutputs(tmp_path / "folder", {"stdout": tmp_path / "out"})
    assert metrics_from_outputs(STDOUT, outputs) == {"a": 1.0, "b": 2.0}
    (tmp_path / "out").write_bytes(log + b'{"a": [1, 2.5], "b": 3}\n\n')
    found = metrics_from_outputs(STDOUT, outputs)
    assert found["a"].tolist() == [1.0, 2.5] and found["b"] == 3.0
    (tmp_path / "out").write_bytes(b"x" * (70 * 2**20) + b"\n" + log)  # a line over the limit
    with pytest.raises(ValueError, match="stdout holds no metrics .* it begins 'xxx"):
        metrics_from_outputs(STDOUT, outputs)


def test_samples_from_a_file_of_numbers_and_a_csv_column():
    from campaign.spec.command_model import SampleFile

    source = MetricsSource(
        samples=(SampleFile("wait", "waits.txt"), SampleFile("bsld", "jobs.csv", "bsld")),
    )
    outputs = {
        "stdout": b"mean=2\n",
        "files/waits.txt": b"1.5\n\n2\n-3e1\n",
        "files/jobs.csv": b"job,bsld\n1,1.25\n2,4\n\n",
    }
    found = metrics_from_outputs(source, outputs)
    assert found["mean"] == 2.0
    assert found["wait"].tolist() == [1.5, 2.0, -30.0]
    assert found["bsld"].tolist() == [1.25, 4.0]
    for files, error in [
        ({"waits.txt": b"1\nslow\n"}, "waits.txt (sample wait) line 2: 'slow' is not a number"),
        ({"jobs.csv": b"job,wait\n1,2\n"}, "column 'bsld' is not in its header row (its"),
        ({"jobs.csv": b"job,bsld\n1,2\n2\n"}, "jobs.csv (sample bsld) line 3: no value in"),
        ({"jobs.csv": b"bsld,bsld\n1,2\n"}, "column 'bsld' is twice in its header row"),
    ]:
        files = {"waits.txt": b"1\n", "jobs.csv": b"bsld\n1\n", **files}
        assert error in refused(b"mean=2", source, **files)


def test_an_output_a_task_did_not_keep_is_named_as_not_kept():
    with pytest.raises(ValueError) as caught:
        metrics_from_outputs(STDOUT, {"files/schedule.csv": b"job\n1\n"})
    assert str(caught.value) == (
        "stdout was not kept for this task, so its metrics cannot be read again; name it in "
        "the model's keep: (keep: [stdout]) for the tasks run from then on"
    )
    assert "stdout is empty" in refused(b"")
    from campaign.spec.command_model import SampleFile

    sample = MetricsSource(samples=(SampleFile("wait", "waits.txt"),), main=False)
    with pytest.raises(ValueError, match=r"waits.txt was not kept for this task"):
        metrics_from_outputs(sample, {"stdout": b""})


def declared_check(declare: dict, printed: bytes) -> str | None:
    """Why a program printing ``printed`` breaks ``declare`` (None: it does not)."""
    from campaign.results.check import check_declared
    from campaign.results.names import metric_values
    from campaign.spec.command_model import CommandSpec, DeclaredMetric

    declared = tuple(DeclaredMetric(name, kind=kind) for name, kind in declare.items())
    command = CommandSpec(argv=("sim",), program=None, declare=declared)
    try:
        check_declared(command, metric_values(from_stdout(printed)))
    except ValueError as error:
        return str(error)
    return None


@pytest.mark.parametrize(
    "printed, error",
    [
        (
            b'{"w": 3, "c": {"a": {"m": 1}}, "m": 2}',
            "metric 'w' is declared a sample (kind: sample) but the program gave a number",
        ),
        (
            b'{"w": [1], "c": [1, 2], "m": 2}',
            "metric 'c' is declared a breakdown (kind: "
            "breakdown) but the program gave an array of numbers",
        ),
        (
            b'{"w": [1], "c": {"a": {"m": 1}}, "m": [2]}',
            "metric 'm' is declared a number "
            "(kind: scalar, the default) but the program gave an array of numbers",
        ),
        (
            b'{"w": [1], "c": {"a": {"x": 1}}, "m": 2}',
            "metric 'x' of breakdown 'c' is not declared in model.declare (w, c, m)",
        ),
        (b'{"w": [1], "c": {"a": {"m": 1}}}', None),  # m is given inside the breakdown
        (b'{"w": [1], "m": 2}', "declared metric 'c' is missing from the program's output"),
        (b'{"w": [1], "c": {"a": {"m": 1}}, "m": 2}', None),
    ],
)
def test_a_metric_of_another_kind_than_declared_fails_the_task(printed, error):
    assert declared_check({"w": "sample", "c": "breakdown", "m": "scalar"}, printed) == error
