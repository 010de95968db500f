"""Real Dask clusters for the remote tests: `dask scheduler` and `dask worker` processes on
127.0.0.1 (random free ports), started as subprocesses and always killed afterwards."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[2]
# subprocesses import this checkout's `campaign`, whatever is installed
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# the cluster/ scripts run `dask` from PATH: this Python's
SCRIPT_ENV = {**ENV, "PATH": os.pathsep.join([str(Path(sys.executable).parent), ENV["PATH"]])}


def _start(
    args: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.Popen:
    command = args if args[0] == "bash" else [sys.executable, "-m", *args]
    with open(log, "ab") as handle:
        return subprocess.Popen(
            command,
            env=env or ENV,
            cwd=cwd,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def kill(process: subprocess.Popen) -> None:
    """SIGKILL a process and everything it started (its own session)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()


class Cluster:
    """A scheduler and workers as separate processes, as a user would start them by hand."""

    def __init__(
        self,
        folder: Path,
        certs: Path | None = None,
        scripts: bool = False,
        nanny: bool = True,
        dashboard: str = "none",
    ):
        self.nanny = nanny  # without one a worker is one process: quicker to start
        self.dashboard = dashboard  # DASHBOARD of start-scheduler.sh ("" for its default)
        self.folder = folder
        self.certs = certs
        self.scripts = scripts  # start them with cluster/start-scheduler.sh, start-workers.sh
        self.port = free_port()
        protocol = "tls" if certs else "tcp"
        self.address = f"{protocol}://127.0.0.1:{self.port}"
        self.scheduler: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []

    def _tls(self) -> list[str]:
        if not self.certs:
            return []
        return [
            "--tls-ca-file",
            str(self.certs / "ca.pem"),
            "--tls-cert",
            str(self.certs / "cluster.pem"),
            "--tls-key",
            str(self.certs / "cluster-key.pem"),
        ]

    def start_scheduler(self) -> None:
        if self.scripts:
            env = {**SCRIPT_ENV, "DASHBOARD": self.dashboard, "CERTS": str(self.certs or "")}
            script = str(REPO / "cluster" / "start-scheduler.sh")
            args = ["bash", script, "127.0.0.1", str(self.port)]
            self.scheduler = _start(args, self.folder / f"scheduler-{self.port}.log", env)
            return
        args = ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(self.port)]
        args += ["--no-dashboard", "--protocol", self.address.split("://")[0], *self._tls()]
        self.scheduler = _start(args, self.folder / f"scheduler-{self.port}.log")

    def start_workers(self, count: int) -> None:
        """`count` worker processes under one `dask worker` (cluster/start-workers.sh), on
        the address that reaches the scheduler, as the script finds it."""
        env = {**SCRIPT_ENV, "CERTS": str(self.certs or "")}
        env.pop("HOST", None)
        script = str(REPO / "cluster" / "start-workers.sh")
        log = self.folder / f"workers-{self.port}.log"
        self.workers.append(_start(["bash", script, self.address, str(count)], log, env))

    def start_worker(self, env: dict[str, str] | None = None, port: int = 0) -> subprocess.Popen:
        """A worker process; in `env` when given (started outside this checkout, whose
        `campaign` would come first on `python -m`'s path), listening on `port` when given."""
        args = ["distributed.cli.dask_worker", self.address, "--nthreads", "1"]
        args += ["--host", "127.0.0.1", "--no-dashboard", "--death-timeout", "30", *self._tls()]
        args += [] if self.nanny else ["--no-nanny"]
        args += ["--worker-port", str(port)] if port else []
        log = self.folder / f"worker-{self.port}-{len(self.workers)}.log"
        worker = _start(args, log, env, None if env is None else self.folder)
        self.workers.append(worker)
        return worker

    def security(self):
        from campaign.cluster.security import load_security

        return load_security(self.certs / "security.yaml") if self.certs else None

    def wait_for_workers(self, count: int, timeout: float = 60) -> None:
        from distributed import Client

        deadline = time.monotonic() + timeout
        with Client(self.address, timeout="30s", security=self.security()) as client:
            while len(client.nthreads()) < count:
                assert time.monotonic() < deadline, f"{count} workers did not join {self.address}"
                for process in [self.scheduler, *self.workers]:
                    assert process.poll() is None, self.logs()
                time.sleep(0.1)

    def logs(self) -> str:
        return "\n".join(path.read_text() for path in sorted(self.folder.glob("*.log")))

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process is not None:
                kill(process)


@pytest.fixture
def start_cluster(tmp_path):
    """Start clusters of `workers` worker processes; every one is killed after the test."""
    clusters: list[Cluster] = []

    def start(
        workers: int = 2,
        certs: Path | None = None,
        wait: bool = True,
        scripts: bool = False,
        nanny: bool = True,
        dashboard: str = "none",
    ) -> Cluster:
        cluster = Cluster(tmp_path, certs, scripts, nanny, dashboard)
        clusters.append(cluster)
        cluster.start_scheduler()
        if scripts and workers:
            cluster.start_workers(workers)
        for _ in range(0 if scripts else workers):
            cluster.start_worker()
        if wait:
            cluster.wait_for_workers(workers)
        return cluster

    yield start
    for cluster in clusters:
        cluster.stop()


def make_certs(folder: Path) -> Path:
    """A fresh CA and certificate with cluster/make-certs.sh (which needs openssl)."""
    if subprocess.run(["which", "openssl"], capture_output=True).returncode != 0:
        pytest.skip("openssl is not installed")
    script = REPO / "cluster" / "make-certs.sh"
    subprocess.run(["bash", str(script), str(folder)], check=True, capture_output=True)
    return folder


def campaign_command(spec: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "campaign", "run", str(spec), "--quiet", *options]


def run_campaign(spec: Path, *options: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        campaign_command(spec, *options), env=ENV, capture_output=True, text=True, timeout=timeout
    )


def start_campaign(spec: Path, *options: str) -> subprocess.Popen:
    return subprocess.Popen(
        campaign_command(spec, *options),
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def ledger_records(output: Path) -> list[dict]:
    records = []
    for path in sorted((output / "ledger").glob("*.jsonl")):
        records += [json.loads(line) for line in path.read_text().splitlines() if line]
    return records


def wait_for_records(output: Path, count: int, process: subprocess.Popen, timeout=60) -> None:
    deadline = time.monotonic() + timeout
    while len(ledger_records(output)) < count:
        assert process.poll() is None, f"campaign ended early: {process.communicate()}"
        assert time.monotonic() < deadline, "the campaign made no progress"
        time.sleep(0.02)


@pytest.fixture
def remote():
    """The helpers above, for test modules (tests are imported by path, not as a package)."""
    return SimpleNamespace(
        make_certs=make_certs,
        run_campaign=run_campaign,
        start_campaign=start_campaign,
        ledger_records=ledger_records,
        wait_for_records=wait_for_records,
        kill=kill,
        free_port=free_port,
        env=ENV,
        repo=REPO,
    )
