"""A campaign through `--scheduler` on a TLS-secured scheduler and workers started with the
cluster/ scripts; without the cluster's certificates a client is refused. (Plain TCP clusters
started by hand serve the fault tests.)"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

SPEC = """
name: remote
model: busy
factors:
  duration_ms: [5, 7]
replicates: 12
seed: 11
output: out
"""


def assert_values_are_the_models(dataset: xr.Dataset) -> None:
    """Every value is the busy model's seeded draw for that task's seed, and every task ran."""
    seeds = dataset["seed"].values
    expected = np.vectorize(lambda seed: np.random.default_rng(int(seed)).random())(seeds)
    assert (dataset["status"].values == 1).all()
    assert np.array_equal(dataset["value"].values, expected)
    assert np.array_equal(dataset["value_mean"].values, expected.mean(axis=1))


def test_tls_cluster_serves_certificate_holders_only(
    start_cluster, write_spec, remote, tmp_path, capsys
):
    from distributed import Client

    from campaign.cli.main import main
    from campaign.cluster.security import load_security

    certs = remote.make_certs(tmp_path / "certs")
    stranger = remote.make_certs(tmp_path / "stranger")  # another CA: not trusted
    cluster = start_cluster(workers=2, certs=certs, scripts=True)
    assert cluster.address.startswith("tls://")
    spec = write_spec(SPEC)

    done = remote.run_campaign(
        spec, "--scheduler", cluster.address, "--security", str(certs / "security.yaml")
    )
    assert done.returncode == 0, done.stderr
    assert "24 tasks ok, 0 failed, 0 missing" in done.stdout
    assert_values_are_the_models(xr.load_dataset(spec.parent / "out" / "results.nc"))

    # the CLI without certificates stops with one line before connecting
    spec = write_spec(SPEC.replace("output: out", "output: refused"), "refused.yaml")
    assert main(["run", str(spec), "--scheduler", cluster.address]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"campaign: error: the Dask scheduler {cluster.address} uses TLS: pass --security "
        "FILE with its CA, certificate and key (see cluster/README.md)"
    ]
    assert not (spec.parent / "refused" / "ledger").exists()
    # another CA's certificate, or no TLS at all, cannot connect
    with pytest.raises(OSError):
        Client(cluster.address, security=load_security(stranger / "security.yaml"), timeout=2)
    with pytest.raises(OSError):
        Client(cluster.address.replace("tls://", "tcp://"), timeout=2)
    # while a certificate holder can
    with Client(cluster.address, security=load_security(certs / "security.yaml")) as client:
        assert len(client.nthreads()) == 2
