"""Which Dask cluster a run uses: the cluster options of `campaign.run`, checked once."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.cluster.open import check_cluster_options, open_client
from campaign.errors import BadValue


@dataclass(frozen=True)
class ClusterOptions:
    """`workers`: worker processes of the embedded cluster (None: one per core); `scheduler`:
    the address of a running scheduler; `cluster`: a cluster file that starts one; `security`:
    a TLS settings file (see `campaign.cluster.security`); `resources`: what each task asks of
    a worker (`campaign.cluster.resources`)."""

    workers: int | None = None
    scheduler: str | None = None
    cluster: str | Path | None = None
    security: str | Path | None = None
    resources: Mapping[str, float] | None = None  # what one task asks (Dask worker resources)

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise BadValue("workers", self.workers, "must be >= 1")
        if self.workers is not None and (self.scheduler or self.cluster):
            raise BadValue(
                "workers",
                self.workers,
                "sizes the embedded cluster; with a scheduler or a cluster file the cluster's "
                "own workers run the tasks (start more with cluster/start-workers.sh or its scale)",
            )
        check_cluster_options(self.scheduler, self.cluster, self.security)

    def default_wait(self, default: float) -> float:
        """How long to wait while there is no worker unless told: no limit with a cluster file
        (its batch jobs may queue for long), else ``default``."""
        return math.inf if self.cluster else default

    def client(self, say: Callable[[str], None]) -> AbstractContextManager[Any]:
        """A Dask client to the chosen cluster (see `campaign.cluster.open.open_client`)."""
        return open_client(
            scheduler=self.scheduler,
            workers=self.workers,
            cluster=self.cluster,
            security=self.security,
            say=say,
            resources=self.resources,
        )
