"""The reference workloads of datacenter.md section 4 (experiments 1, 2 and 3).

Each is a fixed list of jobs of a few types (cores, class); jobs take the types in table
order, cycling, and experiments 2 and 3 restart the cycle at job 40, where their second wave
arrives (at 30 s). A class is an operation count and a user estimate: class 1 executes
5*10^6 operations per core (5 s on a reference core) with EET 7 s, class 2 10^7 (10 s) with
EET 14 s. Memory (50 MB per job, 1000 MB per node) never binds on these platforms and is not
modelled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from campaign.models.rigid.platform import REFERENCE
from campaign.models.rigid.workload import Workload


@dataclass(frozen=True)
class JobClass:
    req_ops: float
    ipc: float
    eet: float
    """The user's estimate (s), a duration."""

    @property
    def ops(self) -> float:
        """Operations each allocated core executes: ceil(req_ops / ipc)."""
        return float(math.ceil(self.req_ops / self.ipc))


CLASS_1 = JobClass(5e6, 1.0, 7.0)
CLASS_2 = JobClass(1e7, 1.0, 14.0)


@dataclass(frozen=True)
class Experiment:
    nodes: int
    jobs: int
    types: tuple[tuple[int, JobClass], ...]
    """(cores, class) in table order."""
    second_wave: int | None = None
    """Index of the first job of the second wave (arriving at ``wave_time``), where the type
    cycle restarts; None: every job arrives at 0."""
    wave_time: float = 30.0

    @property
    def cores(self) -> int:
        return self.nodes * REFERENCE.cores


EXPERIMENTS: dict[str, Experiment] = {
    "datacenter_exp1": Experiment(
        20,
        40,
        ((4, CLASS_1), (8, CLASS_1), (16, CLASS_1), (32, CLASS_1), (64, CLASS_2), (128, CLASS_2)),
    ),
    "datacenter_exp2": Experiment(
        25,
        80,
        (
            (4, CLASS_1),
            (8, CLASS_1),
            (16, CLASS_1),
            (20, CLASS_1),
            (32, CLASS_1),
            (64, CLASS_2),
            (128, CLASS_2),
        ),
        second_wave=40,
    ),
    "datacenter_exp3": Experiment(
        25,
        80,
        (
            (4, CLASS_1),
            (8, CLASS_1),
            (16, CLASS_1),
            (32, CLASS_1),
            (64, CLASS_2),
            (96, CLASS_2),
            (128, CLASS_2),
        ),
        second_wave=40,
    ),
}


def reference_workload(name: str, speed: float = REFERENCE.speed) -> Workload:
    """The jobs of experiment ``name``; ``runtime`` is ops / ``speed`` (the time on a core of
    the reference type) and ``estimate`` the class's EET."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown datacenter workload {name!r}; allowed: {', '.join(EXPERIMENTS)}")
    experiment = EXPERIMENTS[name]
    index = np.arange(experiment.jobs)
    submit = np.zeros(experiment.jobs)
    position = index.copy()
    if experiment.second_wave is not None:
        later = index >= experiment.second_wave
        submit[later] = experiment.wave_time
        position[later] -= experiment.second_wave
    kinds = [experiment.types[k % len(experiment.types)] for k in position]
    ops = np.array([kind.ops for _, kind in kinds])
    return Workload(
        submit=submit,
        size=np.array([cores for cores, _ in kinds], dtype=np.int64),
        runtime=ops / speed,
        estimate=np.array([kind.eet for _, kind in kinds]),
        user=np.ones(experiment.jobs, dtype=np.int64),
        job_id=index + 1,
        processors=experiment.cores,
        ops=ops,
    )
