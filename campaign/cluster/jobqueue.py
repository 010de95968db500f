"""Batch-system clusters (dask-jobqueue) from a cluster file (``--cluster``)::

    class: SLURMCluster       # a dask_jobqueue class, or "package.module:Class"
    options: {cores: 8, memory: 16GB, walltime: "02:00:00"}   # its keyword arguments
    scale: {jobs: 4}          # keyword arguments of cluster.scale(), or
    adapt: {minimum_jobs: 0, maximum_jobs: 20}   # of cluster.adapt()

The file is read so that its errors name it; the cluster is kept at the size it asks for
while batch jobs end, and its workers retire before their job's walltime.
"""

from __future__ import annotations

import importlib
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from campaign.cluster.security import read_mapping
from campaign.errors import CampaignError

CLUSTER_FIELDS = ("class", "options", "scale", "adapt")


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
    data = read_mapping(path, "cluster", CLUSTER_FIELDS)
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


def imported_keeping_ctrl_c(module_name: str) -> Any:
    """Import a module, the process's Ctrl-C handler kept: importing dask_jobqueue sets SIGINT
    to ``sys.exit`` (for its batch runners), so Ctrl-C raised SystemExit instead of
    KeyboardInterrupt: no clean stop, and none at all where Python swallows it."""
    main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGINT) if main else None
    try:
        return importlib.import_module(module_name)
    finally:
        if handler is not None and signal.getsignal(signal.SIGINT) is not handler:
            signal.signal(signal.SIGINT, handler)


def cluster_class(reference: str, path: Path) -> type:
    """The class a cluster file names; dask_jobqueue is imported only when it is named."""
    if ":" in reference:
        module_name, _, class_name = reference.partition(":")
    else:
        module_name, class_name = "dask_jobqueue", reference
    try:
        module = imported_keeping_ctrl_c(module_name)
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
