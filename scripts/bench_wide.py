"""Dispatch on many slots: campaign against the ideal and against plain Client.map, with the
CPU each task costs the driver, the scheduler and the workers.

Tasks sleep (50 ms by default) instead of spinning, so they need no core of their own and
many slots fit on a small machine. Each configuration is a cluster of single-thread worker
processes (``procs:N``) or of a few processes with many threads (``threads:PxT``), either
embedded (a ``LocalCluster`` in the driver's process: its scheduler and nannies share the
driver's process) or as separate ``dask scheduler`` and ``dask worker`` processes on
127.0.0.1. On each cluster, in a fresh Python process: ``Client.map`` of the task function
(one Dask task per run), then campaign's ``dispatch`` of the same tasks (results stored in a
ledger, every one checked against the function's value).

Columns: ``ideal`` = tasks x duration / slots; wall times and their ratios; CPU per task in
milliseconds (process CPU times over the run, of every thread): ``driver`` the driver's main
thread (embedded) or its whole process (processes), ``sched`` the scheduler (embedded: the
rest of the driver's process, with the client's I/O and the nannies), ``workers`` the worker
processes (and, with separate processes, their nannies). CPU times include what the
processes spend idle (heartbeats, monitors) while the run lasts.

``--before PATH`` also runs the code of another checkout (a folder; or a git revision,
extracted with ``git archive`` into a temporary folder), the two alternating configuration
by configuration, each repeat in the other order; with ``--repeats N`` each figure is the
smallest of N runs. Every run starts its own cluster (the workers must import that side's
code), which takes most of the time of a run.

    python scripts/bench_wide.py                                   # every configuration
    python scripts/bench_wide.py --before main --repeats 3         # against main's code
    python scripts/bench_wide.py --configs procs:32,threads:2x128 --modes processes
    python scripts/bench_wide.py --tasks-per-slot 100 --ms 20
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONFIGS = "procs:8,procs:32,procs:128,threads:2x32,threads:2x128,threads:2x256"
MODES = "embedded,processes"
MODEL = "bench_wide:sleep_task"  # this file, imported by the workers from PYTHONPATH
RUN_LIMIT = 900  # seconds one configuration may take, start-up included


def sleep_task(params: dict, seed: int) -> dict[str, float]:
    """The task: sleep ``ms`` milliseconds, return a draw of the seed (checked afterwards)."""
    time.sleep(params["ms"] / 1000.0)
    return {"value": value_of(seed)}


def value_of(seed: int) -> float:
    return float(np.random.default_rng(seed).random())


def parse_config(text: str) -> tuple[int, int]:
    """``procs:N`` -> (N, 1); ``threads:PxT`` -> (P, T)."""
    kind, _, size = text.partition(":")
    if kind == "procs":
        return int(size), 1
    if kind == "threads":
        procs, _, threads = size.partition("x")
        return int(procs), int(threads)
    raise SystemExit(f"configuration {text!r}: write procs:N or threads:PxT")


# -- one configuration, in a process of its own -------------------------------------------------
@contextmanager
def embedded(procs: int, threads: int) -> Iterator[tuple[object, int | None]]:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=procs,
        threads_per_worker=threads,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster, None


@contextmanager
def separate(procs: int, threads: int) -> Iterator[tuple[str, int | None]]:
    """A `dask scheduler` and `procs` `dask worker` processes on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    quiet: dict = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    quiet["env"] = dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=f"{RUN_LIMIT}s")
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    scheduler = subprocess.Popen(
        [*dask, "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0"], **quiet
    )
    processes = [scheduler]
    try:
        time.sleep(1.0)
        worker = [sys.executable, "-m", "distributed.cli.dask_worker", address]
        for _ in range(procs):
            processes.append(
                subprocess.Popen(
                    [*worker, "--nthreads", str(threads), "--host", "127.0.0.1"], **quiet
                )
            )
        yield address, scheduler.pid
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGINT)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


