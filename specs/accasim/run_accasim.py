#!/usr/bin/env python3
"""Run AccaSim (https://pypi.org/project/accasim/) on the first jobs of an SWF trace.

The program a command model runs (specs/accasim-fifo.yaml): it simulates one homogeneous
cluster of one-core nodes, as many as the trace's MaxProcs (or --processors), with one of
AccaSim's dispatchers, prints a JSON object of metrics on stdout and writes every job's times
to starts.csv (job, submit, start, end; seconds on the trace's clock) in the current folder.

AccaSim's conventions, kept as they are: a job's run time is the trace's field 4 (jobs never
killed at their estimate), its size is the requested processors (field 8) when known, else the
allocated ones (field 5), a job wider than the cluster is rejected, times are whole seconds and
jobs ending at t free their nodes before the jobs of t are dispatched. Its log goes to stderr.

AccaSim 1.1.3 imports ``collections.Mapping``, which Python 3.10 removed: the alias is restored
before it is imported (the only change made to it here).
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import contextlib
import csv
import gzip
import json
import os
import sys
from pathlib import Path

collections.Mapping = collections.abc.Mapping  # for accasim.utils.misc on Python >= 3.10

from accasim.base.additional_data import AdditionalData  # noqa: E402
from accasim.base.allocator_class import BestFit, FirstFit  # noqa: E402
from accasim.base.scheduler_class import (  # noqa: E402
    EASYBackfilling,
    FirstInFirstOut,
    LongestJobFirst,
    ShortestJobFirst,
)
from accasim.base.simulator_class import Simulator  # noqa: E402

DISPATCHERS = {
    "FIFO": FirstInFirstOut,
    "SJF": ShortestJobFirst,
    "LJF": LongestJobFirst,
    "EBF": EASYBackfilling,
}
ALLOCATORS = {"FF": FirstFit, "BF": BestFit}
TAU = 10.0
"""Bounded slowdown's floor on the run time, in seconds."""


class Finished(AdditionalData):
    """Collects every job AccaSim completes, with its times."""

    def __init__(self, event_manager=None):
        super().__init__(event_manager)
        self.jobs: list[tuple[str, int, int, int]] = []

    def exec_after_completion(self, removed_jobs):
        for job in removed_jobs:
            self.jobs.append((job.id, job.queued_time, job.start_time, job.end_time))

    def exec_before_dispatching(self, job_dict, queued_jobs):
        pass

    def exec_after_dispatching(self, job_dict, to_dispatch_jobs, rejected_jobs):
        pass

    def exec_before_submission(self, *args, **kwargs):
        pass

    def exec_after_submission(self, *args, **kwargs):
        pass

    def exec_before_completion(self, *args, **kwargs):
        pass

    def stop(self):
        pass


def read_lines(path: Path) -> list[str]:
    """The text lines of an SWF file, plain or gzipped."""
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as stream:
        return stream.read().splitlines()


def max_procs(lines: list[str]) -> int | None:
    """The trace's MaxProcs header (else MaxNodes), or None."""
    found = {}
    for line in lines:
        key, sep, value = line.lstrip(";").partition(":")
        if line.startswith(";") and sep and key.strip() in ("MaxProcs", "MaxNodes"):
            try:
                found.setdefault(key.strip(), int(float(value.split()[0])))
            except (ValueError, IndexError):
                continue
    procs = found.get("MaxProcs", -1)
    return procs if procs > 0 else found.get("MaxNodes")


def without_memory(line: str) -> str:
    """A job line with its memory fields (7: used, 10: requested) unknown.

    The cluster has cores only; AccaSim 1.1.3 fails (KeyError 'mem') on a trace whose first
    job gives no memory and a later one does.
    """
    fields = line.split()
    if len(fields) >= 10:
        fields[6] = fields[9] = "-1"
    return " ".join(fields)


