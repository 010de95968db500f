"""`campaign` itself in SLURM batch jobs: the driver as a job that stops at its time limit and
requeues itself, and a campaign's shards as an array job merged into one run's results."""

from __future__ import annotations

import re
import subprocess
import time

import xarray as xr

from tests.conftest import load_script


def differences(slurm, first, second) -> list[str]:
    return load_script("compare_results", slurm.repo).differences(first, second)


def sbatch(slurm, tmp_path, *args: str) -> str:
    submitted = subprocess.run(
        ["sbatch", "--parsable", *args],
        cwd=tmp_path,
        env=slurm.env,
        capture_output=True,
        text=True,
        check=True,
    )
    return submitted.stdout.strip().split(";")[0]


def job_state(job: str) -> str:
    shown = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True)
    match = re.search(r"JobState=(\w+)", shown.stdout)
    return match.group(1) if match else "GONE"


def test_shards_as_an_array_job_merge_into_a_single_runs_results(slurm, tmp_path):
    (tmp_path / "spec.yaml").write_text(slurm.spec_text("array", 200, 3, 10))
    script = slurm.repo / "cluster" / "shards-array.sbatch"
    sbatch(slurm, tmp_path, "--wait", "--array=1-3", "--cpus-per-task=1", str(script), "spec.yaml")
    for index in (1, 2, 3):
        log = (tmp_path / "array").parent.glob(f"campaign-shard-*_{index}.out")
        assert "0 missing" in next(log).read_text()
    merged = slurm.campaign("merge", "array", "-o", "array", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    assert "merged 1/3 2/3 3/3 into" in merged.stdout
    assert "30 tasks ok, 0 failed, 0 missing" in merged.stdout
    single = slurm.campaign("run", "spec.yaml", "--out", "single", "--workers", "2", cwd=tmp_path)
    assert single.returncode == 0, single.stderr
    assert differences(slurm, tmp_path / "array/results.nc", tmp_path / "single/results.nc") == []
    slurm.assert_complete(xr.load_dataset(tmp_path / "array" / "results.nc"))


def test_the_driver_as_a_job_stops_at_its_limit_requeues_and_finishes(slurm, tmp_path):
    # 80 tasks of 1 s on 2 workers: 40 s of work once the cluster is up, more than a job
    # signalled 75 s before its 2-minute limit (at most 45 s after its start) can do, so it
    # requeues at least once
    (tmp_path / "spec.yaml").write_text(slurm.spec_text("driver", 1000, 2, 40))
    script = slurm.repo / "cluster" / "campaign-run.sbatch"
    job = sbatch(
        slurm,
        tmp_path,
        "--time=2",
        "--signal=B:TERM@75",
        "--job-name=cmp-driver",
        str(script),
        "spec.yaml",
    )

    pending_since: list[float] = []

    def finished() -> bool:
        state = job_state(job)
        if state != "PENDING":
            pending_since.clear()
            return state in ("COMPLETED", "FAILED", "TIMEOUT", "GONE")
        # SLURM holds a requeued job 2 minutes (not what is tested here): release it once
        # its earlier start is over (at once, its credential may still be revoked)
        pending_since.append(time.monotonic())
        if pending_since[-1] - pending_since[0] > 5:
            subprocess.run(["scontrol", "update", f"jobid={job}", "StartTime=now"])
        return False

    assert slurm.wait_until(finished, 480, every=2), f"job {job} still {job_state(job)}"
    log = (tmp_path / f"campaign-{job}.out").read_text()
    assert "stopped and requeued" in log, log
    assert "campaign: stopped by SIGTERM; finished results are saved" in log
    assert "80 tasks ok, 0 failed, 0 missing" in log, log
    assert job_state(job) in ("COMPLETED", "GONE")
    slurm.assert_complete(xr.load_dataset(tmp_path / "driver" / "results.nc"))
