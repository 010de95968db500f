"""`--cluster FILE` starts the cluster a YAML file names; `--security FILE` and cluster files
refuse mistakes in one line naming the file."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import yaml

import campaign
from campaign.cli.main import main
from campaign.cluster.jobqueue import cluster_class, load_cluster_file
from campaign.cluster.security import load_security
from campaign.errors import CampaignError
from tests.conftest import MM1_TWO_LOADS as SPEC

LOCAL = """
class: distributed:LocalCluster
options: {n_workers: 0, threads_per_worker: 1, processes: true, host: 127.0.0.1,
          dashboard_address: "127.0.0.1:0", silence_logs: 40}
scale: {n: 2}
"""


def test_cluster_file_starts_the_cluster_it_names(write_spec, tmp_path):
    from campaign.models.check import mm1

    spec = write_spec(SPEC)
    cluster_file = tmp_path / "local.yaml"
    cluster_file.write_text(LOCAL)
    said: list[str] = []
    ds = campaign.run(spec, cluster=cluster_file, progress=False, say=said.append)
    assert any(
        line.startswith(f"LocalCluster from {cluster_file}: scheduler tcp://127.0.0.1:")
        for line in said
    ), said
    assert (ds["status"].values == 1).all()
    for rate in (0.5, 0.8):
        for r in range(4):
            seed = int(ds["seed"].sel(arrival_rate=rate, replicate=r))
            direct = mm1({"service_rate": 1.0, "customers": 500, "arrival_rate": rate}, seed)
            assert float(ds["mean_wait"].sel(arrival_rate=rate, replicate=r)) == direct["mean_wait"]
    assert np.array_equal(ds["mean_wait_mean"].values, ds["mean_wait"].values.mean(axis=1))


def test_missing_dask_jobqueue_is_one_line(write_spec, remote, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)  # as if not installed
    spec = write_spec(SPEC)
    slurm = remote.repo / "cluster" / "slurm.yaml"
    assert main(["run", str(spec), "--cluster", str(slurm)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"campaign: error: cluster file {slurm}: SLURMCluster needs dask-jobqueue, which is "
        "not installed: pip install 'campaign[hpc]'"
    ]


@pytest.mark.parametrize(
    "name, directive, expected",
    [("slurm.yaml", "#SBATCH", "-A myproject"), ("pbs.yaml", "#PBS", "-A myproject")],
)
def test_example_cluster_files_make_job_scripts(remote, name, directive, expected):
    spec = load_cluster_file(remote.repo / "cluster" / name)
    cls = cluster_class(spec.reference, spec.path)
    options = {
        **spec.options,
        "scheduler_options": {"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"},
    }
    cluster = cls(**options)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    assert f"{directive} {expected}" in script
    assert "source ~/venvs/campaign/bin/activate" in script
    assert all(part in script for part in ("--nworkers 16 ", "--nthreads 1 ", "--nanny"))
    assert "--dashboard-address=127.0.0.1:0" in script  # the status pages stay on the nodes
    assert spec.options["scheduler_options"] == {"dashboard_address": "127.0.0.1:8787"}


def each_refused(path, load, cases) -> None:
    """Each of ``cases`` (a file's text, words of its error), written to ``path``, is refused
    by ``load`` with an error that names the file first."""
    kind = path.stem
    for text, message in cases:
        path.write_text(text)
        with pytest.raises(CampaignError, match=f"^{kind} file {path}: ") as error:
            load(path)
        assert message in str(error.value)


def test_security_and_cluster_files_refuse_mistakes_naming_the_file(tmp_path):
    (tmp_path / "ca.pem").write_text("x")
    cases = [
        ("cert: ca.pem\n", "'ca' (a PEM file path) is required"),
        ("ca: ca.pem\ncert: nowhere.pem\n", f"cert file {tmp_path / 'nowhere.pem'} does not exist"),
        (
            "ca: ca.pem\ncert: ca.pem\nkeyfile: k\n",
            "unknown setting 'keyfile'; allowed: ca, cert, key",
        ),
    ]
    each_refused(tmp_path / "security.yaml", load_security, cases)
    with pytest.raises(CampaignError, match="security file .*missing.yaml does not exist"):
        load_security(tmp_path / "missing.yaml")

    cases = [
        ("options: {}\n", "'class' is required"),
        ("class: X\nworkers: 3\n", "unknown setting 'workers'; allowed: class, options, scale"),
        ("class: X\nscale: {jobs: 1}\nadapt: {maximum_jobs: 2}\n", "give 'scale' or 'adapt'"),
        ("class: X\nscale: 4\n", "'scale' must be a mapping of arguments"),
    ]
    each_refused(tmp_path / "cluster.yaml", load_cluster_file, cases)
    with pytest.raises(CampaignError, match="module 'distributed' has no class 'Nope'"):
        cluster_class("distributed:Nope", tmp_path / "cluster.yaml")


def test_scheduler_address_refuses_a_mix_of_tls_and_plain_tcp():
    from campaign.cluster.open import scheduler_address

    security = object()  # any settings: only their presence matters here
    assert scheduler_address("10.0.0.1:8786", None) == "tcp://10.0.0.1:8786"
    assert scheduler_address("10.0.0.1:8786", security) == "tls://10.0.0.1:8786"
    assert scheduler_address("tls://h:1", security) == "tls://h:1"
    with pytest.raises(
        CampaignError, match=r"^the Dask scheduler tls://h:1 uses TLS: pass security FILE"
    ):
        scheduler_address("tls://h:1", None)
    with pytest.raises(CampaignError, match=r"^security needs a tls:// scheduler address, got"):
        scheduler_address("tcp://h:1", security)


@pytest.mark.parametrize("interface", [None, "lo"])
def test_batch_cluster_without_interface_is_said_to_listen_everywhere(tmp_path, interface):
    """A dask-jobqueue cluster (no job submitted: no scale) listens on every interface unless
    its file names one: `run` warns then, and with `interface: lo` the scheduler listens on
    loopback only."""
    import psutil

    from campaign.cluster.open import open_client

    dashboard = {"dashboard_address": "127.0.0.1:0"}
    options = {"cores": 1, "memory": "1GB", "scheduler_options": dashboard}
    if interface:
        options["interface"] = interface
    path = tmp_path / "slurm.yaml"
    path.write_text(yaml.safe_dump({"class": "SLURMCluster", "options": options}))
    said: list[str] = []
    with open_client(cluster=path, say=said.append) as client:
        info = client.scheduler_info()
        port = int(info["address"].rsplit(":", 1)[1])
        sockets = psutil.Process().net_connections(kind="inet")
        listening = {s.laddr.ip for s in sockets if s.status == "LISTEN" and s.laddr.port == port}
    warning = (
        f"warning: {path} sets no 'interface': its scheduler and workers listen on every "
        "interface over plain TCP, where whoever reaches them can run code; set the cluster "
        "network's interface and use TLS (see cluster/README.md)"
    )
    assert (warning in said) == (interface is None), said
    assert listening == ({"127.0.0.1"} if interface else {"0.0.0.0", "::"})


CTRL_C_AFTER_A_BATCH_CLASS = """
import os, signal, sys
from pathlib import Path
from campaign.cli.main import guarded
from campaign.cluster.jobqueue import cluster_class

cluster_class(sys.argv[1], Path("cluster.yaml"))  # dask_jobqueue imported here

def command():
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C
    signal.pause()
    return 0

sys.exit(guarded(command, debug=False))
"""


@pytest.mark.parametrize("reference", ["SLURMCluster", "dask_jobqueue:PBSCluster"])
def test_ctrl_c_still_stops_a_command_once_a_batch_cluster_class_is_imported(reference):
    """Importing dask_jobqueue sets SIGINT to sys.exit (for its own batch runners): a run with
    a SLURM or PBS cluster file then met Ctrl-C as SystemExit, with no clean stop. The handler
    is kept: the command stops as after any Ctrl-C (exit 130, its one line), in a fresh
    process where dask_jobqueue was not imported before."""
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_AFTER_A_BATCH_CLASS, reference],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr == (
        "campaign: interrupted; finished results are saved, run the same command again to "
        "finish the rest\n"
    )
