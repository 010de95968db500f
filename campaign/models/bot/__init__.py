"""Data-intensive bag of tasks on a heterogeneous grid (bag-of-tasks.md).

A grid of sites, each with processors and a data server, fed by one shared home link; a
sequence of jobs reusing the same input files; WQR, XSufferage, Storage Affinity and a plain
workqueue. ``run(params, seed) -> {metric: float}`` is the model; ``simulate`` returns the
whole simulation record and ``Simulator`` runs explicit platforms and workloads.
"""

from __future__ import annotations

from .heuristics import StorageAffinity, Workqueue, XSufferage
from .model import MODEL, Setup, build, check, run, simulate
from .platform import Platform, build_platform
from .simulator import SimResult, Simulator
from .workload import Workload, build_workload

__all__ = [
    "MODEL",
    "Platform",
    "Setup",
    "SimResult",
    "Simulator",
    "StorageAffinity",
    "Workload",
    "Workqueue",
    "XSufferage",
    "build",
    "build_platform",
    "build_workload",
    "check",
    "run",
    "simulate",
]
