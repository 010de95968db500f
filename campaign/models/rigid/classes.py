"""Job classes: narrow or wide by processors, short or long by run time, and the metrics of
each class (a breakdown along the results' ``job_class`` dimension).

The four classes narrow/wide x short/long are those of the backfilling studies that break
results down by job class (Mu'alem and Feitelson, IEEE TPDS 12(6), 2001; Srinivasan,
Kettimuthu, Subramani and Sadayappan, "Characterization of backfilling strategies for
parallel job scheduling", ICPP workshops 2002). The default thresholds are Srinivasan et al.'s:
narrow is at most 8 processors, short at most one hour of run time.
"""

from __future__ import annotations

import numpy as np

from campaign.models.contract import Integer, Number, Param
from campaign.models.rigid.metrics import TAU
from campaign.models.rigid.simulate import Schedule

CLASS_DIMENSION = "job_class"
CLASSES = ("narrow_short", "narrow_long", "wide_short", "wide_long")
WIDTH_DEFAULT = 8
RUNTIME_DEFAULT = 3600.0
SOURCE = "Srinivasan et al., ICPP workshops 2002"

CLASS_PARAMS = (
    Param(
        "class_width",
        Integer(1),
        WIDTH_DEFAULT,
        f"job classes: a job of at most this many processors is narrow, else wide ({SOURCE})",
        "processors",
    ),
    Param(
        "class_runtime_s",
        Number(0, low_open=True),
        RUNTIME_DEFAULT,
        f"job classes: a job running at most this long is short, else long ({SOURCE})",
        "s",
    ),
)

BREAKDOWN = {
    CLASS_DIMENSION: {
        "units": "1",
        "long_name": "per job class (narrow/wide x short/long): "
        + ", ".join(("mean_wait", "mean_turnaround", "mean_bsld", "jobs")),
        "kind": "breakdown",
    }
}
"""The declaration of the breakdown: results hold ``mean_wait_by_job_class`` and so on."""

CLASS_METRICS = ("mean_wait", "mean_turnaround", "mean_bsld", "jobs")
"""The metrics given per class (declared in `campaign.models.rigid.metrics.METRICS`)."""


def job_classes(size: np.ndarray, runtime: np.ndarray, width: int, short: float) -> np.ndarray:
    """Each job's class, as an index into `CLASSES`."""
    return 2 * (np.asarray(size) > width) + (np.asarray(runtime) > short)


def class_metrics(
    schedule: Schedule, width: int, short: float, bsld_floor_one: bool = True
) -> dict[str, dict[str, float]]:
    """Per class, its mean wait, response time and bounded slowdown and its job count (NaN
    means for a class without jobs), as ``{job_class: {label: {metric: value}}}``."""
    submit = schedule.workload.submit
    runtime = schedule.runtime
    wait = schedule.start - submit
    response = schedule.end - submit
    bsld = response / np.maximum(runtime, TAU)
    if bsld_floor_one:
        bsld = np.maximum(bsld, 1.0)
    classes = job_classes(schedule.workload.size, runtime, width, short)
    out = {}
    for index, label in enumerate(CLASSES):
        member = classes == index
        count = int(member.sum())
        out[label] = {
            "mean_wait": _mean(wait, member),
            "mean_turnaround": _mean(response, member),
            "mean_bsld": _mean(bsld, member),
            "jobs": float(count),
        }
    return {CLASS_DIMENSION: out}


def _mean(values: np.ndarray, member: np.ndarray) -> float:
    return float(values[member].mean()) if member.any() else float("nan")
