"""Speed of the ``bot`` model: simulator events per second, time per run for representative
cells, and an estimate of a spec's wall time (measured time of every cell x replicates /
workers). Times are CPU seconds of this process (time.process_time), so that other work on a
shared machine inflates them as little as possible; the load average is printed beside them.

    python scripts/bench_bot.py                      # representative cells + bot-full estimate
    python scripts/bench_bot.py --seeds 5 --workers 2 --spec specs/bot-full.yaml
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from pathlib import Path

import yaml

from campaign.models.bot import build
from campaign.models.bot.metrics import summarize
from campaign.models.bot.simulator import Simulator

ROOT = Path(__file__).resolve().parents[1]

HEURISTICS = ("wqr", "xsufferage", "storage_affinity", "workqueue")


def timed_run(params: dict, seed: int) -> tuple[float, float, float, int]:
    """CPU seconds (whole run, in the simulator, of which mapping jobs at release:
    XSufferage's static mapping) and events."""
    start = time.process_time()
    setup = build(params, seed)
    mapping = 0.0
    start_job = setup.heuristic.start_job

    def timed_start_job(sim: Simulator) -> None:
        nonlocal mapping
        begin = time.process_time()
        start_job(sim)
        mapping += time.process_time() - begin

    setup.heuristic.start_job = timed_start_job
    simulator = setup.simulator()
    sim_start = time.process_time()
    result = simulator.run()
    sim_time = time.process_time() - sim_start
    summarize(result)
    return time.process_time() - start, sim_time, mapping, result.events


def representative(seeds: int) -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} cores")
    print(f"CPU time per run, mean over seeds 1..{seeds} (app_heterogeneity 0, visualization)")
    print(
        f"{'heuristic':18} {'grid':>4} {'MiB':>4} {'ms/run':>8} {'mapping':>8} {'events':>8} "
        f"{'events/s':>10}"
    )
    total_events = total_sim = 0.0
    for heuristic, grid, mb in itertools.product(HEURISTICS, (1, 8), (3, 75)):
        params = {"heuristic": heuristic, "grid_heterogeneity": grid, "granularity_mb": mb}
        runs = [timed_run(params, seed) for seed in range(1, seeds + 1)]
        wall = statistics.fmean(r[0] for r in runs)
        mapping = statistics.fmean(r[2] for r in runs)
        events = statistics.fmean(r[3] for r in runs)
        # events per second of the event loop itself, static mapping time excluded
        loop = sum(r[1] - r[2] for r in runs)
        total_events += sum(r[3] for r in runs)
        total_sim += loop
        rate = sum(r[3] for r in runs) / loop
        print(
            f"{heuristic:18} {grid:>3}x {mb:>4} {1000 * wall:8.1f} {1000 * mapping:8.1f} "
            f"{events:8.0f} {rate:10.0f}"
        )
    print(
        f"all representative runs: {total_events / total_sim:,.0f} events/s in the event loop "
        "(ms/run: whole run; mapping: ms preparing jobs at release, XSufferage's static mapping)"
    )


def estimate(spec_path: Path, workers: int) -> None:
    spec = yaml.safe_load(spec_path.read_text())
    names = list(spec["factors"])
    levels = [spec["factors"][name] for name in names]
    cells = list(itertools.product(*levels))
    print(f"\n{spec_path.name}: timing one run of each of its {len(cells)} cells ...")
    by_heuristic: dict[str, float] = {}
    total = 0.0
    start = time.process_time()
    for index, cell in enumerate(cells):
        params = {**spec.get("params", {}), **dict(zip(names, cell, strict=True))}
        seconds = timed_run(params, 1000 + index)[0]
        total += seconds
        key = str(params.get("heuristic"))
        by_heuristic[key] = by_heuristic.get(key, 0.0) + seconds
    measured = time.process_time() - start
    replicates = int(spec["replicates"])
    runs = len(cells) * replicates
    wall = total * replicates / workers
    print(f"{total:.1f} CPU s for one run per cell ({measured:.1f} s with the loop around them)")
    for key, seconds in by_heuristic.items():
        share = len(cells) / len(by_heuristic)
        print(f"  {key:18} {1000 * seconds / share:8.1f} ms per run on average")
    print(
        f"estimate: {runs} runs x {1000 * total / len(cells):.1f} ms / {workers} workers "
        f"= {wall:.0f} s ({wall / 60:.1f} min) of simulation on idle cores, "
        "engine overhead not included"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="runs per representative cell")
    parser.add_argument("--spec", type=Path, default=ROOT / "specs" / "bot-full.yaml")
    parser.add_argument("--workers", type=int, default=2, help="parallel workers (cores)")
    parser.add_argument("--no-estimate", action="store_true", help="skip the spec estimate")
    args = parser.parse_args()
    representative(args.seeds)
    if not args.no_estimate:
        estimate(args.spec, args.workers)


if __name__ == "__main__":
    main()
