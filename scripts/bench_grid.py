"""Benchmark the grid studies' tasks and conservative backfilling against older code, in one run.

Each side runs in its own fresh process: the current checkout, and the reference commit
(default: the code before the speed-ups) checked out for the run in a temporary detached git
worktree, or a folder that already holds the older code (``--ref-tree``, e.g. made by
``git archive COMMIT | tar -x -C DIR``, which leaves the repository's worktrees alone). Printed
side by side with the load average, since only figures measured in the same
run on the same machine compare:

1. trace loading: the four logs of the pwa4 mix parsed (what every worker does once);
2. grid tasks: full-size ``grid-allocation`` tasks (180 days of the pwa3/pwa4 mixes, one
   replicate's random week offset) under every strategy, and ``grid-history`` tasks (pwa3,
   predicted estimates); seconds per task, the metrics of both sides compared exactly, and the
   study's wall time estimated as (its tasks x the mean seconds per task) / workers + loading;
3. conservative backfilling on the whole HPC2N trace, start times compared job by job.

Usage: python scripts/bench_grid.py [--ref COMMIT | --ref-tree DIR] [--workloads DIR]
[--only allocation,history,conservative] [--configs pwa4,pwa3] [--strategies mlp,mct,...]
[--history-sample N] [--days N] [--rounds N]
(``--days`` shortens the grid tasks' logs from the studies' 180 days, for a quick comparison;
``--rounds`` runs each side N times, alternated, and keeps each measurement's fastest.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = "4908c2e"
"""The code before the broker, trace and backfilling speed-ups."""

STRATEGIES = (
    "random",
    "mlp",
    "mpl",
    "lbal_s",
    "lbal_t",
    "lbal_w",
    "mlb",
    "mct",
    "mwt",
    "mwwt_s",
    "mwwt_t",
    "mwwt_w",
    "mst",
    "mswct_w",
)
HISTORY_STRATEGIES = STRATEGIES[4:]
"""The strategies of grid-history (levels 2 and 3)."""
ALLOCATION_TASKS = len(STRATEGIES) * 2 * 5  # x configs x replicates
HISTORY_TASKS = 10 * 4 * len(HISTORY_STRATEGIES)  # history x match x strategy


def allocation_params(strategy: str, config: str, days: int = 180) -> dict:
    return {
        "days": days,
        "window_offset": "random",
        "local_scheduler": "easy",
        "strategy": strategy,
        "config": config,
    }


def history_params(strategy: str, history: int, match: str, days: int = 180) -> dict:
    return {
        "config": "pwa3",
        "days": days,
        "predictor": "hk",
        "search": 0,
        "local_estimate": "predicted",
        "broker_estimate": "predicted",
        "history": history,
        "match": match,
        "strategy": strategy,
    }


# ---------------------------------------------------------------------- child side
def child(plan_file: str) -> None:
    """Run the plan with the code on PYTHONPATH; print one JSON line per measurement."""
    plan = json.loads(Path(plan_file).read_text())
    from campaign.models.grid import run
    from campaign.models.grid.configs import MIXES, resolve_logs
    from campaign.models.rigid.workloads import load_trace, workloads_folder

    def emit(**record) -> None:
        # A model's samples are arrays: as lists, compared element by element like any value.
        print(json.dumps(record, default=lambda value: value.tolist()), flush=True)

    if plan["grid"]:
        begin, cpu = time.perf_counter(), time.process_time()
        for path in resolve_logs(MIXES["pwa4"], workloads_folder()):
            load_trace(str(path))
        emit(kind="load", seconds=time.perf_counter() - begin, cpu=time.process_time() - cpu)
    for label, params in plan["grid"]:
        begin, cpu = time.perf_counter(), time.process_time()
        values = run(params, plan["seed"])
        seconds = time.perf_counter() - begin
        cpu = time.process_time() - cpu
        emit(kind="task", label=label, seconds=seconds, cpu=cpu, metrics=values)
    if plan["conservative"]:
        from campaign.models.rigid.simulate import run_schedule
        from campaign.models.rigid.swf import read_swf
        from campaign.models.rigid.workload import from_trace

        workload, _ = from_trace(read_swf(Path(workloads_folder()) / plan["conservative"]))
        begin, cpu = time.perf_counter(), time.process_time()
        result = run_schedule(workload, workload.processors, "conservative", "user", True)
        seconds = time.perf_counter() - begin
        cpu = time.process_time() - cpu
        starts = result.start.tolist()
        emit(
            kind="conservative",
            seconds=seconds,
            cpu=cpu,
            jobs=len(starts),
            digest=hashlib.sha256(result.start.tobytes()).hexdigest(),
            start=starts,
        )


# ---------------------------------------------------------------------- driver side
def run_side(checkout: Path, plan_file: Path, workloads: Path) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(checkout), CAMPAIGN_WORKLOADS=str(workloads))
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(plan_file)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{checkout}: the benchmark failed:\n{out.stderr[-3000:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def run_at_commit(ref: str, reference: Path, plan_file: Path, workloads: Path) -> list[dict]:
    """Run the plan with the code of commit ``ref``, checked out in a temporary worktree."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(reference), ref],
        check=True,
        capture_output=True,
    )
    try:
        return run_side(reference, plan_file, workloads)
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(reference)],
            check=False,
            capture_output=True,
        )


