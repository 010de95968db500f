"""The metrics of the model document (section 6), computed from a finished run."""

from __future__ import annotations

import math

import numpy as np

from campaign.models.ownership.simulator import Outcome, Tasks

METRICS: dict[str, dict[str, str]] = {
    "satisfaction_user{k}": {
        "units": "%",
        "long_name": "mean over user k's tasks of 100 * duration / (completion - submit)",
    },
    "satisfaction_mean": {"units": "%", "long_name": "mean of the users' satisfactions"},
    "satisfaction_std": {
        "units": "%",
        "long_name": "sample standard deviation (n - 1) of the users' satisfactions",
    },
    "policy_violation": {
        "units": "machine*s",
        "long_name": "integral over time of sum over users of max(0, min(share, demand) - active)",
    },
    "capacity_loss": {
        "units": "machine*s",
        "long_name": "idle time of preempted machines from release to the next task start",
    },
    "policy_cost": {
        "units": "machine*s",
        "long_name": "busy machine time minus the sum of task durations",
    },
    "makespan": {"units": "s", "long_name": "last task completion, measured from time 0"},
    "n_preemptions": {"units": "1", "long_name": "number of tasks suspended by the policy"},
}


def compute_metrics(tasks: Tasks, outcome: Outcome, users: int) -> dict[str, float]:
    """Metrics of one run. A user without tasks has a NaN satisfaction, left out of the mean
    and standard deviation (NaN when fewer than two users have tasks)."""
    user = np.array(tasks.user, dtype=int)
    duration = np.array(tasks.duration)
    su = 100.0 * duration / (np.array(outcome.completion) - np.array(tasks.submit))
    per_user = [
        float(su[user == u].mean()) if np.any(user == u) else math.nan for u in range(users)
    ]
    defined = [value for value in per_user if not math.isnan(value)]
    metrics = {f"satisfaction_user{u + 1}": value for u, value in enumerate(per_user)}
    metrics["satisfaction_mean"] = float(np.mean(defined))
    metrics["satisfaction_std"] = float(np.std(defined, ddof=1)) if len(defined) > 1 else math.nan
    metrics["policy_violation"] = float(outcome.violation)
    metrics["capacity_loss"] = float(outcome.capacity_loss)
    metrics["policy_cost"] = float(outcome.busy_time - math.fsum(tasks.duration))
    metrics["makespan"] = float(outcome.makespan)
    metrics["n_preemptions"] = float(outcome.n_preemptions)
    return metrics
