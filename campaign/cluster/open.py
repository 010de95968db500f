"""Open a Dask client: to a running scheduler, to a batch-system cluster, or to an embedded one.

Also reads the small files that say how to reach a cluster, so their errors name the file:

- a TLS settings file (``--security``)::

      ca: certs/ca.pem          # the certificate authority both ends must be signed by
      cert: certs/cluster.pem   # this side's certificate
      key: certs/cluster-key.pem

  Paths are relative to the file. Dask's TLS is mutual: the scheduler and the workers accept
  only peers that show a certificate signed by ``ca``, so only holders of such a certificate
  can talk to them.
- a cluster file (``--cluster``)::

      class: SLURMCluster       # a dask_jobqueue class, or "package.module:Class"
      options: {cores: 8, memory: 16GB, walltime: "02:00:00"}   # its keyword arguments
      scale: {jobs: 4}          # keyword arguments of cluster.scale(), or
      adapt: {minimum_jobs: 0, maximum_jobs: 20}   # of cluster.adapt()
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import ssl
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from campaign.cluster.dashboard import dashboard
from campaign.cluster.resources import check_workers, embedded_workers
from campaign.errors import CampaignError

SECURITY_FIELDS = ("ca", "cert", "key")
CLUSTER_FIELDS = ("class", "options", "scale", "adapt")
CONNECT_TIMEOUT = "10s"
LOOPBACK = "127.0.0.1"


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _read_mapping(path: Path, what: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise CampaignError(f"{what} file {path} does not exist") from None
    except (OSError, yaml.YAMLError) as error:
        problem = str(error).replace("\n", " ")
        raise CampaignError(f"{what} file {path} cannot be read: {problem}") from None
    if not isinstance(data, dict):
        raise CampaignError(f"{what} file {path} must be a mapping of settings")
    return data


# -- TLS ---------------------------------------------------------------------------------------
def load_security(path: str | Path) -> Any:
    """A `distributed.Security` from a TLS settings file, requiring encryption.

    The one certificate serves every role (client, scheduler, worker), so the same file also
    secures an embedded or batch-system cluster that this process starts.
    """
    from distributed import Security

    path = Path(path)
    data = _read_mapping(path, "security")
    unknown = sorted(set(data) - set(SECURITY_FIELDS))
    if unknown:
        raise CampaignError(
            f"security file {path}: unknown setting {unknown[0]!r}; allowed: "
            f"{', '.join(SECURITY_FIELDS)}"
        )
    files: dict[str, str] = {}
    for name in SECURITY_FIELDS:
        value = data.get(name)
        if value is None:
            if name == "key":  # the key may be appended to the certificate file
                continue
            raise CampaignError(f"security file {path}: {name!r} (a PEM file path) is required")
        if not isinstance(value, str):
            raise CampaignError(f"security file {path}: {name!r} must be a file path")
        file = (path.parent / os.path.expanduser(value)).resolve()
        if not file.is_file():
            raise CampaignError(f"security file {path}: {name} file {file} does not exist")
        files[name] = str(file)
    cert, key = files["cert"], files.get("key")
    check_tls_files(path, files["ca"], cert, key)
    return Security(
        require_encryption=True,
        tls_ca_file=files["ca"],
        tls_client_cert=cert,
        tls_client_key=key,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
    )


def _ssl_reason(error: Exception) -> str:
    """OpenSSL's message without the C source location it appends."""
    return re.sub(r"\s*\(_ssl\.c:\d+\)$", "", str(error.args[-1] if error.args else error))


def check_tls_files(path: Path, ca: str, cert: str, key: str | None) -> None:
    """Refuse TLS files Dask could not use, in one line naming the file, before anything starts:
    each must parse, the key must be the certificate's, and two holders of the certificate
    must accept each other (a handshake in memory, both sides showing it, as Dask's do)."""
    try:
        ssl.create_default_context(cafile=ca)
    except ssl.SSLError as error:
        raise CampaignError(
            f"security file {path}: ca file {ca} holds no PEM certificate ({_ssl_reason(error)})"
        ) from None
    try:
        ssl.create_default_context(cafile=cert)
    except ssl.SSLError as error:
        raise CampaignError(
            f"security file {path}: cert file {cert} holds no PEM certificate "
            f"({_ssl_reason(error)})"
        ) from None
    contexts = []
    for purpose in (ssl.Purpose.SERVER_AUTH, ssl.Purpose.CLIENT_AUTH):
        context = ssl.create_default_context(purpose, cafile=ca)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_REQUIRED
        try:
            context.load_cert_chain(cert, key, password=lambda: b"")
        except ssl.SSLError as error:
            # a key of another type than the certificate's (RSA beside EC) makes OpenSSL drop
            # the certificate: NO_CERTIFICATE_ASSIGNED, a mismatch all the same
            mismatch = ("KEY_VALUES_MISMATCH", "NO_CERTIFICATE_ASSIGNED")
            problem = (
                f"is not the private key of {cert}"
                if any(reason in str(error) for reason in mismatch)
                else f"is not an unencrypted PEM private key ({_ssl_reason(error)})"
            )
            raise CampaignError(f"security file {path}: key file {key or cert} {problem}") from None
        contexts.append(context)
    try:
        _handshake(*contexts)
    except ssl.SSLError as error:
        raise CampaignError(
            f"security file {path}: TLS with cert {cert} and ca {ca} fails (is the cert signed "
            f"by that ca?): {_ssl_reason(error)}"
        ) from None