def fastest(runs: list[list[dict]]) -> list[dict]:
    """Each measurement at its fastest over the runs of one side (wall and CPU time each)."""
    best = [dict(record) for record in runs[0]]
    for run in runs[1:]:
        for record, other in zip(best, run, strict=True):
            record["seconds"] = min(record["seconds"], other["seconds"])
            record["cpu"] = min(record["cpu"], other["cpu"])
    return best


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--ref", default=REFERENCE, help="commit of the older code")
    parser.add_argument(
        "--ref-tree", type=Path, default=None, help="a folder holding the older code (no --ref)"
    )
    parser.add_argument("--workloads", type=Path, default=None)
    parser.add_argument("--only", default="allocation,history,conservative")
    parser.add_argument("--configs", default="pwa4,pwa3")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--history-sample", type=int, default=4, help="grid-history tasks run")
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument("--days", type=int, default=180, help="days of the grid tasks' logs")
    parser.add_argument(
        "--rounds", type=int, default=1, help="runs of each side, alternated; the fastest kept"
    )
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    from campaign.models.rigid.workloads import workloads_folder

    workloads = args.workloads or workloads_folder()
    only = set(args.only.split(","))
    grid: list[tuple[str, dict]] = []
    if "allocation" in only:
        for config in args.configs.split(","):
            for strategy in args.strategies.split(","):
                grid.append(
                    (
                        f"allocation {config} {strategy}",
                        allocation_params(strategy, config, args.days),
                    )
                )
    if "history" in only:
        # Spread over the design: k, match condition and strategy all vary.
        matches = ("none", "estimate", "size", "both")
        for n in range(args.history_sample):
            strategy = HISTORY_STRATEGIES[(3 * n) % len(HISTORY_STRATEGIES)]
            history, match = 1 + (7 * n) % 10, matches[n % 4]
            grid.append(
                (
                    f"history k={history} {match} {strategy}",
                    history_params(strategy, history, match, args.days),
                )
            )
    plan = {
        "grid": grid,
        "seed": args.seed,
        "conservative": "HPC2N-2002-2.1-cln.swf.gz" if "conservative" in only else None,
    }
    before_name = args.ref_tree or args.ref
    print(f"python {sys.version.split()[0]}; before: {before_name}; now: {ROOT}; {load_text()}")
    with tempfile.TemporaryDirectory() as tmp:
        plan_file = Path(tmp) / "plan.json"
        plan_file.write_text(json.dumps(plan))
        befores, nows = [], []
        for _ in range(args.rounds):  # alternated, so that a change of load hits both sides
            if args.ref_tree is not None:
                befores.append(run_side(args.ref_tree.resolve(), plan_file, workloads))
            else:
                reference = Path(tmp) / "reference"
                befores.append(run_at_commit(args.ref, reference, plan_file, workloads))
            nows.append(run_side(ROOT, plan_file, workloads))
    before, now = fastest(befores), fastest(nows)
    report(before, now, args)
    print(load_text())
    return 0