def write_slice(lines: list[str], jobs: int | None, path: Path) -> int:
    """The first ``jobs`` job lines (all when None) as a plain SWF file AccaSim reads."""
    body = [line for line in lines if line.strip() and not line.lstrip().startswith(";")]
    body = body[:jobs] if jobs is not None else body
    path.write_text("".join(without_memory(line) + "\n" for line in body))
    return len(body)


def write_system(processors: int, path: Path) -> None:
    """AccaSim's system configuration: ``processors`` nodes of one core each."""
    config = {"groups": {"node": {"core": 1}}, "resources": {"node": processors}}
    path.write_text(json.dumps(config))


def simulate(
    workload: Path, system: Path, dispatcher: str, allocator: str, seed: int, results: Path
) -> tuple[list[tuple[str, int, int, int]], int]:
    """Every completed job's (id, submit, start, end) and the number of rejected jobs."""
    scheduler = DISPATCHERS[dispatcher](ALLOCATORS[allocator](seed), seed)
    simulator = Simulator(
        str(workload),
        str(system),
        scheduler,
        additional_data=[Finished],
        RESULTS_FOLDER_PATH=str(results),
        scheduling_output=False,
        statistics_output=False,
        show_statistics=False,
        LOG_LEVEL="WARNING",
    )
    with contextlib.redirect_stdout(sys.stderr):  # stdout carries only the metrics
        simulator.start_simulation()
    (finished,) = simulator.mapper.additional_data
    return finished.jobs, simulator.rejected_jobs


def metrics(jobs: list[tuple[str, int, int, int]], rejected: int) -> dict[str, float]:
    """Per-run metrics from the jobs' times (seconds, or 1 for counts and ratios)."""
    waits = [start - submit for _, submit, start, _ in jobs]
    runs = [end - start for _, _, start, end in jobs]
    bsld = [max(1.0, (w + r) / max(r, TAU)) for w, r in zip(waits, runs, strict=True)]
    n = len(jobs)
    return {
        "jobs_run": float(n),
        "jobs_rejected": float(rejected),
        "mean_wait": sum(waits) / n if n else float("nan"),
        "max_wait": float(max(waits)) if n else float("nan"),
        "mean_bsld": sum(bsld) / n if n else float("nan"),
        "makespan": float(max(j[3] for j in jobs) - min(j[1] for j in jobs)) if n else 0.0,
    }


def write_starts(jobs: list[tuple[str, int, int, int]], path: Path) -> None:
    """starts.csv: one row per job, in the trace's order of job numbers."""
    with open(path, "w", newline="") as stream:
        out = csv.writer(stream)
        out.writerow(["job", "submit", "start", "end"])
        for row in sorted(jobs, key=lambda job: int(job[0])):
            out.writerow(row)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", required=True, type=Path, help="SWF file, plain or gzipped")
    parser.add_argument("--jobs", type=int, default=None, help="the first N jobs (default: all)")
    parser.add_argument("--dispatcher", choices=sorted(DISPATCHERS), default="FIFO")
    parser.add_argument("--allocator", choices=sorted(ALLOCATORS), default="FF")
    parser.add_argument("--processors", type=int, default=None, help="default: MaxProcs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--starts", type=Path, default=Path("starts.csv"))
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    lines = read_lines(args.trace)
    processors = args.processors or max_procs(lines)
    if not processors or processors < 1:
        parser.error(f"{args.trace} has no MaxProcs header: give --processors")
    work = Path(os.getcwd()) / "accasim"
    work.mkdir(exist_ok=True)
    workload = work / "workload.swf"
    if write_slice(lines, args.jobs, workload) == 0:
        parser.error(f"{args.trace} has no job line")
    system = work / "system.json"
    write_system(processors, system)
    jobs, rejected = simulate(workload, system, args.dispatcher, args.allocator, args.seed, work)
    write_starts(jobs, args.starts)
    print(json.dumps(metrics(jobs, rejected)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
