"""A program as a model on a remote scheduler whose workers (separate `dask worker` processes)
run in another folder than the spec's, with no shared file: the program and its inputs reach
them by digest. A worker whose own copy of a program differs is not used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import xarray as xr

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}

C_SIM = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    unsigned long long seed = strtoull(argv[1], 0, 10);
    FILE *data = fopen("data/scale.txt", "r");
    double scale;
    if (!data || fscanf(data, "%lf", &scale) != 1) { fprintf(stderr, "no data\n"); return 2; }
    printf("{\"value\": %.17g}\n", scale * (double)(seed % 1009) + atof(argv[2]));
    return 0;
}
"""

SPEC = """
name: far
model:
  command: [./sim, "{seed}", "{offset}"]
  inputs: [data/scale.txt]
  resources: {cores: 1}
factors:
  offset: [0, 1000]
replicates: 6
seed: 5
output: out
"""


def start_worker(cluster, folder: Path, env: dict, resources: str = "cores=1"):
    """A `dask worker` started in ``folder`` (its cwd and local directory), not the spec's."""
    folder.mkdir(parents=True, exist_ok=True)
    args = ["distributed.cli.dask_worker", cluster.address, "--nthreads", "1"]
    args += ["--host", "127.0.0.1", "--no-dashboard", "--death-timeout", "30"]
    args += ["--resources", resources, "--local-directory", str(folder)]
    with open(folder / "worker.log", "ab") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", *args],
            env=env,
            cwd=folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    cluster.workers.append(worker)
    return worker


def run_project(project, cluster, env, timeout=120, cwd=None) -> subprocess.CompletedProcess:
    """`campaign run PROJECT/spec.yaml --quiet` on ``cluster``, from a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "campaign", "run", str(project / "spec.yaml"), "--quiet"]
        + ["--scheduler", cluster.address],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def test_inputs_reach_workers_in_another_folder(start_cluster, tmp_path):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "sim.c").write_text(C_SIM)
    subprocess.run(["cc", "-o", str(project / "sim"), str(project / "sim.c")], check=True)
    (project / "data" / "scale.txt").write_text("2.5\n")
    (project / "spec.yaml").write_text(SPEC)
    cluster = start_cluster(workers=0, wait=False)
    for index in range(2):
        start_worker(cluster, tmp_path / "elsewhere" / str(index), ENV)
    cluster.wait_for_workers(2)
    done = run_project(project, cluster, ENV, timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stderr + cluster.logs()
    data = xr.load_dataset(project / "out" / "results.nc")
    for offset in (0, 1000):
        cell = data.sel(offset=offset)
        expected = [2.5 * (int(s) % 1009) + offset for s in cell.seed.values]
        assert cell.value.values.tolist() == expected
    cached = list((tmp_path / "elsewhere").rglob("campaign-inputs/*"))
    assert len(cached) >= 2  # the program and data/scale.txt, by digest, on some worker
    assert not list((tmp_path / "elsewhere").rglob("campaign-tasks/*"))  # folders removed


def test_a_task_no_remote_worker_can_hold_is_refused(start_cluster, tmp_path):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "scale.txt").write_text("1\n")
    (project / "sim").write_text("#!/bin/sh\necho value=1\n")
    (project / "sim").chmod(0o755)
    (project / "spec.yaml").write_text(SPEC.replace("cores: 1", "cores: 3"))
    cluster = start_cluster(workers=0, wait=False)
    start_worker(cluster, tmp_path / "elsewhere", ENV, resources="cores=2")
    cluster.wait_for_workers(1)
    done = run_project(project, cluster, ENV)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        "campaign: error: resources: a task asks 3 cores, and no Dask worker has that much (the "
        'closest has 2 cores): start workers with --resources "cores=N memory=BYTES" (see '
        "cluster/README.md), or ask less"
    )
    assert not (project / "out" / "ledger").exists() or not list((project / "out").rglob("*.jsonl"))


def test_a_worker_whose_program_on_path_differs_is_not_used(start_cluster, tmp_path):
    for name, word in (("here", "1"), ("there", "2")):
        (tmp_path / name).mkdir()
        program = tmp_path / name / "campaign-test-sim"
        program.write_text(f"#!/bin/sh\necho value={word}\n")
        program.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    (project / "spec.yaml").write_text(
        "name: onpath\nmodel:\n  command: [campaign-test-sim, '{seed}']\nreplicates: 2\nseed: 1\n"
        "output: out\n"
    )
    path = os.environ["PATH"]
    cluster = start_cluster(workers=0, wait=False)
    start_worker(cluster, tmp_path / "elsewhere", {**ENV, "PATH": f"{tmp_path / 'there'}:{path}"})
    cluster.wait_for_workers(1)
    done = run_project(project, cluster, {**ENV, "PATH": f"{tmp_path / 'here'}:{path}"})
    assert done.returncode != 0
    assert "runs other code of model command than this machine has (campaign-test-sim " in (
        done.stderr
    )
    assert "(campaign-test-sim differs): install the same program" in done.stderr
    assert not list((project / "out").rglob("*.jsonl"))
