"""Synthetic rigid parallel jobs: the Lublin-Feitelson workload model.

U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", J. Parallel and Distributed Computing 63(11):1105-1122, 2003.
Parameters are those of the authors' generator (m_lublin99.c), with batch and interactive
jobs (the type of each job is the one whose next arrival comes first):

- size: serial with probability ``serial`` (batch 0.2927, interactive 0.1541); otherwise
  log2(size) ~ two-stage uniform on [ulow, umed] (probability ``uprob``) or [umed, uhi];
  rounded to a power of two with probability ``pow2`` (batch 0.6686, interactive 0.625);
  batch (ulow, umed, uhi, uprob) = (1.2, 5, 7, 0.875), interactive (1, 3, 5.5, 0.705) for
  the model's 128-processor machine. For m processors, umed and uhi are shifted by
  log2(m) - 7 (the paper's rule: uhi = log2 of the machine size) and sizes are capped at m.
- runtime: ln(p) ~ hyper-gamma: Gamma(a1, b1) with probability pr = pa * size + pb (clipped
  to [0, 1]), else Gamma(a2, b2) (shape, scale); batch (6.57, 0.823, 639.1, 0.0156, -0.003,
  0.6986), interactive (3.8351, 0.6605, 7.073, 0.6856, -0.0118, 0.9156); draws of ln(p) > 12
  (about two days) are redrawn.
- arrivals: ln(inter-arrival) ~ Gamma(aarr * arar, barr) at rush hour, batch (6.0415,
  0.8531, arar 1.0519), interactive (6.5510, 0.6621, arar 0.9797), redrawn above 13; a
  daily cycle of 48 half-hour buckets weighted by Gamma(anum, bnum) cdf increments (batch
  (6.1271, 5.2740), interactive (8.9186, 3.6680)), hours cyclically shifted to start at 11;
  the generator starts at midnight.
- arrival times and runtimes are truncated to whole seconds, as in the generator.

The model has no user estimates: p' = p * U(1, ``overestimate``) drawn from the estimates
stream (``overestimate`` = 1 gives exact estimates). All jobs belong to user 1.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammainc

from campaign.models.rigid.workload import Workload, from_arrays

BUCKETS = 48
SECONDS_IN_BUCKET = 86400 // BUCKETS
CYCLIC_DAY_START = 11
TOO_MUCH_TIME = 12.0
TOO_MUCH_ARRIVE_TIME = 13.0

# (serial, pow2, ulow, umed, uhi, uprob, a1, b1, a2, b2, pa, pb, aarr, barr, anum, bnum, arar)
PARAMETERS = {
    "interactive": (0.1541, 0.625, 1.0, 3.0, 5.5, 0.705, 3.8351, 0.6605, 7.073, 0.6856,
                    -0.0118, 0.9156, 6.5510, 0.6621, 8.9186, 3.6680, 0.9797),
    "batch": (0.2927, 0.6686, 1.2, 5.0, 7.0, 0.875, 6.57, 0.823, 639.1, 0.0156,
              -0.003, 0.6986, 6.0415, 0.8531, 6.1271, 5.2740, 1.0519),
}  # fmt: skip


class _Arrivals:
    """The model's arrival process for one job type (daily cycle of bucket weights)."""

    def __init__(self, aarr: float, barr: float, anum: float, bnum: float) -> None:
        self.aarr, self.barr = aarr, barr
        i = np.arange(CYCLIC_DAY_START, BUCKETS + CYCLIC_DAY_START)
        weights = np.empty(BUCKETS)
        # The gamma(anum, scale bnum) distribution's mass in each bucket: its CDF is the
        # regularized incomplete gamma function (what scipy.stats.gamma.cdf computes, without
        # importing scipy.stats at every start of a worker)
        weights[(i - 1) % BUCKETS] = gammainc(anum, (i + 0.5) / bnum) - gammainc(
            anum, (i - 0.5) / bnum
        )
        self.weights = (weights / weights.mean()).tolist()
        self.bucket = 0
        self.points = 0.0
        self.reminder = 0.0
        self.time = 0.0

    def advance(self, rng: np.random.Generator) -> None:
        while True:
            draw = rng.gamma(self.aarr, self.barr)
            if draw <= TOO_MUCH_ARRIVE_TIME:
                break
        self.points += math.exp(draw) / SECONDS_IN_BUCKET
        step = 0.0
        weights = self.weights
        while self.points > weights[self.bucket]:
            self.points -= weights[self.bucket]
            self.bucket = (self.bucket + 1) % BUCKETS
            step += SECONDS_IN_BUCKET
        new_reminder = self.points / weights[self.bucket]
        step += SECONDS_IN_BUCKET * (new_reminder - self.reminder)
        self.reminder = new_reminder
        self.time = float(int(self.time + step))  # the generator keeps whole seconds


def _size(rng: np.random.Generator, p: tuple, shift: float, processors: int) -> int:
    serial, pow2, ulow, umed, uhi, uprob = p[:6]
    umed, uhi = umed + shift, uhi + shift
    ulow = min(ulow, umed)
    u = rng.random()
    if u <= serial:
        return 1
    if rng.random() <= uprob:
        low, high = ulow, umed
    else:
        low, high = umed, uhi
    par = rng.random() * (high - low) + low
    if u <= serial + pow2:
        par = float(int(par + 0.5))
    return max(1, min(int(2.0**par + 0.5), processors))


def _runtime(rng: np.random.Generator, p: tuple, size: int) -> float:
    a1, b1, a2, b2, pa, pb = p[6:12]
    prob = min(max(pa * size + pb, 0.0), 1.0)
    while True:
        shape, scale = (a1, b1) if rng.random() <= prob else (a2, b2)
        draw = rng.gamma(shape, scale)
        if draw <= TOO_MUCH_TIME:
            return float(int(math.exp(draw)))


def lublin_feitelson(
    jobs: int,
    processors: int,
    rng: np.random.Generator,
    estimate_rng: np.random.Generator | None = None,
    overestimate: float = 3.0,
) -> Workload:
    """``jobs`` rigid jobs for a machine of ``processors`` processors, drawn from ``rng``
    (the workload stream); estimates from ``estimate_rng`` (the estimates stream)."""
    if jobs < 0:
        raise ValueError(f"parameter 'jobs' must be >= 0, got {jobs}")
    if overestimate < 1:
        raise ValueError(f"parameter 'overestimate' must be >= 1, got {overestimate}")
    shift = math.log2(processors) - 7.0
    kinds = ("interactive", "batch")
    arrivals = {}
    for kind in kinds:
        p = PARAMETERS[kind]
        arrivals[kind] = _Arrivals(p[12] * p[16], p[13], p[14], p[15])
        arrivals[kind].advance(rng)
    submit, size, runtime = [], [], []
    for _ in range(jobs):
        kind = "batch" if arrivals["batch"].time < arrivals["interactive"].time else "interactive"
        process = arrivals[kind]
        submit.append(process.time)
        process.advance(rng)
        p = PARAMETERS[kind]
        width = _size(rng, p, shift, processors)
        size.append(width)
        runtime.append(_runtime(rng, p, width))
    runtime_array = np.asarray(runtime, dtype=np.float64)
    spread = estimate_rng if estimate_rng is not None else rng
    estimate = np.floor(runtime_array * spread.uniform(1.0, overestimate, jobs))
    estimate = np.maximum(estimate, runtime_array)
    return from_arrays(submit, size, runtime_array, estimate, processors=processors)
