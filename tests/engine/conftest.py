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