def report(before: list[dict], now: list[dict], args) -> None:
    def of(records, kind):
        return [r for r in records if r["kind"] == kind]

    if of(now, "load"):
        b, n = of(before, "load")[0], of(now, "load")[0]
        print(
            f"\ntrace loading (4 logs of pwa4): before {b['seconds']:.2f} s, now "
            f"{n['seconds']:.2f} s (x{b['seconds'] / n['seconds']:.2f}); CPU before "
            f"{b['cpu']:.2f} s, now {n['cpu']:.2f} s"
        )
    tasks_b, tasks_n = of(before, "task"), of(now, "task")
    if tasks_n:
        print(
            f"\n{'task':40} {'before s':>9} {'now s':>7} {'speed-up':>8} {'cpu before':>10} "
            f"{'cpu now':>7}  same metrics (those both report)"
        )
        sums = {}
        for b, n in zip(tasks_b, tasks_n, strict=True):
            # Metrics added since the older code have nothing to compare with.
            shared = b["metrics"].keys() & n["metrics"].keys()
            same = all(json.dumps(b["metrics"][k]) == json.dumps(n["metrics"][k]) for k in shared)
            ratio = b["seconds"] / n["seconds"]
            print(
                f"{n['label']:40} {b['seconds']:9.2f} {n['seconds']:7.2f} {ratio:8.2f} "
                f"{b['cpu']:10.2f} {n['cpu']:7.2f}  {same}"
            )
            study = n["label"].split()[0]
            total = sums.setdefault(study, [0.0, 0.0, 0.0, 0.0, 0])
            total[0] += b["seconds"]
            total[1] += n["seconds"]
            total[2] += b["cpu"]
            total[3] += n["cpu"]
            total[4] += 1
        load_b = of(before, "load")[0]
        load_n = of(now, "load")[0]
        for study, (b, n, cpu_b, cpu_n, count) in sums.items():
            if args.days != 180:  # not the studies' tasks: no estimate of their time
                print(
                    f"{study}: {count} tasks, before {b:.1f} s, now {n:.1f} s (x{b / n:.2f}); "
                    f"CPU before {cpu_b:.1f} s, now {cpu_n:.1f} s (x{cpu_b / cpu_n:.2f})"
                )
                continue
            tasks = ALLOCATION_TASKS if study == "allocation" else HISTORY_TASKS
            est_b = (b / count * tasks) / 2 + load_b["seconds"]
            est_n = (n / count * tasks) / 2 + load_n["seconds"]
            cpu_est_b = (cpu_b / count * tasks) / 2 + load_b["cpu"]
            cpu_est_n = (cpu_n / count * tasks) / 2 + load_n["cpu"]
            print(
                f"{study}: {count} tasks, before {b:.1f} s, now {n:.1f} s (x{b / n:.2f}); "
                f"the whole study ({tasks} tasks on 2 workers) estimated at {est_b / 60:.1f} min "
                f"before, {est_n / 60:.1f} min now; from CPU time {cpu_est_b / 60:.1f} min "
                f"before, {cpu_est_n / 60:.1f} min now"
            )
    cons_b, cons_n = of(before, "conservative"), of(now, "conservative")
    if cons_n:
        b, n = cons_b[0], cons_n[0]
        same = sum(1 for x, y in zip(b["start"], n["start"], strict=True) if x == y)
        print(
            f"\nconservative, HPC2N ({n['jobs']} jobs): before {b['seconds']:.2f} s, now "
            f"{n['seconds']:.2f} s (x{b['seconds'] / n['seconds']:.2f}); CPU before "
            f"{b['cpu']:.2f} s, now {n['cpu']:.2f} s; {same}/{n['jobs']} jobs start at the "
            "same time"
        )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
