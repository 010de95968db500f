"""Dask workers as SLURM batch jobs (`--cluster`): the same results as the embedded cluster,
whatever happens to the jobs (their walltime, `scancel`), and no job left when the run ends."""

from __future__ import annotations

import shutil
import subprocess
import threading

import pytest
import xarray as xr


def _run(slurm, tmp_path, name: str, cluster: str, nap_ms: float, levels: int, replicates: int):
    (tmp_path / f"{name}.yaml").write_text(slurm.spec_text(name, nap_ms, levels, replicates))
    (tmp_path / "cluster.yaml").write_text(cluster)
    return slurm.campaign("run", f"{name}.yaml", "--cluster", "cluster.yaml", cwd=tmp_path)


@pytest.mark.parametrize("kind", ["SLURMCluster", "PBSCluster"])
def test_batch_job_workers_give_the_embedded_clusters_results(slurm, tmp_path, kind):
    (tmp_path / "spec.yaml").write_text(slurm.spec_text("same", 20, 3, 10))
    embedded = slurm.campaign(
        "run", "spec.yaml", "--workers", "2", "--out", "embedded", cwd=tmp_path
    )
    assert embedded.returncode == 0, embedded.stderr
    name = f"cmp-{kind}"
    (tmp_path / "cluster.yaml").write_text(slurm.cluster_text(tmp_path, name, kind=kind))
    batch = slurm.campaign(
        "run", "spec.yaml", "--cluster", "cluster.yaml", "--out", "batch", cwd=tmp_path
    )
    assert batch.returncode == 0, batch.stderr
    assert f"{kind} from cluster.yaml: scheduler tcp://127.0.0.1:" in batch.stdout
    on_slurm = xr.load_dataset(tmp_path / "batch" / "results.nc")
    at_home = xr.load_dataset(tmp_path / "embedded" / "results.nc")
    slurm.assert_complete(on_slurm)
    for variable in ("value", "status", "seed", "value_mean", "value_ci_low", "value_ci_high"):
        assert on_slurm[variable].equals(at_home[variable]), variable
    assert slurm.wait_until(lambda: not slurm.squeue(name), 30), "worker jobs left in the queue"


def test_worker_jobs_that_reach_their_walltime_are_replaced(slurm, tmp_path):
    # 120 tasks of 1.5 s on two 1-core jobs of 1 minute: 90 s of work per job slot, so each
    # slot is filled at least twice; workers retire before SLURM kills them
    ran = _run(
        slurm, tmp_path, "wall", slurm.cluster_text(tmp_path, "cmp-wall", "00:01:00"), 1500, 4, 30
    )
    assert ran.returncode == 0, ran.stderr
    assert "120 tasks ok, 0 failed, 0 missing" in ran.stdout
    slurm.assert_complete(xr.load_dataset(tmp_path / "wall" / "results.nc"))
    logs = sorted((tmp_path / "logs").glob("*.err"))
    assert len(logs) >= 4, [log.name for log in logs]  # jobs were submitted again
    assert any("worker-lifetime-reached" in log.read_text() for log in logs)
    assert slurm.wait_until(lambda: not slurm.squeue("cmp-wall"), 30), (
        "worker jobs left in the queue"
    )


def test_a_cancelled_worker_job_loses_nothing(slurm, tmp_path):
    cancelled: list[str] = []

    def cancel_one() -> None:
        # once both jobs run, cancel one of them mid-batch
        if slurm.wait_until(lambda: len(slurm.squeue("cmp-cancel")) == 2, 120):
            slurm.wait_until(lambda: False, 8)
            job = slurm.squeue("cmp-cancel")[0]
            subprocess.run(["scancel", job], check=True)
            cancelled.append(job)

    canceller = threading.Thread(target=cancel_one)
    canceller.start()
    ran = _run(slurm, tmp_path, "cancel", slurm.cluster_text(tmp_path, "cmp-cancel"), 500, 3, 30)
    canceller.join()
    assert ran.returncode == 0, ran.stderr
    assert cancelled, "no job was cancelled"
    assert "90 tasks ok, 0 failed, 0 missing" in ran.stdout
    slurm.assert_complete(xr.load_dataset(tmp_path / "cancel" / "results.nc"))
    assert slurm.wait_until(lambda: not slurm.squeue("cmp-cancel"), 30), (
        "worker jobs left in the queue"
    )


def test_batch_workers_running_other_campaign_code_are_refused_in_one_line(slurm, tmp_path):
    # the worker jobs import an edited copy of `campaign` (every metric value doubled), as an
    # older checkout on the cluster's file system would be
    copy = tmp_path / "other" / "campaign"
    shutil.copytree(slurm.repo / "campaign", copy, ignore=shutil.ignore_patterns("__pycache__"))
    names = copy / "results" / "names.py"
    text = names.read_text()
    for line in ("values[name] = _as_float(name, value)\n", "values[name] = value\n"):
        assert text.count(line) == 1, line  # the checked path and the plain floats' one
        text = text.replace(line, line.replace("= ", "= 2 * "))
    names.write_text(text)
    prologue = (f"export PYTHONPATH={copy.parent}:$PYTHONPATH",)
    cluster = slurm.cluster_text(tmp_path, "cmp-other", jobs=1, prologue=prologue)
    ran = _run(slurm, tmp_path, "other", cluster, 20, 2, 5)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    *progress, line = ran.stderr.strip().splitlines()
    assert all(earlier.startswith("progress: ") for earlier in progress), ran.stderr
    assert line.startswith(
        "campaign: error: no Dask worker runs the engine this machine runs (worker tcp://"
    ), line
    assert ": campaign code differs (digest " in line
    assert not list((tmp_path / "other" / "ledger").glob("*.jsonl"))
    assert slurm.wait_until(lambda: not slurm.squeue("cmp-other"), 30), "worker jobs left"
