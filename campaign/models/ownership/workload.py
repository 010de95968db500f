"""Build the task list of a run from its recipe and the workload stream.

Parametric workloads: user k submits ``tasks_per_user[k]`` tasks from ``submit_s[k]`` on;
durations cycle through the user's list in turn (600, 1800, 3600, 600, ...). Two optional
sources of randomness make replicates differ:
- ``duration_jitter`` c: each duration is multiplied by 1 + c·U, U uniform on [-1, 1];
- ``interarrival_s`` a > 0: the user's tasks arrive as a Poisson process, the first at
  ``submit_s[k]``, the next ones after exponential gaps of mean a (default 0: all at once).
Each user draws durations and gaps from its own two generators (children of the workload
stream), so changing one user's tasks, or one of the two options, leaves the other draws as
they were (common random numbers across factor levels). Without either option the workload is
deterministic and every replicate is identical.

Task ids are positions in the list: user by user, each user's tasks in submission order.
"""

from __future__ import annotations

import numpy as np

from campaign.models.ownership.params import Recipe
from campaign.models.ownership.simulator import Tasks


def build_tasks(recipe: Recipe, sequence: np.random.SeedSequence) -> Tasks:
    """The tasks of one run; `sequence` is the workload stream of the run's seed."""
    if recipe.explicit is not None:
        users, submits, durations = zip(*recipe.explicit)
        return Tasks(tuple(users), tuple(submits), tuple(durations))
    users: list[int] = []
    submits: list[float] = []
    durations: list[float] = []
    for u, child in enumerate(sequence.spawn(recipe.users)):
        count = recipe.tasks_per_user[u]
        duration_rng, arrival_rng = (np.random.default_rng(s) for s in child.spawn(2))
        cycle = recipe.durations[u]
        base = np.array([cycle[i % len(cycle)] for i in range(count)], dtype=float)
        factor = 1.0 + recipe.duration_jitter * duration_rng.uniform(-1.0, 1.0, count)
        gaps = np.zeros(count)
        if recipe.interarrival > 0 and count > 1:
            gaps[1:] = arrival_rng.exponential(recipe.interarrival, count - 1)
        users += [u] * count
        submits += (recipe.submit[u] + np.cumsum(gaps)).tolist()
        durations += (base * factor).tolist()
    return Tasks(tuple(users), tuple(submits), tuple(durations))
