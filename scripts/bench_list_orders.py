"""Speed of the list orders and of PFCFS against FCFS with the same backfilling mode, in the
same run, on whole traces: for each trace, each order x mode's CPU time (time.process_time of
the simulation alone, the workload built once) and its ratio to FCFS with that mode; PFCFS
presets against FCFS without backfilling. The goal: no ratio above 3.

Every cell, FCFS included, is timed the same way: the best of ``--repeats`` runs, each after a
full garbage collection, so that neither side pays for the other's garbage or for a cold
start (an FCFS run takes well under a tenth of a second on KTH-SP2).

    python scripts/bench_list_orders.py                       # KTH-SP2 and HPC2N, all cells
    python scripts/bench_list_orders.py --traces KTH-SP2-1996-2.1-cln.swf.gz --jobs 10000
    python scripts/bench_list_orders.py --only pfcfs          # the PFCFS rows alone
"""

from __future__ import annotations

import argparse
import gc
import os
import time

import numpy as np

from campaign.models.jobs import build_workload, parse
from campaign.models.rigid.simulate import run_schedule

ORDERS = ("fcfs", "psrs", "smart_ffia", "smart_nfiw")
MODES = ("none", "easy", "conservative", "greedy")
PRESETS = ("pfcfs1", "pfcfs2", "pfcfs3", "theory")


def timed(workload, processors: int, params: dict, repeats: int) -> float:
    """CPU seconds of one simulation: the best of ``repeats`` runs, each after a collection."""
    policy, options = parse({"workload": "synthetic", **params}).policy()
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        begin = time.process_time()
        run_schedule(workload, processors, policy, "user", True, options=options)
        best = min(best, time.process_time() - begin)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--traces", nargs="+", default=["KTH-SP2-1996-2.1-cln.swf.gz", "HPC2N-2002-2.1-cln.swf.gz"]
    )
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per cell, the best kept")
    parser.add_argument("--only", choices=("orders", "pfcfs"), help="one group of rows")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"cpu s: the best of {args.repeats} runs per cell, each after a full collection")
    repeats = args.repeats
    for trace in args.traces:
        params = {"trace": trace}
        if args.jobs:
            params["jobs"] = args.jobs
        workload, processors, _ = build_workload(parse(params), np.random.SeedSequence(0).spawn(5))
        print(f"\n{trace}: {len(workload)} jobs, {processors} processors")
        print(f"{'order':<12}{'mode':<14}{'cpu s':>9}{'x fcfs':>9}")
        worst = 0.0
        for mode in MODES if args.only != "pfcfs" else ():
            base = timed(workload, processors, {"order": "fcfs", "backfill": mode}, repeats)
            print(f"{'fcfs':<12}{mode:<14}{base:9.2f}{1.0:9.2f}")
            for order in ORDERS[1:]:
                took = timed(workload, processors, {"order": order, "backfill": mode}, repeats)
                worst = max(worst, took / base)
                print(f"{order:<12}{mode:<14}{took:9.2f}{took / base:9.2f}")
        if args.only != "orders":
            base = timed(workload, processors, {"scheduler": "fcfs"}, repeats)
            print(f"{'fcfs':<12}{'(scheduler)':<14}{base:9.3f}{1.0:9.2f}")
            for preset in PRESETS:
                params = {"scheduler": "pfcfs", "pfcfs_preset": preset}
                took = timed(workload, processors, params, repeats)
                worst = max(worst, took / base)
                print(f"{'pfcfs':<12}{preset:<14}{took:9.3f}{took / base:9.2f}")
        print(f"worst ratio {worst:.2f}")


if __name__ == "__main__":
    main()
