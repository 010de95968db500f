"""How a dispatch runs its tasks: the options of `campaign.run` that reach the driver.

Checked once, when made, so that bad input gets one clear error line before any work runs;
the error names the Python parameter (`BadValue`: the CLI says its option instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from campaign.errors import BadValue

WAIT_WORKERS_SECONDS = 60.0  # default wait for a first worker, and for one after all left


@dataclass(frozen=True)
class ExecutionOptions:
    """`retries`: tries a task gets after its first failure that was not the model's doing;
    `task_timeout`: seconds a task may run (None: no limit); `wait_workers`: seconds to wait
    while the cluster has no worker (may be infinite); `replicate_tail`: tail work stealing
    and straggler copies; `locality`: batches keep to the groups of inputs a worker has;
    `batch_size`: tasks per batch (None: sized from measured durations); `progress`: show a
    progress bar; `resources`: what each task asks of a worker (Dask worker resources: a batch
    asks what its one running task needs)."""

    retries: int = 1
    task_timeout: float | None = None
    wait_workers: float = WAIT_WORKERS_SECONDS
    replicate_tail: bool = True
    locality: bool = True
    batch_size: int | None = None
    progress: bool = True
    resources: Mapping[str, float] | None = None  # what each task asks of a worker (Dask)

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise BadValue("retries", self.retries, "must be >= 0")
        if self.task_timeout is not None and not self.task_timeout > 0:
            raise BadValue("task_timeout", self.task_timeout, "must be > 0 seconds")
        if not self.wait_workers >= 0:
            raise BadValue("wait_workers", self.wait_workers, "must be >= 0 seconds")
        if self.batch_size is not None and self.batch_size < 1:
            raise BadValue("batch_size", self.batch_size, "must be >= 1")
