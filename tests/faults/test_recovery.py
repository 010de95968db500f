"""Faults a campaign gets over: it stops or records failures, loses nothing it finished, and
once the fault is gone a rerun of the same spec ends with the results of an undisturbed run of
that spec, bit for bit (every variable of results.nc, NaN positions included)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml
from distributed import Client

from campaign.cluster.open import start_local_cluster
from campaign.store.ledger import Ledger

FOLDER = Path(__file__).resolve().parent
# the campaign and its worker processes import this checkout's `campaign` and the models here
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [str(FOLDER.parents[1]), str(FOLDER), os.environ.get("PYTHONPATH", "")]
    ),
}

# the transient model's faults: each fails its task while the switch file exists
KINDS = ["raise", "garbage", "hang"]


def transient_spec(folder: Path, name: str, switch: Path) -> Path:
    """A spec of the transient model: its faults hit the tasks whose draw exceeds 0.5 while
    ``switch`` exists."""
    spec = {
        "name": "recovery",  # one campaign, whatever the folder: the same spec text
        "model": "transient:run",
        "params": {"switch": str(switch), "above": 0.5, "duration_ms": 2},
        "factors": {"fault": KINDS},
        "paired": ["fault"],
        "replicates": 8,
        "seed": 11,
        "output": name,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def failure_rows(runner, spec) -> int:
    path = runner.folder / spec.stem / "results.nc"
    try:
        return xr.load_dataset(path, group="failures").sizes.get("failure", 0)
    except OSError:
        return 0  # no group: no failure


@pytest.fixture(scope="module")
def switch_and_clean(tmp_path_factory):
    """The switch file of the transient model's faults (one path for the module's tests, so
    that each runs the very spec text of this run), and the results of that spec run
    undisturbed: before the switch exists. Run once, shared by the tests."""
    folder = tmp_path_factory.mktemp("recovery")
    switch = folder / "faults-on"
    undisturbed = transient_spec(folder, "undisturbed", switch)
    command = [sys.executable, "-m", "campaign", "run", str(undisturbed), "--quiet"]
    done = subprocess.run(command + ["--workers", "2"], env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "24 tasks ok, 0 failed, 0 missing" in done.stdout
    return switch, xr.load_dataset(folder / "undisturbed" / "results.nc")


@pytest.fixture
def transient(switch_and_clean):
    """The switch file, on (each test turns it off to end the fault), and the undisturbed
    results of the campaign's spec."""
    switch, clean = switch_and_clean
    switch.write_text("on")
    yield switch, clean
    switch.unlink(missing_ok=True)


def test_raised_garbage_and_hung_tasks_fail_alone_and_a_rerun_gives_the_undisturbed_results(
    runner, transient, same_results
):
    switch, clean = transient
    spec = transient_spec(runner.folder, "faulty", switch)
    done = runner.run(spec, "--workers", "2", "--retries", "0", "--task-timeout", "1")
    assert done.returncode == 1, done.stderr
    hit = clean["value"].values > 0.5
    assert hit.sum() == 6, "this seed gives two faulty tasks of each kind"
    assert "18 tasks ok, 6 failed, 0 missing" in done.stdout
    first = runner.results(spec)
    assert np.array_equal(first["status"].values, np.where(hit, 2, 1))
    assert np.array_equal(first["value"].values[~hit], clean["value"].values[~hit])
    assert np.isnan(first["value"].values[hit]).all()
    errors = sorted(str(e).split(":")[0] for e in runner.failures(spec)["failure_error"].values)
    assert errors == ["RuntimeError"] * 2 + ["TimeoutError"] * 2 + ["TypeError"] * 2
    records = Ledger(runner.folder / "faulty").load()
    finished = {key for key, record in records.items() if record["status"] == "ok"}
    assert len(records) == 24 and len(finished) == 18

    # The faults gone, the same command runs the failed tasks alone, and nothing else.
    switch.unlink()
    rerun = runner.run(spec, "--workers", "2", "--retries", "0", "--task-timeout", "1")
    assert rerun.returncode == 0, rerun.stderr
    assert "18 already done, 6 to run" in rerun.stdout
    assert "24 tasks ok, 0 failed, 0 missing" in rerun.stdout
    after = Ledger(runner.folder / "faulty").load()
    assert all(after[key] == records[key] for key in finished)  # stored results kept as were
    same_results(runner.results(spec), clean)
    assert failure_rows(runner, spec) == 0


