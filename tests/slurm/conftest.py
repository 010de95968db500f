"""A real single-node SLURM for the batch-system tests (cluster/local-slurm.sh, from Debian's
packages), and campaigns of the `napping` model run on it by `campaign` in new processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr
import yaml

FOLDER = Path(__file__).resolve().parent
REPO = FOLDER.parents[1]
# `campaign`, its batch jobs and their workers import this checkout and the models here
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(REPO), str(FOLDER), os.environ.get("PYTHONPATH", "")]),
    "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
}


def squeue(name: str) -> list[str]:
    """The ids of this machine's queued or running jobs of that name."""
    listed = subprocess.run(
        ["squeue", "-h", "-n", name, "-o", "%i"], capture_output=True, text=True, check=True
    )
    return listed.stdout.split()


def wait_until(condition, timeout: float, every: float = 1.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()


def spec_text(name: str, nap_ms: float, levels: int, replicates: int) -> str:
    spec = {
        "name": name,
        "model": "napping:run",
        "params": {"nap_ms": nap_ms},
        "factors": {"level": list(range(1, levels + 1))},
        "replicates": replicates,
        "seed": 5,
        "output": name,
    }
    return yaml.safe_dump(spec, sort_keys=False)


def cluster_text(
    folder: Path,
    job_name: str,
    walltime: str = "00:10:00",
    jobs: int = 2,
    kind: str = "SLURMCluster",
    prologue: tuple[str, ...] = (),
) -> str:
    """A cluster file of worker jobs on this machine's SLURM, one worker process each (`kind`
    PBSCluster: submitted with `qsub`, Debian's Torque-compatible wrapper of SLURM)."""
    cluster = {
        "class": kind,
        "options": {
            "queue": "debug",
            "cores": 1,
            "processes": 1,
            "memory": "1GB",
            "walltime": walltime,
            "interface": "lo",
            "job_name": job_name,
            "log_directory": str(folder / "logs"),
            "scheduler_options": {"dashboard_address": "127.0.0.1:0"},
            "worker_extra_args": ["--dashboard-address=127.0.0.1:0"],
            "job_script_prologue": list(prologue),
        },
        "scale": {"jobs": jobs},
    }
    return yaml.safe_dump(cluster, sort_keys=False)


def campaign(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "campaign", *args]
    return subprocess.run(
        command, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout
    )


def draws(dataset: xr.Dataset) -> np.ndarray:
    """What the napping model returns for every task of a results file: its seed's draw."""
    seeds = dataset["seed"].values
    return np.vectorize(lambda seed: np.random.default_rng(int(seed)).random())(seeds)


def assert_complete(dataset: xr.Dataset) -> None:
    """Every task ok, with exactly the value its seed gives."""
    assert (dataset["status"].values == 1).all()
    assert np.array_equal(dataset["value"].values, draws(dataset))


@pytest.fixture(scope="session")
def slurm() -> SimpleNamespace:
    """SLURM answering on this machine, started if it is not (root only: it starts daemons);
    the helpers of this folder's tests (the test modules are imported by path, not as a
    package)."""
    assert os.geteuid() == 0, "the SLURM tests start slurmctld and slurmd: run them as root"
    started = subprocess.run(
        ["bash", str(REPO / "cluster" / "local-slurm.sh")], capture_output=True, text=True
    )
    assert started.returncode == 0, started.stdout + started.stderr
    return SimpleNamespace(
        squeue=squeue,
        wait_until=wait_until,
        spec_text=spec_text,
        cluster_text=cluster_text,
        campaign=campaign,
        assert_complete=assert_complete,
        folder=FOLDER,
        repo=REPO,
        env=ENV,
    )
