"""A program's shared libraries as the loader resolves them on each worker: a remote worker
whose loader finds another build of a library than the machine running `campaign run` is not
used, and nothing it computed is stored; one that finds the same runs the campaign."""

from __future__ import annotations

import os
import subprocess

import xarray as xr

import campaign
from tests.remote.test_command_remote import ENV, run_project, start_worker

LIBRARY = "double factor(void) { return FACTOR; }\n"
SIM = r"""
#include <stdio.h>
#include <stdlib.h>
double factor(void);
int main(int argc, char **argv) {
    printf("value=%.17g\n", factor() * (double)(strtoull(argv[1], 0, 10) % 1000));
    return 0;
}
"""
SPEC = 'name: linked\nmodel:\n  command: [./sim, "{seed}"]\nreplicates: 2\nseed: 1\noutput: out\n'


def build(tmp_path):
    """libfoo.so in lib/ (factor 1.5) and in other/ (2.5); ./sim linked to lib/ by RUNPATH,
    which LD_LIBRARY_PATH overrides."""
    for folder, factor in (("lib", "1.5"), ("other", "2.5")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "foo.c").write_text(LIBRARY)
        command = ["cc", "-shared", "-fPIC", f"-DFACTOR={factor}"]
        command += ["-o", str(tmp_path / folder / "libfoo.so"), str(tmp_path / folder / "foo.c")]
        subprocess.run(command, check=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "sim.c").write_text(SIM)
    link = [f"-L{tmp_path / 'lib'}", "-lfoo", f"-Wl,--enable-new-dtags,-rpath,{tmp_path / 'lib'}"]
    subprocess.run(["cc", "-o", str(project / "sim"), str(project / "sim.c"), *link], check=True)
    (project / "spec.yaml").write_text(SPEC)
    return project


def test_a_worker_linked_with_another_library_is_not_used(start_cluster, tmp_path):
    project = build(tmp_path)
    cluster = start_cluster(workers=0, wait=False)
    there = {**ENV, "LD_LIBRARY_PATH": str(tmp_path / "other")}
    start_worker(cluster, tmp_path / "elsewhere", there)
    cluster.wait_for_workers(1)
    done = run_project(project, cluster, {k: v for k, v in ENV.items() if k != "LD_LIBRARY_PATH"})
    assert done.returncode != 0
    assert "runs other code of model command than this machine has" in done.stderr
    assert "(./sim: libfoo.so differs): install the same program" in done.stderr
    assert not list((project / "out").rglob("*.jsonl"))


def test_a_worker_linked_with_the_same_library_runs_the_campaign(start_cluster, tmp_path):
    project = build(tmp_path)
    cluster = start_cluster(workers=0, wait=False)
    env = {k: v for k, v in ENV.items() if k != "LD_LIBRARY_PATH"}
    start_worker(cluster, tmp_path / "elsewhere", env)
    cluster.wait_for_workers(1)
    done = run_project(project, cluster, env)
    assert done.returncode == 0, done.stderr + cluster.logs()
    data = xr.load_dataset(project / "out" / "results.nc")
    assert data.value.values.tolist() == [1.5 * (int(s) % 1000) for s in data.seed.values]
    assert os.path.isfile(project / "out" / "campaign.json")


def test_a_library_rebuilt_on_a_running_worker_between_runs_stops_the_next_run(
    start_cluster, tmp_path
):
    """The worker finds libfoo.so in its own folder, first the same build as the machine
    running `campaign run`, then another one: its next batch is refused, nothing of it stored."""
    project = build(tmp_path)
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "libfoo.so").write_bytes((tmp_path / "lib" / "libfoo.so").read_bytes())
    cluster = start_cluster(workers=0, wait=False)
    start_worker(
        cluster, tmp_path / "elsewhere", {**ENV, "LD_LIBRARY_PATH": str(tmp_path / "theirs")}
    )
    cluster.wait_for_workers(1)
    here = {k: v for k, v in ENV.items() if k != "LD_LIBRARY_PATH"}
    first = run_project(project, cluster, here)
    assert first.returncode == 0, first.stderr + cluster.logs()
    rebuilt = (tmp_path / "other" / "libfoo.so").read_bytes()  # factor 2.5
    (tmp_path / "theirs" / "libfoo.so.new").write_bytes(rebuilt)
    os.replace(tmp_path / "theirs" / "libfoo.so.new", tmp_path / "theirs" / "libfoo.so")
    (project / "spec.yaml").write_text(SPEC.replace("replicates: 2", "replicates: 4"))
    second = run_project(project, cluster, here)
    assert second.returncode != 0
    assert "runs other code of model command than this machine has" in second.stderr
    data = xr.load_dataset(project / "out" / "results.nc")
    assert data.value.values.tolist() == [1.5 * (int(s) % 1000) for s in data.seed.values]
    assert data.sizes["replicate"] == 2
    plan = campaign.plan(project / "spec.yaml")
    assert (plan.done, plan.missing) == (2, [2, 3])
