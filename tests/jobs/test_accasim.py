"""AccaSim's FIFO against the ``jobs`` model's FCFS, job by job.

AccaSim (PyPI ``accasim``) runs as a command model runs it: ``specs/accasim/run_accasim.py`` in
a folder of its own, its metrics read from stdout and every job's times from starts.csv. The
jobs model replays the same trace slice with ``scheduler: fcfs``, ``estimate: exact``,
``kill_at_estimate: false`` and ``load: 1`` (AccaSim never kills a job and replays the trace's
arrivals), its ``jobs`` set to the number of jobs AccaSim ran (AccaSim's ``--jobs`` counts job
lines, and it skips a line with neither a requested nor an allocated size, as the model drops it).

Under these conditions every job starts and ends at the same second in both, when every job
of the slice has a positive run time and the same requested and allocated processors: the
whole KTH-SP2 and HPC2N slices of tests/data (3,000 jobs each; 2,528 and 1,354 of them queue,
for up to 3.2 days). Two AccaSim conventions differ from the model's, each shown on a small
trace written here:
- a job of run time 0 holds its processors until the next dispatching decision (the next
  arrival or completion, or one second later when there is none): the jobs behind it in the
  queue cannot start at its start time, as they do in the model;
- a job's size is its requested processors (field 8) when known, where the model takes the
  allocated ones (field 5): on a trace whose field 5 is set to field 8 the two agree again.
A third differs on traces with unknown run times (-1, as in SDSC-BLUE): AccaSim replays such a
job for -1 s (it ends before it starts, and its clock steps back a second), the model for 0 s.
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from campaign.models.jobs import run, schedule

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "specs" / "accasim" / "run_accasim.py"
DATA = ROOT / "tests" / "data"
FCFS = {"scheduler": "fcfs", "estimate": "exact", "kill_at_estimate": False, "load": 1.0}


def accasim(trace: Path, folder: Path, *args: str) -> tuple[dict[str, float], np.ndarray]:
    """AccaSim's metrics and its (job, submit, start, end) rows, times from the first submit."""
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, str(DRIVER), "--trace", str(trace), *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    with open(folder / "starts.csv", newline="") as stream:
        rows = [
            [int(row[k]) for k in ("job", "submit", "start", "end")]
            for row in csv.DictReader(stream)
        ]
    table = np.array(sorted(rows, key=lambda row: (row[1], row[0])), dtype=np.int64)
    table[:, 1:] -= table[0, 1]
    return json.loads(done.stdout), table


def fcfs(trace: Path, jobs: int) -> np.ndarray:
    """The jobs model's (job, submit, start, end) rows, in its order (submit, then trace)."""
    result = schedule({"trace": str(trace), "jobs": jobs, **FCFS}, 1)
    columns = (result.workload.job_id, result.workload.submit, result.start, result.end)
    table = np.column_stack([np.asarray(c) for c in columns])
    assert (table == np.round(table)).all()
    return table.astype(np.int64)


@pytest.mark.parametrize(
    ("name", "lines", "waited"),
    [
        ("KTH-SP2-1996-2.1-cln.swf.gz", 3000, 2528),
        ("HPC2N-2002-2.1-cln.swf.gz", 3000, 1354),
    ],
)
def test_fifo_starts_every_job_when_fcfs_does(name, lines, waited, tmp_path):
    trace = DATA / name
    metrics, theirs = accasim(trace, tmp_path / "run", "--jobs", str(lines), "--dispatcher", "FIFO")
    ours = fcfs(trace, len(theirs))
    assert theirs.shape == ours.shape
    np.testing.assert_array_equal(theirs, ours)
    assert int((ours[:, 2] > ours[:, 1]).sum()) == waited  # how many jobs queued
    model = run({"trace": str(trace), "jobs": len(theirs), **FCFS}, 1)
    assert metrics["jobs_run"] == model["jobs"] == len(theirs)
    assert metrics["jobs_rejected"] == 0
    for name in ("mean_wait", "max_wait", "makespan"):
        assert metrics[name] == model[name], name
    assert metrics["mean_bsld"] == pytest.approx(model["mean_bsld"], rel=1e-12)


def swf(path: Path, processors: int, jobs: list[tuple[int, int, int, int, int]]) -> Path:
    """A small SWF trace: (job, submit, run time, allocated, requested processors) per job."""
    lines = [f"; MaxProcs: {processors}"]
    for job, submit, runtime, allocated, requested in jobs:
        lines.append(f"{job} {submit} -1 {runtime} {allocated} -1 -1 {requested} 100 -1 1 1")
        lines[-1] += " -1 -1 -1 -1 -1 -1"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_zero_length_job_holds_its_processors_until_the_next_decision(tmp_path):
    trace = swf(tmp_path / "zero.swf", 4, [(1, 0, 10, 4, 4), (2, 1, 0, 4, 4), (3, 2, 5, 4, 4)])
    _, theirs = accasim(trace, tmp_path / "run")
    ours = fcfs(trace, 3)
    # job, submit, start, end: job 3 starts with job 2 in the model, a second later in AccaSim
    assert ours.tolist() == [[1, 0, 0, 10], [2, 1, 10, 10], [3, 2, 10, 15]]
    assert theirs.tolist() == [[1, 0, 0, 10], [2, 1, 10, 10], [3, 2, 11, 16]]


