"""What one task needs of a worker (Dask worker resources), and workers that can give it.

A spec's ``resources: {cores: 4, memory: 8GB}`` makes every task ask Dask for ``cores`` and
``memory``: a worker runs tasks at once only while their sum fits what it declares, so a
4-core task never shares its cores. The embedded cluster gives each of its workers an equal
share of this machine (by default as many workers as tasks fit at once); remote workers declare
theirs (``dask worker --resources "cores=8 memory=32e9"``). A task that no worker can hold is
refused in one line before anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from campaign.errors import CampaignError, ParameterError


def machine() -> dict[str, float]:
    """This machine's cores (those this process may use) and memory in bytes."""
    import psutil

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return {"cores": float(cores), "memory": float(psutil.virtual_memory().total)}


def embedded_workers(
    asked: Mapping[str, float], workers: int | None
) -> tuple[int, dict[str, float]]:
    """The embedded cluster's worker count (``workers``, else as many as tasks fit at once) and
    each worker's resources: an equal share of the machine; refused when a task does not fit."""
    have = machine()
    if workers is None:
        workers = max(1, min(int(have[name] // asked[name]) for name in asked))
    share = {name: float(int(have[name] // workers)) for name in asked}
    for name, amount in asked.items():
        if amount > share[name]:
            raise ParameterError(  # `workers` from Python, --workers on a command line
                f"resources: a task asks {describe(name, amount)}, but each of the embedded "
                f"cluster's {workers} workers has {describe(name, share[name])} of this "
                f"machine's {describe(name, have[name])}: use fewer {{workers}}, or a cluster "
                "whose workers have more",
                "workers",
            )
    return workers, share


def check_workers(client: Any, asked: Mapping[str, float]) -> None:
    """Refuse, in one line, tasks that no worker of the cluster can hold (no check while the
    cluster has no worker yet)."""
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    if not workers:
        return
    for info in workers.values():
        have = info.get("resources") or {}
        if all(have.get(name, 0) >= amount for name, amount in asked.items()):
            return
    best = max(
        (info.get("resources") or {} for info in workers.values()),
        key=lambda have: sum(have.get(name, 0) >= amount for name, amount in asked.items()),
    )
    wanted = ", ".join(describe(name, amount) for name, amount in asked.items())
    held = ", ".join(describe(name, amount) for name, amount in best.items()) or "none declared"
    raise CampaignError(
        f"resources: a task asks {wanted}, and no Dask worker has that much (the closest has "
        f'{held}): start workers with --resources "cores=N memory=BYTES" (see '
        "cluster/README.md), or ask less"
    )


def describe(name: str, amount: float) -> str:
    if name == "memory":
        return f"{amount / 1e9:.3g} GB of memory"
    return f"{amount:g} {name}"