# -- a cluster started by hand loses its scheduler -------------------------------------------
SCRIPTS = Path(__file__).resolve().parents[2] / "cluster"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HandCluster:
    """A scheduler and two workers started with cluster/start-scheduler.sh and
    start-workers.sh, as a user starts them, each script in its own process group."""

    def __init__(self, folder: Path):
        self.address = f"tcp://127.0.0.1:{free_port()}"
        bin_folder = str(Path(sys.executable).parent)  # the scripts run `dask` from PATH
        self.env = {**ENV, "PATH": os.pathsep.join([bin_folder, os.environ["PATH"]])}
        self.env["DASHBOARD"] = "none"
        self.log = folder / f"cluster-{self.address.rsplit(':', 1)[1]}.log"
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = self._start(SCRIPTS / "start-scheduler.sh", "127.0.0.1", port)
        self.workers = self._start(SCRIPTS / "start-workers.sh", self.address, "2")
        with Client(self.address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=300)

    def _start(self, script: Path, *args: str) -> subprocess.Popen:
        with open(self.log, "ab") as log:
            return subprocess.Popen(
                ["bash", str(script), *args],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @staticmethod
    def kill(process: subprocess.Popen) -> None:
        """SIGKILL a script and everything it started (its process group)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        self.kill(self.workers)
        self.kill(self.scheduler)


def ledger_lines(output: Path) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in (output / "ledger").glob("*.jsonl"))


def wait_for_a_stored_result(process: subprocess.Popen, output: Path) -> None:
    """Until the running campaign ``process`` stored a first result in ``output``."""
    guard = time.monotonic() + 600  # against a hang of the test, not a time limit
    while ledger_lines(output) < 1:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < guard, "the campaign stored nothing"
        time.sleep(0.05)


def finished_the_rest(rerun, before: dict, output: Path) -> None:
    """The rerun ran only the rest of the 24 tasks: the results finished ``before`` it are
    counted as done and kept as they were."""
    assert rerun.returncode == 0, rerun.stderr
    ok = sum(record["status"] == "ok" for record in before.values())
    assert f"{ok} already done, {24 - ok} to run" in rerun.stdout
    after = Ledger(output).load()
    assert all(after[key] == record for key, record in before.items() if record["status"] == "ok")


def test_a_killed_scheduler_stops_the_run_in_one_line_and_a_new_cluster_finishes_it_exactly(
    runner, transient, same_results
):
    switch, clean = transient
    spec = transient_spec(runner.folder, "killed", switch)
    output = runner.folder / "killed"
    clusters = [HandCluster(runner.folder)]
    command = [sys.executable, "-m", "campaign", "run", str(spec), "--quiet"]
    command += ["--scheduler", clusters[0].address, "--retries", "0"]
    # Its hung tasks (hang: the faults are on) keep the run from ending until it is killed.
    process = subprocess.Popen(
        command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_a_stored_result(process, output)
        HandCluster.kill(clusters[0].scheduler)
        out, err = process.communicate(timeout=300)
        clusters[0].stop()
        assert process.returncode == 2, out + err
        assert err.count("\n") == 1 and "Traceback" not in out + err, err
        assert err.startswith(f"campaign: error: lost the Dask scheduler at {clusters[0].address}")
        before = Ledger(output).load()
        assert 1 <= len(before) < 24
        assert f"the {len(before)} results finished in this run are saved" in err

        # The fault gone, a new cluster: the same spec finishes the rest, and only the rest.
        switch.unlink()
        clusters.append(HandCluster(runner.folder))
        rerun = runner.run(spec, "--scheduler", clusters[1].address, "--retries", "0")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        for cluster in clusters:
            cluster.stop()
    finished_the_rest(rerun, before, output)
    same_results(runner.results(spec), clean)


def test_hung_tasks_without_a_timeout_interrupted_by_ctrl_c_keep_the_results_and_leave_no_process(
    runner, transient, same_results
):
    switch, clean = transient
    spec = transient_spec(runner.folder, "interrupted", switch)
    output = runner.folder / "interrupted"
    command = [sys.executable, "-m", "campaign", "run", str(spec), "--quiet"]
    command += ["--workers", "2", "--retries", "0"]
    process = subprocess.Popen(
        command,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for_a_stored_result(process, output)
        # Ctrl-C on a terminal: SIGINT to the whole foreground group (the cluster's too).
        os.killpg(process.pid, signal.SIGINT)
        try:
            out, err = process.communicate(timeout=300)
        except subprocess.TimeoutExpired:  # say where the run is stuck: its threads' stacks
            process.send_signal(signal.SIGUSR1)
            time.sleep(5)
            process.kill()
            out, err = process.communicate()
            raise AssertionError(f"run did not end within 300 s of Ctrl-C:\n{out}{err}") from None
        guard = time.monotonic() + 600  # against a hang of the test, not a time limit
        while True:  # every process of the run (nannies, hung workers) ends with it
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < guard, "processes of the interrupted run remain"
            time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == 130, out + err
    assert err == (
        "campaign: interrupted; finished results are saved, run the same command again to "
        "finish the rest\n"
    )
    before = Ledger(output).load()
    assert 1 <= len(before) < 24

    switch.unlink()
    rerun = runner.run(spec, "--workers", "2", "--retries", "0")
    finished_the_rest(rerun, before, output)
    same_results(runner.results(spec), clean)


def test_the_embedded_clusters_workers_leave_ctrl_c_to_run():
    """Each worker process ignores SIGINT (else each prints a KeyboardInterrupt traceback
    over run's one line when Ctrl-C reaches the whole group), and a worker the cluster starts
    again later does too: `run` handles Ctrl-C and closes the cluster."""
    cluster = start_local_cluster(2, None)
    try:
        with Client(cluster) as client:
            handlers = client.run(lambda: signal.getsignal(signal.SIGINT))
            assert list(handlers.values()) == [signal.SIG_IGN] * 2
            client.restart()
            handlers = client.run(lambda: signal.getsignal(signal.SIGINT))
            assert list(handlers.values()) == [signal.SIG_IGN] * 2
    finally:
        cluster.close()
