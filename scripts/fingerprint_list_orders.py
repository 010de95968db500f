"""Fingerprints of the list policies' schedules on whole traces: for each trace and each
order x mode (x weight, x kill rule), a sha256 over every job's start and end (float64 bytes)
and the jobs_backfilled and orders_computed counts. A change meant only to make a policy
faster must leave every fingerprint as it was:

    python scripts/fingerprint_list_orders.py --save before.json     # before the change
    python scripts/fingerprint_list_orders.py --check before.json    # after: exit 1 if any differs
    python scripts/fingerprint_list_orders.py --modes conservative --orders psrs --jobs 20000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np

from campaign.models.jobs import build_workload, parse
from campaign.models.rigid.simulate import run_schedule

TRACES = ("KTH-SP2-1996-2.1-cln.swf.gz", "HPC2N-2002-2.1-cln.swf.gz")
ORDERS = ("fcfs", "psrs", "smart_ffia", "smart_nfiw")
MODES = ("none", "easy", "conservative", "greedy")


def fingerprint(workload, processors: int, params: dict, kill: bool) -> str:
    policy, options = parse({"workload": "synthetic", **params}).policy()
    schedule = run_schedule(workload, processors, policy, "user", kill, options=options)
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(schedule.start, dtype=np.float64).tobytes())
    digest.update(np.ascontiguousarray(schedule.end, dtype=np.float64).tobytes())
    digest.update(f"{schedule.jobs_backfilled} {schedule.orders_computed}".encode())
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", nargs="+", default=list(TRACES))
    parser.add_argument("--orders", nargs="+", default=list(ORDERS))
    parser.add_argument("--modes", nargs="+", default=list(MODES))
    parser.add_argument("--weights", nargs="+", default=["unit"])
    parser.add_argument("--kill", nargs="+", default=["true"], choices=["true", "false"])
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs (default: all)")
    parser.add_argument("--save", help="write the fingerprints to this JSON file")
    parser.add_argument("--check", help="compare with the fingerprints in this JSON file")
    args = parser.parse_args()
    known = {}
    if args.check:
        with open(args.check) as handle:
            known = json.load(handle)
    found = {}
    differ = 0
    for trace in args.traces:
        params = {"trace": trace}
        if args.jobs:
            params["jobs"] = args.jobs
        workload, processors, _ = build_workload(parse(params), np.random.SeedSequence(0).spawn(5))
        for order in args.orders:
            for mode in args.modes:
                for weight in args.weights:
                    for kill in args.kill:
                        cell = {"order": order, "backfill": mode, "weight": weight}
                        key = f"{trace} {order} {mode} {weight} kill={kill} jobs={args.jobs}"
                        begin = time.process_time()
                        found[key] = fingerprint(workload, processors, cell, kill == "true")
                        took = time.process_time() - begin
                        verdict = ""
                        if key in known:
                            same = known[key] == found[key]
                            differ += not same
                            verdict = "same" if same else "DIFFERS"
                        print(f"{key:<70} {found[key][:16]} {took:8.2f} s {verdict}", flush=True)
    if args.save:
        with open(args.save, "w") as handle:
            json.dump(found, handle, indent=1, sort_keys=True)
    if args.check:
        missing = [key for key in found if key not in known]
        print(f"{differ} differ, {len(found) - differ - len(missing)} same, {len(missing)} new")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
