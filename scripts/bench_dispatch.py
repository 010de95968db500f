"""Dispatch overhead: campaign wall time against the ideal and against plain Client.map.

For each case (tasks x CPU milliseconds) it runs, on one local cluster of N single-threaded
worker processes:

- ``Client.map`` of the same model function, one Dask task per simulation run (the peer);
- ``campaign`` dispatch (adaptive batches, results stored in a ledger on disk).

and prints each wall time and its ratio to the ideal ``tasks x duration / workers``.
Usage: ``python scripts/bench_dispatch.py [--workers 2] [--cases 2000x20,20000x1]``.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

from distributed import Client, LocalCluster, wait

from campaign.execute import Item, dispatch
from campaign.ledger import Ledger
from campaign.models.check import busy
from campaign.progress import Progress


def plain_map(client: Client, tasks: int, duration_ms: float) -> float:
    params = {"duration_ms": duration_ms}
    start = time.perf_counter()
    futures = client.map(busy, [params] * tasks, range(tasks), pure=False)
    wait(futures)
    elapsed = time.perf_counter() - start
    assert all(f.status == "finished" for f in futures)
    del futures
    return elapsed


def campaign_dispatch(client: Client, tasks: int, duration_ms: float) -> float:
    params = {"duration_ms": duration_ms}
    items = [Item(key=f"t{i}", params=params, seed=i, meta={"key": f"t{i}"}) for i in range(tasks)]
    with tempfile.TemporaryDirectory() as folder:
        ledger = Ledger(Path(folder))
        start = time.perf_counter()
        outcome = dispatch(client, "busy", items, ledger.append, 1, Progress(tasks, enabled=False))
        elapsed = time.perf_counter() - start
        assert outcome.ok == tasks, outcome
        assert len(ledger.load()) == tasks
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cases", default="2000x20,20000x1", help="TASKSxMILLISECONDS,...")
    args = parser.parse_args()
    cases = [tuple(float(x) for x in case.split("x")) for case in args.cases.split(",")]
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
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
            ours = campaign_dispatch(client, tasks, duration)
            print(
                f"{tasks:>7} {duration:>4g} {ideal:>8.2f} {mapped:>13.2f} {mapped / ideal:>7.2f} "
                f"{ours:>11.2f} {ours / ideal:>7.2f} {ours / mapped:>7.2f}"
            )


if __name__ == "__main__":
    main()
