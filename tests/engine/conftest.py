"""A Dask cluster shared by the engine tests: a real scheduler and two worker processes."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="session")
def scheduler_address():
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
    )
    yield cluster.scheduler_address
    cluster.close()


PAPER_SPEC = """
name: paper
model: mm1
params: {customers: 500, fail_above: 40.0}
factors:
  arrival_rate: [0.05, 0.3, 0.9]
  service_rate: {fast: 2.0, slow: 1.0}
paired: [service_rate]
replicates: 6
seed: 8
output: out
"""


@pytest.fixture(scope="session")
def paper_results(tmp_path_factory, scheduler_address):
    """The output folder of an M/M/1 campaign whose waits span decades (arrival rates 0.05 to
    0.9) and where this seed makes 4 tasks fail (a first interarrival time above 40 s)."""
    import campaign

    folder = tmp_path_factory.mktemp("paper")
    spec = folder / "spec.yaml"
    spec.write_text(PAPER_SPEC)
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    return folder / "out"