class Meter:
    """CPU seconds of the driver's main thread, the rest of the driver process, the scheduler
    process and the worker processes (with their nannies when those are processes of their
    own)."""

    def __init__(self, scheduler_pid: int | None, worker_pids: list[int], nannies: bool):
        import psutil

        self.me = psutil.Process()
        self.main = threading.get_native_id()
        self.scheduler = psutil.Process(scheduler_pid) if scheduler_pid else None
        pids = set(worker_pids)
        if nannies:
            pids |= {psutil.Process(pid).ppid() for pid in worker_pids}
        self.workers = [psutil.Process(pid) for pid in sorted(pids)]

    def read(self) -> dict[str, float]:
        threads = {t.id: t.user_time + t.system_time for t in self.me.threads()}
        main = threads.get(self.main, 0.0)
        rest = sum(threads.values()) - main
        scheduler = _cpu(self.scheduler) if self.scheduler else 0.0
        workers = sum(_cpu(p) for p in self.workers)
        if self.scheduler is None:  # embedded: the scheduler runs in this process
            return {"driver": main, "sched": rest, "workers": workers}
        return {"driver": main + rest, "sched": scheduler, "workers": workers}


def _cpu(process) -> float:
    try:
        times = process.cpu_times()
    except Exception:  # gone
        return 0.0
    return times.user + times.system


def measured(meter: Meter, tasks: int, run) -> dict[str, float]:
    before, start = meter.read(), time.perf_counter()
    extra = run() or {}
    wall = time.perf_counter() - start
    after = meter.read()
    cpu = {name: 1000.0 * (after[name] - before[name]) / tasks for name in after}
    return {"wall": wall, **cpu, **extra}


def one_configuration(procs: int, threads: int, mode: str, tasks: int, ms: float) -> dict:
    """Start the cluster, run Client.map and campaign's dispatch, return the figures."""
    from distributed import Client, wait

    from campaign.execute import ExecutionOptions, Item, dispatch
    from campaign.plan.sources import engine_identity
    from campaign.render.progress import Progress
    from campaign.store.ledger import Ledger

    started = time.perf_counter()
    opened = embedded(procs, threads) if mode == "embedded" else separate(procs, threads)
    # a loaded machine starts a scheduler and many worker processes slowly: Dask's 30 s limit
    # on connecting fails there
    with opened as (where, scheduler_pid), Client(where, timeout=RUN_LIMIT) as client:
        client.wait_for_workers(procs, timeout=RUN_LIMIT)
        pids = list(client.run(os.getpid).values())
        meter = Meter(scheduler_pid, pids, nannies=mode != "embedded")
        params = {"ms": ms}
        warm = procs * threads
        wait(client.map(sleep_task, [params] * warm, range(warm), pure=False))  # imports
        from campaign.execute.worker import run_batch

        client.run(run_batch, MODEL, [], None)  # the engine's imports, digests and watchdog
        engine_identity()  # the driver's, once per process (a run's plan takes it anyway)
        try:  # and the model's libraries, which a run's plan has also looked up before
            from campaign.plan.sources import model_engine
        except ImportError:  # code from before they were looked up
            pass
        else:
            model_engine(MODEL)
        start_up = time.perf_counter() - started

        def plain_map() -> None:
            futures = client.map(sleep_task, [params] * tasks, range(tasks), pure=False)
            wait(futures)
            assert all(future.status == "finished" for future in futures)

        def campaign() -> dict:
            items = [
                Item(key=f"t{i:07d}", params=params, seed=i, meta={"key": f"t{i:07d}"})
                for i in range(tasks)
            ]
            options = ExecutionOptions(retries=1, progress=False)
            with tempfile.TemporaryDirectory() as folder:
                ledger = Ledger(Path(folder))
                quiet = Progress(tasks, enabled=False)
                outcome = dispatch(client, MODEL, items, ledger.append, options, quiet)
                records = ledger.load()
            assert outcome.ok == tasks and len(records) == tasks, outcome
            wrong = [k for k, r in records.items() if r["metrics"]["value"] != value_of(r["seed"])]
            assert not wrong, f"{len(wrong)} results differ from the function's, e.g. {wrong[0]}"
            return {"stolen": outcome.stolen, "copied": outcome.replicated}

        time.sleep(1.0)  # let the warm-up settle
        figures = {
            "start_up": start_up,
            "map": measured(meter, tasks, plain_map),
            "campaign": measured(meter, tasks, campaign),
        }
    return figures


