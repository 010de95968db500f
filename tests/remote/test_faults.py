"""Faults on a real cluster: a worker killed, the scheduler gone, a task stuck."""

from __future__ import annotations

import re
import signal
import time

import numpy as np
import xarray as xr

import campaign
from campaign.cli.main import main

SPEC = """
name: faults
model: busy
params: {{stall_seconds: 3600{extra}}}
factors:
  duration_ms: [{duration}, {longer}]
replicates: {replicates}
seed: 21
output: {output}
"""


def spec_text(output: str, replicates: int = 60, duration: int = 25, extra: str = "") -> str:
    return SPEC.format(
        output=output, replicates=replicates, duration=duration, longer=duration + 2, extra=extra
    )


def assert_same_results(left: xr.Dataset, right: xr.Dataset) -> None:
    for name in ("value", "value_mean", "value_std", "value_ci_low", "value_ci_high", "seed"):
        assert np.array_equal(left[name].values, right[name].values, equal_nan=True), name
    assert np.array_equal(left["status"].values, right["status"].values)


def test_sigkill_of_a_worker_midway_changes_no_result(start_cluster, write_spec, remote):
    cluster = start_cluster(workers=2, nanny=False)
    clean_spec = write_spec(spec_text("clean", replicates=60), "clean.yaml")
    clean = campaign.run(clean_spec, scheduler=cluster.address, progress=False)

    spec = write_spec(spec_text("killed", replicates=60))
    output = spec.parent / "killed"
    process = remote.start_campaign(spec, "--scheduler", cluster.address)
    try:
        remote.wait_for_records(output, 20, process)
        remote.kill(cluster.workers[0])
        out, err = process.communicate(timeout=120)
    finally:
        remote.kill(process)
    assert process.returncode == 0, err
    assert f"Dask scheduler {cluster.address} (2 workers)" in out
    assert "Dask workers: 1 (1 threads); 0 joined, 1 left" in out
    assert "120 tasks ok, 0 failed, 0 missing" in out
    killed = xr.load_dataset(output / "results.nc")
    assert_same_results(killed, clean)
    draws = np.vectorize(lambda seed: np.random.default_rng(int(seed)).random())(killed["seed"])
    assert np.array_equal(killed["value"].values, draws)  # and they are the model's own


def test_scheduler_gone_midway_then_rerun_on_a_new_one_finishes_the_rest(
    start_cluster, write_spec, remote, capsys
):
    first = start_cluster(workers=2, nanny=False)
    spec = write_spec(spec_text("gone", replicates=60))
    output = spec.parent / "gone"
    process = remote.start_campaign(spec, "--scheduler", first.address)
    try:
        remote.wait_for_records(output, 20, process)
        first.scheduler.send_signal(signal.SIGKILL)
        out, err = process.communicate(timeout=60)
    finally:
        remote.kill(process)
        first.stop()
    assert process.returncode == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"campaign: error: lost the Dask scheduler at {first.address}"
    ), err
    assert "Traceback" not in out + err
    before = {record["key"]: record for record in remote.ledger_records(output)}
    assert 20 <= len(before) < 120
    assert len({record["run"] for record in before.values()}) == 1
    assert f"the {len(before)} results finished in this run are saved" in lines[0]

    # a new scheduler without workers: a run that waits 1 s for them stops in one line
    second = start_cluster(workers=0, nanny=False)
    options = ["--scheduler", second.address, "--wait-workers", "1", "--quiet"]
    assert main(["run", str(spec), *options]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"campaign: error: no Dask worker at {second.address} for 1 s (--wait-workers); the 0 "
        "results finished in this run are saved: start workers (see cluster/README.md) and "
        "run the same command again"
    ]
    # one that waits longer gets them, then finishes only the rest
    rerun = remote.start_campaign(spec, "--scheduler", second.address, "--wait-workers", "60")
    try:
        waiting = rerun.stdout.readline() + rerun.stdout.readline() + rerun.stdout.readline()
        assert "waiting for Dask workers to join" in waiting, waiting
        second.start_worker()
        second.start_worker()
        out, err = rerun.communicate(timeout=120)
    finally:
        remote.kill(rerun)
    assert rerun.returncode == 0, err
    out = waiting + out
    assert f"{len(before)} already done, {120 - len(before)} to run" in out
    after = remote.ledger_records(output)
    runs: dict[str, set[str]] = {}
    for record in after:
        runs.setdefault(record["run"], set()).add(record["key"])
    assert len(after) == 120 and len(runs) == 2
    (first_run,) = {record["run"] for record in before.values()}
    (second_run,) = set(runs) - {first_run}
    assert runs[first_run] == set(before)
    assert runs[second_run].isdisjoint(before) and len(runs[second_run]) == 120 - len(before)
    finished = xr.load_dataset(output / "results.nc")
    draws = np.vectorize(lambda seed: np.random.default_rng(int(seed)).random())(finished["seed"])
    assert np.array_equal(finished["value"].values, draws)
    assert (finished["status"].values == 1).all()


def test_task_past_timeout_fails_alone_and_the_rest_go_on(start_cluster, write_spec, remote):
    cluster = start_cluster(workers=2)
    stall = ", stall_above: 0.98"  # the tasks whose seeded draw exceeds 0.98 sleep for an hour
    spec = write_spec(spec_text("stuck", replicates=40, duration=5, extra=stall))
    started = time.monotonic()
    # without tail work stealing, the stuck task's batchmates can only come back by a resend
    done = remote.run_campaign(
        spec, "--scheduler", cluster.address, "--task-timeout", "1.5", "--no-tail-replication"
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    records = {record["key"]: record for record in remote.ledger_records(spec.parent / "stuck")}
    assert len(records) == 80
    draws = {key: np.random.default_rng(r["seed"]).random() for key, r in records.items()}
    stuck = {key for key, draw in draws.items() if draw > 0.98}
    assert len(stuck) == 1, "this seed gives one stuck task, late in the campaign"
    for key, record in records.items():
        if key in stuck:
            assert record["status"] == "failed"
            assert record["error"].startswith(
                "TimeoutError: timed out: the task ran longer than the task timeout of 1.5 s"
            )
            assert record["attempts"] == 1
        else:
            assert record["status"] == "ok", record
            assert record["metrics"] == {"value": draws[key]}
    assert f"{80 - len(stuck)} tasks ok, {len(stuck)} failed, 0 missing" in done.stdout
    # the stuck task's batchmates were sent again (and are ok above), not failed
    resent = re.search(
        r"stuck past the task timeout of 1.5 s \((\d+) tasks of their batches", done.stdout
    )
    assert resent and int(resent.group(1)) > 0, done.stdout
    assert elapsed < 60
