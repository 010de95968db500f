"""Time the economic scenario of the grid model (economic.md) and its cost per request as the
schedule grows.

First one whole run of the model (``run(params, seed)``: trace loading, the simulation, the
feasibility check, the metrics), wall and CPU time. Then the same requests again one by one:
per block of requests, the reservations kept when they arrive (the size of the schedule the
offers search), the offers made and the wall and CPU time per request; then the same costs
grouped by the size of the schedule. The load average is printed before and after: on a
shared machine wall time follows it, CPU time much less. Usage:

    CAMPAIGN_WORKLOADS=/path/to/traces python scripts/bench_economic.py \\
        [--trace HPC2N-2002-2.1-cln.swf.gz] [--config m128] [--jobs 10000] [--skip-jobs 10000]
        [--load 2.0] [--mf 1] [--uf 1] [--block 1000] [--check]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from campaign.models.grid import parse, run, schedule
from campaign.models.grid.build import build
from campaign.models.grid.economic import EconomicGrid
from campaign.models.rigid.simulate import job_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="HPC2N-2002-2.1-cln.swf.gz")
    parser.add_argument("--config", default="m128")
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--skip-jobs", type=int, default=10000)
    parser.add_argument("--load", type=float, default=2.0)
    parser.add_argument("--mf", type=int, default=1)
    parser.add_argument("--uf", type=int, default=1)
    parser.add_argument("--block", type=int, default=1000, help="requests per line")
    parser.add_argument(
        "--check", action="store_true", help="also check the step-by-step starts equal the model's"
    )
    args = parser.parse_args()
    params = {
        "trace": args.trace,
        "config": args.config,
        "jobs": args.jobs,
        "skip_jobs": args.skip_jobs,
        "load": args.load,
        "sharing": "economic",
        "mf": args.mf,
        "uf": args.uf,
    }
    print("params:", params)
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    wall, cpu = time.perf_counter(), time.process_time()
    values = run(params, 1)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"whole run: {wall:.1f} s wall, {cpu:.1f} s CPU; {int(values['jobs'])} jobs, "
        f"mean_wait {values['mean_wait']:.1f} s, utilization {values['utilization']:.3f}, "
        f"{int(values['offers_made'])} offers"
    )

    p = parse(params)
    grid_input = build(p, np.random.default_rng(np.random.SeedSequence(1).spawn(5)[0]))
    w = grid_input.workload
    runtime, estimate, _, _ = job_times(w, "user", p.kill_at_estimate)
    options = p.options(grid_input.home.tolist())
    grid = EconomicGrid(
        grid_input.machines,
        w.size.tolist(),
        estimate.tolist(),
        runtime.tolist(),
        grid_input.home.tolist(),
        options.economic,
        options.overhead,
        options.max_parts,
    )
    submit = w.submit.tolist()
    n = len(submit)
    kept = np.zeros(n)
    offers = np.zeros(n)
    walls = np.zeros(n)
    cpus = np.zeros(n)
    starts = np.zeros(n)
    for job in range(n):
        kept[job] = grid.reservations
        before = grid.offers_made
        t0, c0 = time.perf_counter(), time.process_time()
        starts[job] = grid.request(job, submit[job]).start
        walls[job], cpus[job] = time.perf_counter() - t0, time.process_time() - c0
        offers[job] = grid.offers_made - before
    print(f"step by step: {walls.sum():.1f} s wall, {cpus.sum():.1f} s CPU in requests")
    print()
    print(f"{'requests':>13} {'reservations':>12} {'offers':>7} {'ms/request':>10} {'CPU ms':>7}")
    for first in range(0, n, args.block):
        part = slice(first, min(n, first + args.block))
        print(
            f"{first + 1:>6}-{part.stop:<6} {kept[part].mean():12.1f} {offers[part].mean():7.1f} "
            f"{walls[part].mean() * 1e3:10.2f} {cpus[part].mean() * 1e3:7.2f}"
        )
    print()
    print(f"{'reservations':>13} {'requests':>8} {'ms/request':>10} {'CPU ms':>7}")
    edges = np.unique(np.quantile(kept, np.linspace(0, 1, 9)).round())
    bins = np.digitize(kept, edges[1:-1])
    for b in range(len(edges) - 1):
        chosen = bins == b
        if chosen.any():
            low, high = int(kept[chosen].min()), int(kept[chosen].max())
            print(
                f"{low:>6}-{high:<6} {chosen.sum():8d} {walls[chosen].mean() * 1e3:10.2f} "
                f"{cpus[chosen].mean() * 1e3:7.2f}"
            )
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    if args.check:
        same = np.array_equal(starts, schedule(params, 1).start)
        print("step-by-step starts equal the model's:", same)
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