def _handshake(client_context: ssl.SSLContext, server_context: ssl.SSLContext) -> None:
    """A TLS handshake between the two contexts through memory buffers; raises SSLError."""
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_context.wrap_bio(to_client, to_server, server_side=False)
    server = server_context.wrap_bio(to_server, to_client, server_side=True)
    finished = [False, False]
    for _ in range(8):
        for index, side in enumerate((client, server)):
            if not finished[index]:
                try:
                    side.do_handshake()
                    finished[index] = True
                except ssl.SSLWantReadError:
                    pass
        if all(finished):
            return
    raise ssl.SSLError("the TLS handshake did not complete")


SCHEDULER_SCHEMES = ("tcp", "tls")


def scheduler_address(address: str, security: Any | None) -> str:
    """The address to connect to, refusing a mix of TLS and plain TCP before any connection."""
    if not address.strip():
        raise CampaignError(
            "--scheduler is empty: give tcp://HOST:PORT (or tls://HOST:PORT with --security), "
            "or leave it out to use the embedded cluster"
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
        raise CampaignError(
            f"--scheduler {given}: {problem}; allowed: tcp://HOST:PORT, or tls://HOST:PORT "
            "with --security"
        )
    if protocol == "tls" and security is None:
        raise CampaignError(
            f"the Dask scheduler {address} uses TLS: pass --security FILE with its CA, "
            "certificate and key (see cluster/README.md)"
        )
    if security is not None and protocol != "tls":
        raise CampaignError(
            f"--security needs a tls:// scheduler address, got {address}: start the scheduler "
            "with --tls-ca-file, --tls-cert and --tls-key (see cluster/README.md)"
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


# -- batch-system clusters -----------------------------------------------------------------------
@dataclass
class ClusterFile:
    """What a cluster file asks for: a cluster class, its arguments and how to size it."""

    path: Path
    reference: str
    options: dict[str, Any] = field(default_factory=dict)
    scale: dict[str, Any] | None = None
    adapt: dict[str, Any] | None = None


def load_cluster_file(path: str | Path) -> ClusterFile:
    path = Path(path)
    data = _read_mapping(path, "cluster")
    unknown = sorted(set(data) - set(CLUSTER_FIELDS))
    if unknown:
        raise CampaignError(
            f"cluster file {path}: unknown setting {unknown[0]!r}; allowed: "
            f"{', '.join(CLUSTER_FIELDS)}"
        )
    reference = data.get("class")
    if not isinstance(reference, str) or not reference:
        raise CampaignError(
            f"cluster file {path}: 'class' is required: a dask_jobqueue class such as "
            "SLURMCluster or PBSCluster, or 'package.module:Class'"
        )
    parts = {}
    for name in ("options", "scale", "adapt"):
        value = data.get(name)
        if value is not None and not isinstance(value, dict):
            raise CampaignError(f"cluster file {path}: {name!r} must be a mapping of arguments")
        parts[name] = value
    if parts["scale"] is not None and parts["adapt"] is not None:
        raise CampaignError(f"cluster file {path}: give 'scale' or 'adapt', not both")
    return ClusterFile(
        path=path,
        reference=reference,
        options=parts["options"] or {},
        scale=parts["scale"],
        adapt=parts["adapt"],
    )


def cluster_class(reference: str, path: Path) -> type:
    """The class a cluster file names; dask_jobqueue is imported only when it is named."""
    if ":" in reference:
        module_name, _, class_name = reference.partition(":")
    else:
        module_name, class_name = "dask_jobqueue", reference
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        if module_name == "dask_jobqueue":
            raise CampaignError(
                f"cluster file {path}: {reference} needs dask-jobqueue, which is not "
                "installed: pip install 'campaign[hpc]'"
            ) from None
        raise CampaignError(
            f"cluster file {path}: cannot import module {module_name!r} ({error})"
        ) from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise CampaignError(
            f"cluster file {path}: module {module_name!r} has no class {class_name!r}"
        )
    return cls


def binds_one_interface(options: dict[str, Any]) -> bool:
    """Whether a dask_jobqueue cluster's options tie its scheduler and workers to one network
    interface (without, both listen on every interface)."""
    return bool(options.get("interface"))


def start_cluster(spec: ClusterFile, security: Any | None) -> Any:
    """Start the cluster a cluster file describes and ask it for workers."""
    cls = cluster_class(spec.reference, spec.path)
    options = with_worker_lifetime(dict(spec.options))
    if security is not None:
        options.setdefault("security", security)
    try:
        cluster = cls(**options)
    except TypeError as error:
        raise CampaignError(
            f"cluster file {spec.path}: {cls.__name__} refused its options: {error}"
        ) from None
    try:
        if spec.adapt is not None:
            cluster.adapt(**spec.adapt)
        elif spec.scale is not None:
            cluster.scale(**spec.scale)
    except TypeError as error:
        cluster.close()
        what = "adapt" if spec.adapt is not None else "scale"
        raise CampaignError(f"cluster file {spec.path}: {what}: {error}") from None
    return cluster


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
        raise CampaignError("give --scheduler or --cluster, not both")
    if cluster is not None and not str(cluster).strip():
        raise CampaignError(
            "--cluster is empty: give a cluster file, or leave it out to use the embedded cluster"
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

    tls = check_cluster_options(scheduler, cluster, security)
    if scheduler is not None:
        address = scheduler_address(scheduler, tls)
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT, security=tls)
        except (OSError, TimeoutError) as error:
            hint = " (is its CA the one in --security?)" if tls is not None else ""
            raise CampaignError(
                f"cannot reach the Dask scheduler at {address}{hint}: {error}"
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
                "set the cluster network's interface and use --security (see cluster/README.md)"
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
        raise CampaignError(f"the embedded Dask cluster did not start: {reason}") from error


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


KEEP_JOBS_SECONDS = 5.0


def keep_jobs(cluster: Any, every: float = KEEP_JOBS_SECONDS) -> Callable[[], None]:
    """Keep a cluster file's cluster at the size its `scale` or `adapt` asks for, until the
    returned function is called.

    A batch job's workers leave when the job ends (at its walltime, or `scancel`): Dask then
    drops them from the cluster, but asks for no new job until the cluster is scaled again,
    so a fixed `scale` would shrink to no worker and the run wait for ever. Every `every`
    seconds, on the cluster's event loop, the cluster is scaled to the number of jobs it
    means to have (its current plan, which `adapt` keeps up to date): jobs that ended are
    submitted again.
    """
    from distributed.core import Status
    from distributed.deploy.spec import SpecCluster
    from tornado.ioloop import PeriodicCallback

    if not isinstance(cluster, SpecCluster):
        return lambda: None

    def check() -> None:
        if cluster.status == Status.running and len(cluster.workers) < len(cluster.worker_spec):
            SpecCluster.scale(cluster, len(cluster.worker_spec))  # jobs, not worker processes

    keeper = PeriodicCallback(check, every * 1000)
    cluster.loop.add_callback(keeper.start)
    return lambda: cluster.loop.add_callback(keeper.stop)


def with_worker_lifetime(options: dict[str, Any]) -> dict[str, Any]:
    """A batch system's options with its workers retiring before their job's walltime.

    A job killed at its walltime takes its workers' running batches with it; a worker that
    retires first (`dask worker --lifetime`) hands its work back to the scheduler. Unless the
    cluster file sets `--lifetime` itself, workers retire at the walltime less a margin (a
    quarter of it, at most 5 minutes), staggered by up to 5% of it (at most 2 minutes) so that
    the jobs do not all end at once.
    """
    walltime = options.get("walltime")
    extra = [str(arg) for arg in options.get("worker_extra_args") or []]
    if walltime is None or any(arg.startswith("--lifetime") for arg in extra):
        return options
    seconds = walltime_seconds(str(walltime))
    if seconds is None:
        return options
    margin = min(300.0, seconds / 4)
    stagger = min(120.0, seconds / 20)
    lifetime = [f"--lifetime={int(seconds - margin)}s", f"--lifetime-stagger={int(stagger)}s"]
    return {**options, "worker_extra_args": [*extra, *lifetime]}


def walltime_seconds(walltime: str) -> float | None:
    """Seconds of a batch system's walltime ("D-HH:MM:SS", "HH:MM:SS", "MM:SS", "MM"), or None
    when it has another form."""
    days, _, clock = walltime.strip().rpartition("-")
    parts = clock.split(":")
    if not all(part.isdigit() for part in parts) or not 1 <= len(parts) <= 3:
        return None
    if days and not days.isdigit():
        return None
    if len(parts) == 1:
        parts = ["0", parts[0], "0"]  # SLURM: a bare number is minutes
    elif len(parts) == 2:
        parts = ["0", *parts]
    hours, minutes, seconds = (int(part) for part in parts)
    return float(int(days or 0) * 86400 + hours * 3600 + minutes * 60 + seconds)