# -- the whole bench ----------------------------------------------------------------------------
def code_root(before: str, holder: Path) -> Path:
    """A checkout's folder, or a git revision extracted into ``holder``."""
    path = Path(before)
    if path.is_dir():
        return path.resolve()
    tree = holder / "before"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", before], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise SystemExit(f"--before {before}: neither a folder nor a git revision")
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def run_child(root: Path, config: str, mode: str, tasks: int, ms: float) -> dict | None:
    """One configuration on the code under ``root``, in a fresh Python process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(HERE)]))
    command = [sys.executable, str(Path(__file__).resolve()), "--child", config, mode]
    command += ["--tasks", str(tasks), "--ms", str(ms)]
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=RUN_LIMIT, cwd=root
        )
    except subprocess.TimeoutExpired:
        print(f"  {config} {mode}: no result within {RUN_LIMIT} s", file=sys.stderr)
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        print(f"  {config} {mode} ({root}): failed: {' | '.join(tail)}", file=sys.stderr)
        return None
    return json.loads(lines[-1])


def smallest(runs: list[dict]) -> dict:
    """Each figure's smallest over the repeats."""
    best: dict = {}
    for run in runs:
        for part, figures in run.items():
            if not isinstance(figures, dict):
                best[part] = min(best.get(part, figures), figures)
                continue
            into = best.setdefault(part, {})
            for name, value in figures.items():
                into[name] = min(into.get(name, value), value)
    return best


HEADER = (
    f"{'cluster':<14} {'mode':<9} {'code':<6} {'slots':>5} {'tasks':>6} {'ideal':>6} "
    f"{'map s':>6} {'x ideal':>7} {'ours s':>6} {'x ideal':>7} {'x map':>5} "
    f"{'driver':>7} {'sched':>6} {'workers':>7} {'stolen':>6}"
)


def row(config: str, mode: str, side: str, slots: int, tasks: int, ideal: float, best: dict):
    plain, ours = best["map"], best["campaign"]
    return (
        f"{config:<14} {mode:<9} {side:<6} {slots:>5} {tasks:>6} {ideal:>6.2f} "
        f"{plain['wall']:>6.2f} {plain['wall'] / ideal:>7.2f} {ours['wall']:>6.2f} "
        f"{ours['wall'] / ideal:>7.2f} {ours['wall'] / plain['wall']:>5.2f} "
        f"{ours['driver']:>7.3f} {ours['sched']:>6.3f} {ours['workers']:>7.3f} "
        f"{ours.get('stolen', 0):>6}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default=CONFIGS, help="procs:N and threads:PxT, by commas")
    parser.add_argument("--modes", default=MODES, help="embedded, processes or both")
    parser.add_argument("--ms", type=float, default=50.0, help="each task's sleep (ms)")
    parser.add_argument("--tasks-per-slot", type=int, default=100, help="tasks = slots x this")
    parser.add_argument("--tasks", type=int, help="tasks of every configuration instead")
    parser.add_argument("--before", help="a checkout (or git revision) of the code to compare")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each; smallest kept")
    parser.add_argument("--json", help="also write every run's figures to this file")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        procs, threads = parse_config(args.child[0])
        figures = one_configuration(procs, threads, args.child[1], args.tasks, args.ms)
        print(json.dumps(figures))
        return

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="bench-wide-") as holder:
        sides = [("after", ROOT)]
        if args.before:
            sides.append(("before", code_root(args.before, Path(holder))))
        print(f"tasks sleep {args.ms:g} ms; CPU columns in ms per task; load {load()}")
        print(HEADER, flush=True)
        everything = []
        for config in args.configs.split(","):
            procs, threads = parse_config(config)
            slots = procs * threads
            tasks = args.tasks or slots * args.tasks_per_slot
            ideal = tasks * args.ms / 1000.0 / slots
            for mode in args.modes.split(","):
                runs: dict[str, list[dict]] = {side: [] for side, _ in sides}
                for repeat in range(args.repeats):
                    order = sides if repeat % 2 == 0 else sides[::-1]
                    for side, root in order:
                        figures = run_child(root, config, mode, tasks, args.ms)
                        if figures is not None:
                            runs[side].append(figures)
                            everything.append(
                                {
                                    "config": config,
                                    "mode": mode,
                                    "side": side,
                                    "tasks": tasks,
                                    **figures,
                                }
                            )
                for side, _ in sides:
                    if runs[side]:
                        best = smallest(runs[side])
                        print(row(config, mode, side, slots, tasks, ideal, best), flush=True)
        print(f"load at the end {load()}")
        if args.json:
            Path(args.json).write_text(json.dumps(everything, indent=1))


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