def test_an_unknown_run_time_is_minus_one_second_in_accasim(tmp_path):
    trace = swf(tmp_path / "minus.swf", 4, [(1, 0, 10, 4, 4), (2, 1, -1, 4, 4), (3, 2, 5, 4, 4)])
    _, theirs = accasim(trace, tmp_path / "run")
    assert fcfs(trace, 3).tolist() == [[1, 0, 0, 10], [2, 1, 10, 10], [3, 2, 10, 15]]
    assert theirs.tolist() == [[1, 0, 0, 10], [2, 1, 10, 9], [3, 2, 9, 14]]


def test_a_job_is_as_wide_as_it_requested_and_wider_than_the_machine_is_left_out(tmp_path):
    jobs = [(1, 0, 10, 4, 8), (2, 1, 10, 16, 16), (3, 2, 10, 4, 4)]
    trace = swf(tmp_path / "size.swf", 8, jobs)
    metrics, theirs = accasim(trace, tmp_path / "run")
    assert metrics["jobs_rejected"] == 1  # job 2, 16 processors on 8
    assert theirs.tolist() == [[1, 0, 0, 10], [3, 2, 10, 20]]
    assert fcfs(trace, 2).tolist() == [[1, 0, 0, 10], [3, 2, 2, 12]]  # job 1 on 4 processors
    requested = swf(tmp_path / "requested.swf", 8, [(j, s, r, q, q) for j, s, r, _, q in jobs])
    assert fcfs(requested, 2).tolist() == theirs.tolist()


def test_the_slice_given_to_accasim_is_the_trace_without_memory(tmp_path):
    """HPC2N's first job gives no memory and job 132 does, which AccaSim 1.1.3 cannot read:
    the driver hands it every line with its memory fields unknown, nothing else changed."""
    accasim(DATA / "HPC2N-2002-2.1-cln.swf.gz", tmp_path / "run", "--jobs", "200")
    with gzip.open(DATA / "HPC2N-2002-2.1-cln.swf.gz", "rt") as stream:
        original = [line.split() for line in stream if not line.startswith(";")][:200]
    given = [line.split() for line in (tmp_path / "run" / "accasim" / "workload.swf").open()]
    assert any(fields[6] != "-1" or fields[9] != "-1" for fields in original)
    for fields in original:
        fields[6] = fields[9] = "-1"
    assert given == original


def test_the_ready_spec_runs_accasim_as_a_program(scheduler_address, tmp_path):
    """specs/accasim-fifo.yaml end to end: each task runs the driver in a folder of its own on
    a worker, its inputs shipped there; the FIFO cells give the jobs model's FCFS mean wait."""
    from campaign.pipelines.run import run as run_campaign
    from campaign.results.netcdf import open_results
    from campaign.results.status import STATUS_OK

    python3 = shutil.which("python3")
    found = subprocess.run([python3, "-c", "import accasim"], capture_output=True).returncode
    assert found == 0, f"the spec runs python3 ({python3}), which cannot import accasim"
    spec = ROOT / "specs" / "accasim-fifo.yaml"
    results = run_campaign(spec, scheduler=scheduler_address, progress=False, output=tmp_path)
    reopened = open_results(tmp_path / "results.nc")
    kth = DATA / "KTH-SP2-1996-2.1-cln.swf.gz"
    expected_wait = {
        "FIFO": [run({"trace": str(kth), "jobs": n, **FCFS}, 1)["mean_wait"] for n in (500, 1000)],
        "SJF": [2527.018, 5960.732],
        "EBF": [1261.904, 2514.936],
    }
    assert expected_wait["FIFO"] == [9550.632, 15654.725]
    for data in (results, reopened):
        assert (data["status"] == STATUS_OK).all()
        assert data["jobs_run"].squeeze("replicate").sel(dispatcher="FIFO").values.tolist() == [
            500.0,
            1000.0,
        ]
        assert float(data["jobs_rejected"].sum()) == 0.0
        for dispatcher, waits in expected_wait.items():
            got = data["mean_wait"].sel(dispatcher=dispatcher).squeeze("replicate")
            assert got.values.tolist() == waits, dispatcher
    assert reopened["mean_wait"].attrs["units"] == "s"
