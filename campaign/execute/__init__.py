"""Run tasks on Dask as a bag of tasks.

`execution_options` holds how a dispatch runs (checked once); `worker` runs batches on the workers;
`calls` asks workers questions, waiting a bounded time for each; `batching` holds the tasks,
the tally and batch sizes; `tail` decides, from a snapshot, what idle workers take at the
tail of a campaign, `deaths` what becomes of the tasks of a dying worker and `timeouts`
which tasks are past the timeout (all pure, over snapshots); `flight` keeps the batches in
flight and where they were sent; `shell` holds the state of a dispatch and its calls to the
scheduler (a lost one is one error); `placement` chooses which batches go to which worker,
`reading` reads and checks a landed batch, `finishing` stores its results or sends its tasks
again, `recovery` applies `deaths`' decisions; `driver` runs the loop that follows workers
and applies the tail and timeout decisions. The names other modules use are re-exported
here.
"""

from campaign.execute.batching import (
    BATCHES_PER_WORKER,
    TARGET_BATCH_SECONDS,
    BatchSizer,
    GroupedQueue,
    Item,
    Outcome,
)
from campaign.execute.deaths import Death
from campaign.execute.driver import TAIL_POLL_SECONDS, _Driver, dispatch
from campaign.execute.execution_options import WAIT_WORKERS_SECONDS, ExecutionOptions
from campaign.execute.shell import POLL_SECONDS, lost_scheduler, scheduler_calls
from campaign.execute.tail import (
    STRAGGLER_FACTOR,
    Copy,
    Rescue,
    Steal,
    TailSnapshot,
    tail_decisions,
)
from campaign.execute.worker import (
    STOPPED_EXIT_CODE,
    end_worker_process,
    run_batch,
    running_tasks,
    skip_tasks,
)

__all__ = [
    "BATCHES_PER_WORKER",
    "POLL_SECONDS",
    "STOPPED_EXIT_CODE",
    "STRAGGLER_FACTOR",
    "TAIL_POLL_SECONDS",
    "TARGET_BATCH_SECONDS",
    "WAIT_WORKERS_SECONDS",
    "BatchSizer",
    "Copy",
    "Death",
    "ExecutionOptions",
    "GroupedQueue",
    "Item",
    "Outcome",
    "Rescue",
    "Steal",
    "TailSnapshot",
    "_Driver",
    "dispatch",
    "end_worker_process",
    "lost_scheduler",
    "run_batch",
    "running_tasks",
    "scheduler_calls",
    "skip_tasks",
    "tail_decisions",
]
