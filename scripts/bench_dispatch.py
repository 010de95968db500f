"""Dispatch overhead: campaign wall time against the ideal and against plain Client.map.

1. For each case (tasks x CPU milliseconds), on one embedded local cluster of N
   single-threaded worker processes: ``Client.map`` of the same model function, one Dask task
   per run (the peer), and ``campaign`` dispatch (adaptive batches, results stored in a ledger
   on disk); each wall time and its ratio to the ideal ``tasks x duration / workers``.
2. The same campaign dispatch on a scheduler and N workers started as separate processes
   (``dask scheduler`` / ``dask worker``), as on a real cluster.
3. Skewed task durations (log-normal): wall time over the ideal with tail work stealing and
   straggler replication on and off.

Usage: ``python scripts/bench_dispatch.py [--workers 2] [--cases 2000x20,20000x1]``.
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from distributed import Client, LocalCluster, wait

from campaign.execute import ExecutionOptions, Item, dispatch
from campaign.models.check import busy
from campaign.render.progress import Progress
from campaign.store.ledger import Ledger


def plain_map(client: Client, tasks: int, duration_ms: float) -> float:
    params = {"duration_ms": duration_ms}
    start = time.perf_counter()
    futures = client.map(busy, [params] * tasks, range(tasks), pure=False)
    wait(futures)
    elapsed = time.perf_counter() - start
    assert all(f.status == "finished" for f in futures)
    del futures
    return elapsed


def campaign_dispatch(
    client: Client, tasks: int, duration_ms: float | list[float], **options
) -> tuple[float, object]:
    durations = duration_ms if isinstance(duration_ms, list) else [duration_ms] * tasks
    items = [
        Item(key=f"t{i}", params={"duration_ms": d}, seed=i, meta={"key": f"t{i}"})
        for i, d in enumerate(durations)
    ]
    return timed_dispatch(client, "busy", items, ExecutionOptions(retries=1, **options))


def timed_dispatch(
    client: Client, model: str, items: list[Item], options: ExecutionOptions
) -> tuple[float, object]:
    """The wall time of dispatching ``items`` of ``model`` into a ledger in a temporary
    folder, and the outcome; every task must be stored, ok."""
    with tempfile.TemporaryDirectory() as folder:
        ledger = Ledger(Path(folder))
        start = time.perf_counter()
        outcome = dispatch(
            client, model, items, ledger.append, options, Progress(len(items), enabled=False)
        )
        elapsed = time.perf_counter() - start
        assert outcome.ok == len(items), outcome
        assert len(ledger.load()) == len(items)
    return elapsed, outcome


@contextmanager
def local_client(workers: int) -> Iterator[Client]:
    """A client of an embedded local cluster of ``workers`` single-threaded worker processes
    (fresh ones: empty caches), closed afterwards."""
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


# the `dask` command of this Python, on PATH or not (a virtual environment not activated)
DASK = (sys.executable, "-m", "dask")


@contextmanager
def separate_processes(workers: int) -> Iterator[str]:
    """A `dask scheduler` and `dask worker` processes on 127.0.0.1, ended afterwards."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes = [
        subprocess.Popen(
            [
                *DASK,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--dashboard-address",
                ":0",
            ],
            **quiet,
        )
    ]
    try:
        time.sleep(1.0)
        for _ in range(workers):
            processes.append(
                subprocess.Popen(
                    [*DASK, "worker", address, "--nthreads", "1", "--host", "127.0.0.1"], **quiet
                )
            )
        yield address
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGINT)
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cases", default="2000x20,20000x1", help="TASKSxMILLISECONDS,...")
    args = parser.parse_args()
    cases = [tuple(float(x) for x in case.split("x")) for case in args.cases.split(",")]
    with local_client(args.workers) as client:
        client.run(busy, {"duration_ms": 1}, 0)  # warm the workers' imports
        print(f"{args.workers} worker processes, 1 thread each")
        header = (
            f"{'tasks':>7} {'ms':>4} {'ideal s':>8} {'Client.map s':>13} {'xideal':>7} "
            f"{'campaign s':>11} {'xideal':>7} {'vs map':>7}"
        )
        print(header)
        for tasks, duration in cases:
            tasks = int(tasks)
            ideal = tasks * duration / 1000 / args.workers
            mapped = plain_map(client, tasks, duration)
            ours, _ = campaign_dispatch(client, tasks, duration)
            print(
                f"{tasks:>7} {duration:>4g} {ideal:>8.2f} {mapped:>13.2f} {mapped / ideal:>7.2f} "
                f"{ours:>11.2f} {ours / ideal:>7.2f} {ours / mapped:>7.2f}"
            )
        skewed = list(np.random.default_rng(1).lognormal(np.log(20), 1.2, 600).round(1))
        skew_ideal = sum(skewed) / 1000 / args.workers
        skew_rows = []
        for order, durations in (("random", skewed), ("ascending", sorted(skewed))):
            for label, on in (("on", True), ("off", False)):
                wall, outcome = campaign_dispatch(
                    client, len(durations), durations, replicate_tail=on
                )
                skew_rows.append((order, label, wall, outcome))

    print(f"\nseparate processes: dask scheduler + {args.workers} dask worker processes")
    with separate_processes(args.workers) as address, Client(address) as client:
        client.wait_for_workers(args.workers)
        client.run(busy, {"duration_ms": 1}, 0)
        print(f"{'tasks':>7} {'ms':>4} {'ideal s':>8} {'campaign s':>11} {'xideal':>7}")
        for tasks, duration in cases:
            tasks = int(tasks)
            ideal = tasks * duration / 1000 / args.workers
            ours, _ = campaign_dispatch(client, tasks, duration)
            print(f"{tasks:>7} {duration:>4g} {ideal:>8.2f} {ours:>11.2f} {ours / ideal:>7.2f}")

    print(
        f"\nskewed durations: {len(skewed)} tasks, log-normal (median 20 ms, sigma 1.2, "
        f"longest {max(skewed):.0f} ms), ideal {skew_ideal:.2f} s on embedded cluster"
    )
    print("(ascending: task order sorted by duration, as when a factor's levels grow the work)")
    print(
        f"{'order':>10} {'tail replication':>17} {'wall s':>7} {'xideal':>7} {'stolen':>7} "
        f"{'copied':>7}"
    )
    for order, label, wall, outcome in skew_rows:
        print(
            f"{order:>10} {label:>17} {wall:>7.2f} {wall / skew_ideal:>7.2f} {outcome.stolen:>7} "
            f"{outcome.replicated:>7}"
        )


if __name__ == "__main__":
    main()
