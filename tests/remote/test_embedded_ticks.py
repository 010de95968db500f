"""The embedded cluster's Dask servers (scheduler, nannies, workers) check their event loop once
a second instead of every 20 ms: its scheduler and nannies live in the driver's process, where
those ticks of many workers add up, and the warnings they serve are not logged there. The
setting holds for a worker its nanny starts again, and ends with the cluster."""

from __future__ import annotations

import os
import signal
import time

import dask
import distributed  # noqa: F401  (its settings, the tick among them, are Dask's from here)

from campaign.cluster.open import open_client


def tick(server) -> float:
    """How often a Dask server checks its event loop, in seconds."""
    return server._tick_interval


def worker_pids(client) -> list[int]:
    """The process ids of the workers that answer (a dead one does not)."""
    return list(client.run(os.getpid, on_error="ignore").values())


def test_every_server_of_the_embedded_cluster_ticks_once_a_second():
    default = dask.config.get("distributed.admin.tick.interval")
    with open_client(workers=2, say=lambda line: None) as client:
        assert client.run_on_scheduler(lambda dask_scheduler: tick(dask_scheduler)) == 1.0
        assert [tick(nanny) for nanny in client.cluster.workers.values()] == [1.0, 1.0]
        ticks = client.run(lambda dask_worker: tick(dask_worker))
        assert list(ticks.values()) == [1.0, 1.0]
        # a worker killed: its nanny starts a new one, with the same setting
        killed = next(iter(client.run(os.getpid).values()))
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while killed in (pids := worker_pids(client)) or len(pids) < 2:
            assert time.monotonic() < deadline, "the killed worker was not started again"
            time.sleep(0.2)
        assert list(client.run(lambda dask_worker: tick(dask_worker)).values()) == [1.0, 1.0]
    assert dask.config.get("distributed.admin.tick.interval") == default == "20ms"
