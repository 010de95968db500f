"""Open a Dask client: to a running scheduler, to a batch-system cluster (`jobqueue`), or to
an embedded one; the TLS settings come from `security`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from campaign.cluster.dashboard import dashboard
from campaign.cluster.jobqueue import (
    binds_one_interface,
    keep_jobs,
    load_cluster_file,
    start_cluster,
)
from campaign.cluster.main_guard import guard_hint, refuse_while_importing_main
from campaign.cluster.resources import check_workers, embedded_workers
from campaign.cluster.security import load_security
from campaign.errors import CampaignError, ParameterError

CONNECT_TIMEOUT = "10s"
LOOPBACK = "127.0.0.1"
EMBEDDED_DASK_CONFIG = {"distributed.admin.tick.interval": "1s"}
"""Dask settings while the embedded cluster runs. Every Dask server (the scheduler, each nanny,
each worker) ticks every 20 ms by default to warn of a blocked event loop; the embedded
cluster logs only critical lines, so those warnings go nowhere, and its scheduler and nannies
live in the driver's process: idle, 32 workers' ticks took 8 % of a core there."""


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


SCHEDULER_SCHEMES = ("tcp", "tls")


def scheduler_address(address: str, security: Any | None) -> str:
    """The address to connect to, refusing a mix of TLS and plain TCP before any connection."""
    if not address.strip():
        raise ParameterError(
            "{scheduler} is empty: give tcp://HOST:PORT (or tls://HOST:PORT with {security}), "
            "or leave it out to use the embedded cluster",
            "scheduler",
            "security",
        )
    given = address
    if "://" not in address:
        address = f"{'tls' if security is not None else 'tcp'}://{address}"
    protocol, _, rest = address.partition("://")
    problem = (
        f"unknown scheme {protocol!r}"
        if protocol not in SCHEDULER_SCHEMES
        else "no host"
        if not rest
        else _host_port_problem(rest)
    )
    if problem:
        raise ParameterError(
            f"{{scheduler}} {given}: {problem}; allowed: tcp://HOST:PORT, or tls://HOST:PORT "
            "with {security}",
            "scheduler",
            "security",
        )
    if protocol == "tls" and security is None:
        raise ParameterError(
            f"the Dask scheduler {address} uses TLS: pass {{security}} FILE with its CA, "
            "certificate and key (see cluster/README.md)",
            "security",
        )
    if security is not None and protocol != "tls":
        raise ParameterError(
            f"{{security}} needs a tls:// scheduler address, got {address}: start the "
            "scheduler with --tls-ca-file, --tls-cert and --tls-key (see cluster/README.md)",
            "security",
        )
    return address


def _host_port_problem(location: str) -> str | None:
    """What is wrong with ``HOST:PORT`` (``[IPv6]:PORT``), or None."""
    if location.startswith("["):
        host, bracket, port = location[1:].partition("]")
        port = port[1:] if bracket and port.startswith(":") else None
    else:
        host, colon, port = location.rpartition(":")
        if not colon:
            host, port = location, None
        elif ":" in host:
            return "write an IPv6 address in brackets, [ADDRESS]:PORT"
    if not host:
        return "no host"
    if port is None:
        return "no port"
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        return f"port {port!r} is not a number from 1 to 65535"
    return None


# -- clients -----------------------------------------------------------------------------------
def check_cluster_options(
    scheduler: str | None = None,
    cluster: str | Path | None = None,
    security: str | Path | None = None,
) -> Any | None:
    """Refuse a bad choice of cluster in one line before any work: both a scheduler and a
    cluster file, an empty or unknown scheduler address, unusable TLS files or cluster file.
    Returns the `distributed.Security` of `security`, if given."""
    if scheduler is not None and cluster is not None:
        raise ParameterError("give {scheduler} or {cluster}, not both", "scheduler", "cluster")
    if cluster is not None and not str(cluster).strip():
        raise ParameterError(
            "{cluster} is empty: give a cluster file, or leave it out to use the embedded cluster",
            "cluster",
        )
    tls = load_security(security) if security is not None else None
    if scheduler is not None:
        scheduler_address(scheduler, tls)
    if cluster is not None:
        load_cluster_file(cluster)
    return tls


@contextmanager
def open_client(
    scheduler: str | None = None,
    workers: int | None = None,
    cluster: str | Path | None = None,
    security: str | Path | None = None,
    say: Callable[[str], None] = print,
    resources: Mapping[str, float] | None = None,
) -> Iterator[Any]:
    """A Dask client: to a running scheduler, to a cluster a cluster file starts, or to an
    embedded cluster of worker processes listening on 127.0.0.1 only. With ``resources`` (what
    each task asks), the embedded cluster's workers get a share of this machine each, and a
    cluster none of whose workers can hold a task is refused (`campaign.cluster.resources`)."""
    from distributed import Client

    refuse_while_importing_main()
    tls = check_cluster_options(scheduler, cluster, security)
    if scheduler is not None:
        address = scheduler_address(scheduler, tls)
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT, security=tls)
        except (OSError, TimeoutError) as error:
            hint = " (is its CA the one in {security}?)" if tls is not None else ""
            raise ParameterError(
                f"cannot reach the Dask scheduler at {address}{hint}: {error}", "security"
            ) from None
        try:
            try:
                nworkers = len(client.nthreads())
            except OSError as error:
                raise CampaignError(f"lost the Dask scheduler at {address}: {error}") from None
            say(f"Dask scheduler {address} ({nworkers} workers); {dashboard(client)}")
            if resources:
                check_workers(client, resources)
            yield client
        finally:
            client.close()
        return
    if cluster is not None:
        spec = load_cluster_file(cluster)
        if tls is None and ":" not in spec.reference and not binds_one_interface(spec.options):
            say(
                f"warning: {spec.path} sets no 'interface': its scheduler and workers listen "
                "on every interface over plain TCP, where whoever reaches them can run code; "
                "set the cluster network's interface and use TLS (see cluster/README.md)"
            )
        started = start_cluster(spec, tls)
        stop_keeping = keep_jobs(started)
        try:
            client = Client(started, security=tls)
            try:
                say(
                    f"{type(started).__name__} from {spec.path}: scheduler "
                    f"{started.scheduler_address}; {dashboard(client)}"
                )
                if resources:
                    check_workers(client, resources)
                yield client
            finally:
                client.close()
        finally:
            stop_keeping()
            started.close()
        return
    count, each = workers or default_workers(), None
    if resources:
        count, each = embedded_workers(resources, workers)
    with embedded_client(count, tls, each, say) as client:
        yield client


@contextmanager
def embedded_client(
    count: int, tls: Any | None, each: Mapping[str, float] | None, say: Callable[[str], None]
) -> Iterator[Any]:
    """A client of an embedded cluster of ``count`` workers (each with resources ``each``),
    kept at that size while it is open (`keep_workers`)."""
    import dask
    from distributed import Client

    with dask.config.set(EMBEDDED_DASK_CONFIG):  # and the nannies that replace lost ones
        local = start_local_cluster(count, tls, each)
        stop_keeping = keep_workers(local)
        try:
            client = Client(local, security=tls)
            try:
                say(f"Local Dask cluster: {count} worker processes; {dashboard(client)}")
                yield client
            finally:
                client.close()
        finally:
            stop_keeping()
            local.close()


def start_local_cluster(
    workers: int, security: Any | None, resources: Mapping[str, float] | None = None
) -> Any:
    """The embedded cluster: scheduler, dashboard, nannies and workers all listen on 127.0.0.1
    only, so nothing outside this machine can reach them (TLS with `security`).

    Its processes log only critical lines: the errors Dask logs with tracebacks (a heartbeat
    that meets a closing scheduler on a loaded machine, a worker ended for its memory) are about
    Dask's own processes, and the campaign reports each task they touch in one line itself.

    Its scheduler fails a task at the first death of a worker holding it (Dask's
    ``allowed-failures`` 0, instead of running it on up to three more workers, each of which a
    crashing task ends): the campaign sends such tasks again itself, in halves and then alone,
    so that only the task that ends its process fails (see `campaign.execute`). ``resources``:
    each worker's Dask resources."""
    from distributed import LocalCluster

    try:
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host=LOOPBACK,
            dashboard_address=f"{LOOPBACK}:0",
            silence_logs=logging.CRITICAL,
            security=security,
            preload=["campaign.cluster.worker_setup"],  # Ctrl-C is for `run`, not each worker
            scheduler_kwargs={"allowed_failures": 0},
            **({"resources": dict(resources)} if resources else {}),
        )
    except (RuntimeError, OSError) as error:
        reason = str(error).replace("\n", " ")
        raise CampaignError(
            f"the embedded Dask cluster did not start: {reason}{guard_hint()}"
        ) from error


KEEP_WORKERS_SECONDS = 1.0


def keep_workers(local: Any, every: float = KEEP_WORKERS_SECONDS) -> Callable[[], None]:
    """Keep the embedded cluster at its full set of worker processes until the returned
    function is called.

    A nanny starts a fresh worker process when its worker dies, but the cluster closes a nanny
    whose worker was away when it looked (``distributed.deploy.lost-worker-timeout`` after a
    death), which tasks that keep ending their processes (crashes, timeouts) soon bring about;
    and a nanny may fail to start its worker. Then the campaign would run on fewer workers,
    and stop at none. So, every `every` seconds on the cluster's event loop, nannies that
    closed are dropped and the cluster is scaled back to its size: it starts new ones.
    """
    from distributed.core import Status
    from tornado.ioloop import PeriodicCallback

    size = len(local.worker_spec)

    def check() -> None:
        if local.status != Status.running:
            return
        for name, nanny in list(local.workers.items()):
            if nanny.status in (Status.closed, Status.failed):
                del local.workers[name]
        if len(local.workers) < size:
            local.scale(size)

    keeper = PeriodicCallback(check, every * 1000)
    local.loop.add_callback(keeper.start)
    return lambda: local.loop.add_callback(keeper.stop)
