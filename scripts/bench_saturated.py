"""Growth of every policy's cost with the number of jobs on a saturated queue: the randomized
workload of ``specs/list-orders-randomized.yaml`` (every attribute uniform, 256 processors,
users' estimates, jobs killed at their estimate) at 1,000 to 10,000 jobs, every scheduler and
every list order x backfilling mode. For each cell: the CPU seconds (time.process_time of the
simulation alone, the workload built before, after an untimed run of 200 jobs that compiles
any numba kernel) at each size, the growth exponent between the
two sizes given by ``--span`` (log of the time ratio over log of the size ratio) and a sha256
of every job's start and end.

``--ref COMMIT`` runs the same cells on that commit's code (checked out in a temporary git
worktree under /tmp and imported through PYTHONPATH in a subprocess), cell by cell back to
back with this checkout's, and prints both side by side with whether every schedule is the
same job by job. A run over ``--cap`` CPU seconds is stopped (``> cap``) and the cell's larger
sizes are skipped. ``--repeat N`` runs each side N times, alternating with the other, and keeps
each size's fastest run (the CPU time of the same run varies by about 20% on a shared machine);
the schedules of every repeat must be the same to the last bit.

    python scripts/bench_saturated.py                                  # every cell, this code
    python scripts/bench_saturated.py --ref HEAD~3 --cap 60            # before and after
    python scripts/bench_saturated.py --ref HEAD~3 --repeat 3 --cells conservative
    python scripts/bench_saturated.py --cells conservative psrs/conservative --sizes 2000 4000
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (1000, 2000, 4000, 8000, 10000)
SCHEDULERS = ("fcfs", "easy", "conservative", "accasim_easy", "sjf", "random", "pfcfs")
ORDERS = ("fcfs", "psrs", "smart_ffia", "smart_nfiw")
MODES = ("none", "easy", "conservative", "greedy")
ROOT = Path(__file__).resolve().parent.parent


def all_cells() -> list[str]:
    """Every scheduler, then every order/mode not already a scheduler (fcfs with none, easy
    or conservative is the scheduler of that name)."""
    cells = list(SCHEDULERS)
    for order in ORDERS:
        for mode in MODES:
            if order != "fcfs" or mode == "greedy":
                cells.append(f"{order}/{mode}")
    return cells


def cell_params(cell: str) -> dict:
    if "/" in cell:
        order, mode = cell.split("/")
        return {"order": order, "backfill": mode}
    return {"scheduler": cell}


class OverCap(Exception):
    pass


def _over_cap(signum, frame):
    raise OverCap


def measure(cell: str, sizes: list[int], cap: float, seed: int) -> list[dict]:
    """Run ``cell`` at each size in turn with the ``campaign`` package on sys.path; a run
    over ``cap`` CPU seconds stops the cell."""
    import numpy as np

    from campaign.models.jobs import build_workload, parse
    from campaign.models.rigid.simulate import run_schedule

    signal.signal(signal.SIGPROF, _over_cap)
    # A first small run untimed: a compiled kernel (numba) compiles or loads at its first call.
    params = parse({"workload": "randomized", "jobs": 200, **cell_params(cell)})
    streams = np.random.SeedSequence(seed).spawn(5)
    workload, processors, _ = build_workload(params, streams)
    policy, options = params.policy()
    run_schedule(
        workload, processors, policy, "user", True, rng=np.random.default_rng(0), options=options
    )
    rows = []
    for n in sizes:
        params = parse({"workload": "randomized", "jobs": n, **cell_params(cell)})
        streams = np.random.SeedSequence(seed).spawn(5)
        workload, processors, _ = build_workload(params, streams)
        policy, options = params.policy()
        rng = np.random.default_rng(streams[3])
        gc.collect()
        begin = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, cap)
        try:
            schedule = run_schedule(
                workload, processors, policy, "user", True, rng=rng, options=options
            )
        except OverCap:
            rows.append({"cell": cell, "jobs": n, "seconds": None, "sha": None})
            break
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        took = time.process_time() - begin
        digest = hashlib.sha256()
        digest.update(np.ascontiguousarray(schedule.start, dtype=np.float64).tobytes())
        digest.update(np.ascontiguousarray(schedule.end, dtype=np.float64).tobytes())
        rows.append({"cell": cell, "jobs": n, "seconds": took, "sha": digest.hexdigest()})
    return rows


def run_in(tree: Path, cell: str, sizes: list[int], cap: float, seed: int) -> dict[int, dict]:
    """``measure`` in a subprocess importing the ``campaign`` package of ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, __file__, "--measure", cell, "--sizes", *map(str, sizes)]
    command += ["--cap", str(cap), "--seed", str(seed)]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return {row["jobs"]: row for row in json.loads(out)}


