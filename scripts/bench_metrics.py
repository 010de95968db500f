"""A campaign of many metrics: `campaign run` and a one-metric `campaign query`, per count.

A model written beside the specs returns M metrics (``m00000``, ...) per task; a campaign of
one cell and 2 replicates runs it on the embedded cluster with one worker (`campaign run
--quiet`: running, reading the ledger, assembling, summarising, writing results.nc and the
summary it prints), then `campaign query OUT --metric m00000` reads the file and tabulates
one metric, `campaign query OUT --format csv` every metric, and `campaign status SPEC` reads
the ledger. Each command is a fresh process, so
the figures include Python's start (about a second) and, for run, the cluster's. Each time is
CPU seconds (user and system, of the command and the processes it waited for), which other
work on a shared machine does not inflate as it does wall time (also printed, last). Beside
each is the growth exponent from the previous count: log(t / t_prev) / log(M / M_prev), about
1 for a step linear in the number of metrics and 2 for a quadratic one.

Usage: ``python scripts/bench_metrics.py [--metrics 100 500 1000 2000 5000]
[--replicates 2]``.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODEL = """
import numpy as np


def run(params, seed):
    values = np.random.default_rng(seed).random(int(params["metrics"]))
    return {f"m{i:05d}": float(v) for i, v in enumerate(values)}
"""

SPEC = """
name: metrics-{metrics}
model: many_metrics:run
params:
  metrics: {metrics}
factors:
  kind: [a]
replicates: {replicates}
seed: 1
output: out-{metrics}
"""


def timed(folder: Path, *args: str) -> tuple[float, float]:
    """CPU and wall seconds of one `campaign` command."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "campaign.cli", *args],
        cwd=folder,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def measure(folder: Path, metrics: int, replicates: int) -> dict[str, tuple[float, float]]:
    spec = folder / f"metrics-{metrics}.yaml"
    spec.write_text(SPEC.format(metrics=metrics, replicates=replicates))
    run = timed(folder, "run", str(spec), "--workers", "1", "--quiet")
    out = str(folder / f"out-{metrics}")
    query = timed(folder, "query", out, "--metric", "m00000")
    every = timed(folder, "query", out, "--format", "csv")
    status = timed(folder, "status", str(spec))
    return {"run": run, "query": query, "all": every, "status": status}


def exponent(now: float, before: float | None, size: int, size_before: int | None) -> str:
    if before is None or size_before is None:
        return ""
    return f"{math.log(now / before) / math.log(size / size_before):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=int, nargs="+", default=[100, 500, 1000, 2000, 5000])
    parser.add_argument("--replicates", type=int, default=2)
    args = parser.parse_args()
    steps = ("run", "query", "all", "status")
    print(
        f"1 cell x {args.replicates} replicates; CPU seconds, growth exponent from the row "
        "above; wall seconds"
    )
    header = "".join(f" {step:>8} {'exp':>5}" for step in steps)
    print(f"{'metrics':>8}{header}   wall: {' '.join(f'{step:>7}' for step in steps)}", flush=True)
    previous: dict[str, tuple[float, float]] = {}
    previous_size = None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "many_metrics.py").write_text(MODEL)
        for metrics in args.metrics:
            row = measure(folder, metrics, args.replicates)
            cells = ""
            for step in steps:
                before = previous[step][0] if previous else None
                growth = exponent(row[step][0], before, metrics, previous_size)
                cells += f" {row[step][0]:>8.2f} {growth:>5}"
            walls = " ".join(f"{row[step][1]:>7.2f}" for step in steps)
            print(f"{metrics:>8}{cells}         {walls}", flush=True)
            previous, previous_size = row, metrics
    print(
        "run: campaign run --quiet (cluster start included); query: --metric m00000; "
        "all: query --format csv (every metric)"
    )


if __name__ == "__main__":
    main()
