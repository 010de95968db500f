"""The rigid-job workload a simulation replays, and the shaping applied before it runs.

A :class:`Workload` holds one array per job attribute (sorted by submit time, ties in input
order), so the simulator and the metrics never look at SWF details. Shaping (a slice by
jobs or days after a warm-up, a window start drawn from the seed, a load factor) is a pure
function of the workload and the workload random stream.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from campaign.models.rigid.swf import SwfTrace, clean_mask, job_sizes

DAY = 86400.0


@dataclass(frozen=True)
class Workload:
    """Jobs as columns: submit r (s), size (processors), runtime p (s), estimate p' (s).

    ``estimate`` is the user's requested time; ``nan`` where the trace does not know it.
    ``job_id`` is the trace's job number (or 1..n), kept to report schedules per job.
    ``ops``: operations each allocated core executes (datacenter workloads, datacenter.md
    section 2); None when the runtime is all that is known. ``unknown_runtime`` marks the
    jobs whose trace did not know their run time (replayed as 0 s); None when all are known.
    """

    submit: np.ndarray
    size: np.ndarray
    runtime: np.ndarray
    estimate: np.ndarray
    user: np.ndarray
    job_id: np.ndarray
    processors: int | None = None
    ops: np.ndarray | None = None
    unknown_runtime: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.submit)

    def take(self, index: np.ndarray | slice) -> Workload:
        """The jobs at ``index`` (positions or a mask), in the same order."""
        return replace(
            self,
            submit=self.submit[index],
            size=self.size[index],
            runtime=self.runtime[index],
            estimate=self.estimate[index],
            user=self.user[index],
            job_id=self.job_id[index],
            ops=None if self.ops is None else self.ops[index],
            unknown_runtime=None if self.unknown_runtime is None else self.unknown_runtime[index],
        )

    @property
    def unknown_runtimes(self) -> int:
        """Jobs whose trace did not know their run time (replayed as 0 s)."""
        return 0 if self.unknown_runtime is None else int(np.count_nonzero(self.unknown_runtime))

    def rebased(self) -> Workload:
        """Shift submit times so that the first job arrives at time 0."""
        if len(self) == 0:
            return self
        return replace(self, submit=self.submit - self.submit[0])


def from_arrays(
    submit,
    size,
    runtime,
    estimate=None,
    user=None,
    job_id=None,
    processors: int | None = None,
    ops=None,
) -> Workload:
    """Build a workload from plain sequences (tests, generators), sorted by submit time."""
    submit = np.asarray(submit, dtype=np.float64)
    n = len(submit)
    workload = Workload(
        submit=submit,
        size=np.asarray(size, dtype=np.int64),
        runtime=np.asarray(runtime, dtype=np.float64),
        estimate=(
            np.full(n, np.nan) if estimate is None else np.asarray(estimate, dtype=np.float64)
        ),
        user=np.ones(n, dtype=np.int64) if user is None else np.asarray(user, dtype=np.int64),
        job_id=(
            np.arange(1, n + 1, dtype=np.int64)
            if job_id is None
            else np.asarray(job_id, dtype=np.int64)
        ),
        processors=processors,
        ops=None if ops is None else np.asarray(ops, dtype=np.float64),
    )
    return workload.take(np.argsort(workload.submit, kind="stable"))


def from_trace(
    trace: SwfTrace, clean: bool = False, processors: int | None = None
) -> tuple[Workload, dict[str, int]]:
    """The workload of an SWF trace and the number of jobs dropped per reason.

    Without ``clean``, every job with a positive size is replayed (as peer simulators do); an
    unknown run time (negative: SWF writes -1) counts as 0 s, and ``unknown_runtime`` marks
    those jobs so that runs report how many they replayed. Jobs wider than the site can never
    run and are always dropped (``too_wide``).
    """
    size = job_sizes(trace)
    if clean:
        keep, counts = clean_mask(trace)
    else:
        keep = size > 0
        counts = {"size": int((~keep).sum())}
    site = processors if processors is not None else trace.max_procs
    too_wide = keep & (size > site) if site is not None else np.zeros_like(keep)
    counts["too_wide"] = int(too_wide.sum())
    keep &= ~too_wide
    requested = trace["requested_time"][keep]
    runtime = trace["run_time"][keep]
    workload = Workload(
        submit=trace["submit_time"][keep].astype(np.float64),
        size=size[keep].astype(np.int64),
        runtime=np.maximum(runtime, 0.0),
        estimate=np.where(requested > 0, requested, np.nan),
        user=trace["user_id"][keep].astype(np.int64),
        job_id=trace["job_number"][keep].astype(np.int64),
        processors=site,
        unknown_runtime=runtime < 0,
    )
    return workload.take(np.argsort(workload.submit, kind="stable")), counts


def drop_warmup(workload: Workload, warmup_days: float) -> Workload:
    """Drop the jobs submitted during the first ``warmup_days`` days of the trace."""
    if warmup_days <= 0 or len(workload) == 0:
        return workload
    start = workload.submit[0] + warmup_days * DAY
    return workload.take(workload.submit >= start)


def window(
    workload: Workload,
    jobs: int | None = None,
    days: float | None = None,
    start: str = "start",
    rng: np.random.Generator | None = None,
) -> Workload:
    """A contiguous slice of ``jobs`` jobs or ``days`` days.

    ``start="start"`` takes the first ones; ``"random"`` draws the first job uniformly among
    the positions where a full window fits (from ``rng``, the workload stream), so replicates
    of one trace replay different real periods.
    """
    n = len(workload)
    if jobs is None and days is None:
        return workload
    if days is None and 0 < n < int(jobs):  # fewer would run; a random window never moves
        raise ValueError(
            f"parameter 'jobs' {int(jobs)}: only {n} jobs are left to simulate (after cleaning "
            "and the warm-up, offsets or skips); ask for at most that, or leave 'jobs' out to "
            "simulate them all"
        )
    if start not in ("start", "random"):
        raise ValueError(f"window start must be 'start' or 'random', got {start!r}")
    if days is not None:
        ends = np.searchsorted(workload.submit, workload.submit + days * DAY, side="left")
        full = np.flatnonzero(workload.submit + days * DAY <= workload.submit[-1]) if n else []
        last_first = int(full[-1]) if len(full) else 0
    else:
        last_first = max(n - int(jobs), 0)
    first = 0
    if start == "random":
        if rng is None:
            raise ValueError("a random window needs the workload random stream")
        first = int(rng.integers(0, last_first + 1))
    if days is not None:
        stop = int(ends[first]) if n else 0
        if jobs is not None:
            stop = min(stop, first + int(jobs))
    else:
        stop = min(first + int(jobs), n)
    return workload.take(slice(first, stop))


def scale_load(workload: Workload, load: float) -> Workload:
    """Divide every inter-arrival time by ``load`` (load > 1 packs jobs closer together)."""
    if load <= 0:
        raise ValueError(f"parameter 'load' must be > 0, got {load}")
    if load == 1.0 or len(workload) == 0:
        return workload
    origin = workload.submit[0]
    return replace(workload, submit=origin + (workload.submit - origin) / load)


def estimates_from_runtime(
    workload: Workload,
    accuracy: float | None = None,
    noise: float | None = None,
    rng: np.random.Generator | None = None,
) -> Workload:
    """Replace the user estimates by EET = accuracy * p, or by p * U(1, noise) drawn from
    ``rng`` (the estimates stream): the estimate-accuracy factor of datacenter.md section 2.
    p is the workload's runtime (on a reference core for a core-level platform)."""
    if (accuracy is None) == (noise is None):
        raise ValueError("give exactly one of an estimate accuracy or an estimate noise")
    if accuracy is not None:
        return replace(workload, estimate=accuracy * workload.runtime)
    if rng is None:
        raise ValueError("noisy estimates need the estimates random stream")
    return replace(workload, estimate=workload.runtime * rng.uniform(1.0, noise, len(workload)))
