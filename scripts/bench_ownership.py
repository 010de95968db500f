"""Time the ownership model on the reference scenarios of its model document (section 8).

Prints, per scenario and policy, the simulated events per run (event-loop steps: task and
owner-load events, submissions and the epochs that can act; epochs that provably cannot act
are skipped), the best time per run over --repeat seeds (the least disturbed by other load on
the machine) and the events per second. Usage:

    python scripts/bench_ownership.py [--repeat N] [--scenario NAME ...] [--owner-load X]
"""

from __future__ import annotations

import argparse
import time

from campaign.models.ownership import run, simulate
from campaign.models.ownership.scenarios import REFERENCE_SCENARIOS

POLICIES = {
    "osep": {"policy": "osep", "maxt": "all"},
    "osep_ckpt": {"policy": "osep_checkpoint", "maxt": "all", "checkpoint_cost_s": 10},
    "fair_share": {"policy": "fair_share", "priority_half_life_s": 3600},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (best)")
    parser.add_argument("--scenario", action="append", choices=sorted(REFERENCE_SCENARIOS))
    parser.add_argument("--owner-load", type=float, default=0.0, help="owner_load of all runs")
    args = parser.parse_args()
    names = args.scenario or list(REFERENCE_SCENARIOS)
    print(f"{'scenario':24} {'policy':10} {'events':>7} {'ms/run':>8} {'events/s':>10}")
    total_events = total_time = 0.0
    for name in names:
        for label, policy in POLICIES.items():
            params = {**REFERENCE_SCENARIOS[name], **policy}
            if args.owner_load:
                params["owner_load"] = args.owner_load
            events = simulate(params, 1)[1].events
            times = []
            for seed in range(args.repeat):
                start = time.perf_counter()
                run(params, seed)
                times.append(time.perf_counter() - start)
            per_run = min(times)
            total_events += events
            total_time += per_run
            print(f"{name:24} {label:10} {events:7d} {per_run * 1e3:8.2f} {events / per_run:10.0f}")
    print(f"all: {total_events / total_time:.0f} events/s over {total_time:.3f} s of best runs")


if __name__ == "__main__":
    main()
