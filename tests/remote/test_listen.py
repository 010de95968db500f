"""Nothing of a cluster listens beyond the interface that reaches its scheduler: every socket
that the scheduler, its dashboard, the nannies, the workers and their HTTP pages listen on,
for a cluster started with the cluster/ scripts on 127.0.0.1 and for the embedded cluster of
`campaign run`, is a loopback address."""

from __future__ import annotations

import ipaddress
import time

import psutil
import pytest


def listening(pid: int) -> dict[int, set[tuple[str, int]]]:
    """The (address, port) pairs that a process and each of its descendants listen on, by pid
    (processes that listen on nothing are left out)."""
    root = psutil.Process(pid)
    found = {}
    for process in [root, *root.children(recursive=True)]:
        try:
            sockets = process.net_connections(kind="inet")
        except psutil.NoSuchProcess:
            continue
        pairs = {(s.laddr.ip, s.laddr.port) for s in sockets if s.status == psutil.CONN_LISTEN}
        if pairs:
            found[process.pid] = pairs
    return found


def not_loopback(found: dict[int, set[tuple[str, int]]]) -> list[tuple[int, str, int]]:
    return sorted(
        (pid, address, port)
        for pid, pairs in found.items()
        for address, port in pairs
        if not ipaddress.ip_address(address).is_loopback
    )


def ports(found: dict[int, set[tuple[str, int]]]) -> set[int]:
    return {port for pairs in found.values() for _, port in pairs}


def port_of(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


@pytest.mark.parametrize("dashboard", ["", "none"], ids=["dashboard", "no-dashboard"])
def test_scripts_cluster_on_loopback_listens_on_loopback_only(start_cluster, dashboard):
    from distributed import Client

    cluster = start_cluster(workers=2, scripts=True, dashboard=dashboard)
    with Client(cluster.address, timeout="30s") as client:
        info = client.scheduler_info()
    scheduler = listening(cluster.scheduler.pid)
    workers = listening(cluster.workers[0].pid)

    assert not_loopback(scheduler) == []
    assert not_loopback(workers) == []
    # and these are the cluster's sockets: the scheduler's port and its HTTP server (the
    # dashboard, or with DASHBOARD=none its health and metrics pages) ...
    assert ports(scheduler) == {cluster.port, info["services"]["dashboard"]}
    # ... each worker's port and HTTP page, in its own process, and its nanny's port
    assert len(info["workers"]) == 2
    expected = set()
    for address, worker in info["workers"].items():
        expected |= {port_of(address), worker["services"]["dashboard"], port_of(worker["nanny"])}
    assert ports(workers) == expected
    assert len(workers) == 3  # the nannies' process and the two workers'


def test_embedded_cluster_listens_on_loopback_only(write_spec, remote):
    spec = write_spec(
        """
        name: embedded
        model: busy
        params: {stall_above: 0.0, stall_seconds: 3600}
        factors:
          duration_ms: [1, 2]
        replicates: 4
        seed: 5
        output: out
        """
    )
    process = remote.start_campaign(spec, "--workers", "2")
    try:
        # the scheduler, its dashboard and two nannies in `campaign run` itself; a port and
        # an HTTP status page in each of the two worker processes
        deadline = time.monotonic() + 60
        while True:
            found = listening(process.pid)
            workers = [len(pairs) for pid, pairs in found.items() if pid != process.pid]
            # exactly two worker processes of two sockets each: a process being spawned holds
            # its parent's sockets for a moment, until it starts its own program
            if len(found.get(process.pid, ())) >= 4 and sorted(workers) == [2, 2]:
                break
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, f"the embedded cluster did not start: {found}"
            time.sleep(0.2)
        assert not_loopback(found) == []
        assert sorted(len(pairs) for pairs in found.values()) == [2, 2, 4]
    finally:
        remote.kill(process)
