"""Workloads drawn without a trace file of their own (list-scheduling.md section 7): the
randomized workload (every attribute uniform) and the probabilistic workload fitted to a
trace (Weibull inter-arrival times, jobs drawn from the trace's cells of size and binned
requested and actual times)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from campaign.models.rigid.workload import Workload, from_arrays


def randomized(jobs: int, processors: int, max_gap: float, rng: np.random.Generator) -> Workload:
    """Section 7.1: sizes 1..M, estimates U(300 s, 24 h), runtimes U(1 s, estimate), gaps
    U(0, max_gap), first submit 0; drawn in that order from ``rng`` (the workload stream)."""
    size = rng.integers(1, processors, size=jobs, endpoint=True)
    estimate = rng.uniform(300.0, 86400.0, size=jobs)
    runtime = rng.uniform(1.0, estimate)
    gap = rng.uniform(0.0, max_gap, size=jobs - 1)
    submit = np.concatenate([[0.0], np.cumsum(gap)])
    return from_arrays(submit, size, runtime, estimate, processors=processors)


def time_bin(y: np.ndarray) -> np.ndarray:
    """b(y) = max(0, floor(log2 y)): bin b covers [2^b, 2^(b+1)) s, bin 0 (0, 2) s."""
    return np.maximum(0, np.floor(np.log2(y))).astype(np.int64)


@dataclass(frozen=True)
class Fit:
    """What the probabilistic workload draws from (section 7.2)."""

    shape: float
    scale: float
    """Weibull inter-arrival times (location 0)."""
    cells: np.ndarray
    """Rows (size, b(p'), b(p)), sorted."""
    probability: np.ndarray
    """Share of the fit set's jobs in each cell."""


def fit_workload(workload: Workload, processors: int) -> Fit:
    """Fit section 7.2's distributions to a trace's jobs with 1 <= size <= M, p > 0, p' > 0
    (zero gaps are left out of the Weibull fit)."""
    from scipy.stats import weibull_min

    keep = (
        (workload.size >= 1)
        & (workload.size <= processors)
        & (workload.runtime > 0)
        & (workload.estimate > 0)
    )
    if keep.sum() < 3:
        raise ValueError("the fit trace has fewer than 3 jobs with a size, runtime and estimate")
    submit = np.sort(workload.submit[keep])
    gaps = np.diff(submit)
    gaps = gaps[gaps > 0]
    if len(gaps) < 2:
        raise ValueError("the fit trace has fewer than 2 positive inter-arrival times")
    shape, _, scale = weibull_min.fit(gaps, floc=0)
    rows = np.stack(
        [
            workload.size[keep],
            time_bin(workload.estimate[keep]),
            time_bin(workload.runtime[keep]),
        ],
        axis=1,
    )
    cells, counts = np.unique(rows, axis=0, return_counts=True)
    return Fit(float(shape), float(scale), cells, counts / counts.sum())


def _in_bins(bins: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    low = np.where(bins == 0, 0.0, np.exp2(bins.astype(np.float64)))
    return rng.uniform(low, np.exp2(bins + 1.0))


def probabilistic(fit: Fit, jobs: int, processors: int, rng: np.random.Generator) -> Workload:
    """``jobs`` jobs drawn from ``fit``: gaps, cells, p', p in that order; p <- min(p, p')."""
    gap = fit.scale * rng.weibull(fit.shape, size=jobs - 1)
    cell = rng.choice(len(fit.cells), size=jobs, p=fit.probability)
    chosen = fit.cells[cell]
    estimate = _in_bins(chosen[:, 1], rng)
    runtime = np.minimum(_in_bins(chosen[:, 2], rng), estimate)
    submit = np.concatenate([[0.0], np.cumsum(gap)])
    return from_arrays(submit, chosen[:, 0], runtime, estimate, processors=processors)