def fastest(runs: list[dict[int, dict]]) -> dict[int, dict]:
    """Per size, the fastest of the repeated runs (over the cap only if every run was); the
    schedules must not differ between repeats."""
    rows: dict[int, dict] = {}
    for run in runs:
        for n, row in run.items():
            kept = rows.setdefault(n, dict(row))
            if row["sha"] and kept["sha"] and row["sha"] != kept["sha"]:
                raise SystemExit(f"{row['cell']} at {n} jobs: the schedule differs between repeats")
            if row["seconds"] is not None and (
                kept["seconds"] is None or row["seconds"] < kept["seconds"]
            ):
                rows[n] = dict(row)
    return rows


def exponent(rows: dict[int, dict], low: int, high: int) -> float | None:
    a, b = rows.get(low), rows.get(high)
    if low == high or not a or not b or a["seconds"] is None or b["seconds"] is None:
        return None
    return math.log(max(b["seconds"], 1e-6) / max(a["seconds"], 1e-6)) / math.log(high / low)


def text(rows: dict[int, dict], n: int, cap: float) -> str:
    row = rows.get(n)
    if row is None:
        return "-"
    return f"> {cap:g}" if row["seconds"] is None else f"{row['seconds']:.2f}"


def ref_tree(commit: str) -> tuple[Path, Path]:
    """A temporary worktree of ``commit`` (and the folder holding it)."""
    holder = Path(tempfile.mkdtemp(prefix="bench-saturated-"))
    tree = holder / "ref"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), commit],
        check=True,
        capture_output=True,
    )
    return holder, tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=all_cells(), help="schedulers, order/mode")
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--cap", type=float, default=120.0, help="CPU seconds per run at most")
    parser.add_argument("--span", nargs=2, type=int, default=[2000, 8000], help="exponent span")
    parser.add_argument("--seed", type=int, default=0, help="the workload's seed")
    parser.add_argument("--ref", help="also run this commit's code, side by side")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per side and size, alternating; the fastest"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        json.dump(measure(args.measure, args.sizes, args.cap, args.seed), sys.stdout)
        return
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))  # remove the worktree
    sizes = sorted(args.sizes)
    low, high = args.span
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: at least 1 run per side and size")
    per = "per run" if args.repeat == 1 else f"of the fastest of {args.repeat} runs"
    print(f"load average {os.getloadavg()[0]:.2f}; cpu s {per}, cap {args.cap:g} s")
    holder = tree = None
    if args.ref:
        holder, tree = ref_tree(args.ref)
    header = f"{'cell':<24}" + "".join(f"{n:>10}" for n in sizes) + f"{'exp':>7}"
    print(header + ("   schedules" if args.ref else ""))
    trees = ([("ref", tree)] if tree is not None else []) + [("new", ROOT)]
    try:
        for cell in args.cells:
            runs: dict[str, list] = {side: [] for side, _ in trees}
            for _ in range(args.repeat):
                for side, code in trees:
                    runs[side].append(run_in(code, cell, sizes, args.cap, args.seed))
            sides = [(side, fastest(runs[side])) for side, _ in trees]
            for side, rows in sides:
                power = exponent(rows, low, high)
                line = f"{cell + ' ' + side if tree else cell:<24}"
                line += "".join(f"{text(rows, n, args.cap):>10}" for n in sizes)
                line += f"{power:7.2f}" if power is not None else f"{'-':>7}"
                if side == "new" and tree is not None:
                    ref = sides[0][1]
                    both = [
                        n for n in sizes if rows.get(n, {}).get("sha") and ref.get(n, {}).get("sha")
                    ]
                    same = all(rows[n]["sha"] == ref[n]["sha"] for n in both)
                    shown = ",".join(str(n) for n in both)
                    line += f"   {'same' if same else 'DIFFER'} at {shown or 'none'}"
                print(line, flush=True)
    finally:
        if tree is not None:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                check=False,
                capture_output=True,
            )
            os.rmdir(holder)


if __name__ == "__main__":
    main()
