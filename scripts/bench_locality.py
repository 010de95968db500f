"""Input locality: trace loads and wall time of a multi-trace campaign, locality on and off.

Tasks of the `jobs` model replay windows of several real traces; the trace is the fastest
varying factor, so in plain task order consecutive tasks read different traces. With
locality, the engine batches tasks of one trace together and prefers an idle worker that
already loaded it. Each run starts fresh worker processes (empty trace caches) and counts, at
the end, how many traces each worker parsed.

Usage: ``python scripts/bench_locality.py [--workers 2] [--replicates 6]``
(full traces from the workloads folder: ``$CAMPAIGN_WORKLOADS``, else the per-user cache that
``campaign workloads fetch NAME`` fills).
"""

from __future__ import annotations

import argparse

from bench_dispatch import local_client, timed_dispatch  # a script beside this one

from campaign.design.tasks import Design, cell_params
from campaign.execute import ExecutionOptions, Item
from campaign.models.jobs import inputs
from campaign.spec.load import parse_spec

TRACES = [
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "LLNL-Thunder-2007-1.1-cln.swf.gz",
    "HPC2N-2002-2.1-cln.swf.gz",
]


def traces_loaded() -> int:
    from campaign.models.rigid import workloads

    return len(workloads._TRACES)


def make_items(replicates: int, group: bool) -> list[Item]:
    spec = parse_spec(
        {
            "name": "locality",
            "model": "jobs",
            "params": {"jobs": 2000, "window": "random"},
            "factors": {"scheduler": ["fcfs", "easy"], "trace": TRACES},
            "paired": ["scheduler"],
            "replicates": replicates,
            "seed": 3,
        }
    )
    design = Design(spec)
    items = []
    for task in design.tasks():
        params = cell_params(spec, task.cell)
        item = Item(key=task.key, params=params, seed=task.seed, meta={"key": task.key})
        item.group = inputs(params) if group else None
        items.append(item)
    # plain task order, but replicate-major so that consecutive tasks change trace
    items.sort(key=lambda item: (item.seed, item.params["scheduler"]))
    if group:
        order = {g: i for i, g in enumerate(dict.fromkeys(item.group for item in items))}
        items.sort(key=lambda item: order[item.group])
    return items


def measure(workers: int, replicates: int, locality: bool) -> tuple[float, list[int], int]:
    with local_client(workers) as client:
        items = make_items(replicates, group=locality)
        options = ExecutionOptions(retries=0, locality=locality, replicate_tail=False)
        wall, _ = timed_dispatch(client, "jobs", items, options)
        loads = sorted(client.run(traces_loaded).values())
    return wall, loads, len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--replicates", type=int, default=6)
    args = parser.parse_args()
    print(f"{len(TRACES)} traces x 2 schedulers x {args.replicates} replicates, 2000-job windows")
    print(f"{'locality':>9} {'tasks':>6} {'wall s':>7} {'traces parsed per worker':>26}")
    for locality in (True, False):
        wall, loads, tasks = measure(args.workers, args.replicates, locality)
        label = "on" if locality else "off"
        print(f"{label:>9} {tasks:>6} {wall:>7.2f} {str(loads):>26} (total {sum(loads)})")


if __name__ == "__main__":
    main()
