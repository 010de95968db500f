"""No-op tasks per second: a compiled program as a command model against a Python model.

1. A no-op program (C, written here and compiled with ``cc -O2`` into a temporary folder; it
   prints ``{"value": 1}``) run as a command model, and the ``busy`` check model with
   ``duration_ms: 0`` as the same no-op in Python: two campaigns of ``--tasks`` tasks each,
   one after the other on one local cluster of ``--workers`` single-threaded worker processes
   (what ``campaign run --workers 2`` starts), each through ``campaign.pipelines.run.run`` (plan,
   dispatch, the ledger on disk, results.nc). For each: wall time and tasks per second; the
   CPU time spent per task by each kind of process (this one with the scheduler and the
   nannies, the workers, the programs they ran, the workers' watchdogs), which a machine
   shared with other work does not inflate as it does wall time; and the mean time a task
   took inside its worker (the records' ``elapsed``: the model call, or the whole program
   task). The command campaign runs again in batches of ``--batch`` tasks (``campaign run
   --batch-size``) instead of batches sized to last about half a second each from measured
   durations: what the batches cost. A first small campaign, not counted, pays for what only
   a session's first run does (imports, the dashboard's setup).
2. Where a command task's time goes, each step timed ``--repeat`` times in this process as a
   worker runs it (`campaign.execute.program_task`), wall and CPU time (own and children's): the
   process start alone (``subprocess.run``, which uses vfork; and with fork, as it would with
   a ``preexec_fn``, whose cost grows with the parent's memory), the program's process group
   started and awaited
   (`process_tree.start` and `process_tree.wait`), the task's folder (made, the program
   linked in, the stream files opened, all removed), the metrics read from stdout, and
   `run_command` whole.

Usage: ``python scripts/bench_command.py [--tasks 2000] [--workers 2] [--repeat 300]``.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import psutil
from distributed import LocalCluster

import campaign.execute.process_tree as process_tree
from campaign.execute.command_metrics import FolderOutputs, metrics_from_outputs
from campaign.execute.program_task import place_inputs, placeholder_values, run_command
from campaign.pipelines.run import run
from campaign.plan.sources import file_digest
from campaign.results.status import STATUS_OK
from campaign.spec.load import load_spec
from campaign.store.ledger import Ledger

NOOP_C = r"""
#include <stdio.h>
int main(void) { fputs("{\"value\": 1}\n", stdout); return 0; }
"""


def compile_noop(folder: Path) -> Path:
    """The no-op program, compiled into ``folder``."""
    source = folder / "noop.c"
    source.write_text(NOOP_C)
    program = folder / "noop"
    subprocess.run(["cc", "-O2", "-o", str(program), str(source)], check=True)
    return program


def write_spec(folder: Path, kind: str, tasks: int) -> Path:
    """A campaign of ``tasks`` no-op tasks, through the program or through Python."""
    model = 'model:\n  command: [noop, "{seed}"]\n'
    if kind != "command":
        model = "model: busy\nparams: {duration_ms: 0}\n"
    spec = folder / f"{kind}-{tasks}.yaml"
    spec.write_text(
        f"name: bench-{kind}-{tasks}\n"
        f"description: reproduces no source study; no-op tasks per second\n{model}"
        f"replicates: {tasks}\nseed: 1\noutput: out-{kind}-{tasks}\n"
    )
    return spec


ROLES = ("driver", "workers", "programs", "watchdogs")


def cpu_by_role() -> dict[str, float]:
    """CPU seconds spent so far: by this process (the driver, with the scheduler and the
    nannies of the local cluster), by the worker processes, by the programs they ran (their
    reaped children) and by the workers' watchdogs."""
    me = psutil.Process()
    spent = dict.fromkeys(ROLES, 0.0)
    spent["driver"] = sum(me.cpu_times()[:2])
    for process in me.children(recursive=True):
        try:
            times, line = process.cpu_times(), " ".join(process.cmdline())
        except psutil.Error:
            continue
        if "watchdog.py" in line:
            spent["watchdogs"] += times.user + times.system
        else:
            spent["workers"] += times.user + times.system
            spent["programs"] += times.children_user + times.children_system
    return spent


def campaign_run(
    spec: Path, address: str, tasks: int, batch_size: int | None = None
) -> tuple[float, dict[str, float], float]:
    """Wall seconds of one whole campaign run, CPU seconds spent meanwhile by role, and the
    mean seconds a task took inside its worker (``batch_size``: None sizes batches from
    measured durations, as ``campaign run`` does)."""
    before = cpu_by_role()
    start = time.perf_counter()
    results = run(spec, scheduler=address, progress=False, batch_size=batch_size, new=True)
    wall = time.perf_counter() - start
    after = cpu_by_role()
    ok = int((results["status"] == STATUS_OK).sum())
    assert ok == tasks, f"{spec.name}: {ok} of {tasks} tasks ok"
    records = Ledger(spec.parent / load_spec(spec).output).load().values()
    inside = sum(record["elapsed"] for record in records) / len(records)
    return wall, {role: after[role] - before[role] for role in ROLES}, inside


def per_call(step: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Mean wall and CPU microseconds of one call (CPU: this process and its children;
    after one warm-up call)."""
    step()
    before, start = os.times(), time.perf_counter()
    for _ in range(repeat):
        step()
    wall, after = time.perf_counter() - start, os.times()
    cpu = sum(getattr(after, f) - getattr(before, f) for f in ("user", "system"))
    cpu += sum(getattr(after, f) - getattr(before, f) for f in ("children_user", "children_system"))
    return wall / repeat * 1e6, cpu / repeat * 1e6


def step_costs(spec: Path, program: Path, repeat: int) -> list[tuple[str, float, float]]:
    """Microseconds per call (wall, CPU) of each step of a command task, in this process."""
    command = replace(load_spec(spec).command, files=(("noop", file_digest(str(program))),))
    scratch = Path(tempfile.mkdtemp(prefix="bench-steps-"))
    null = open(os.devnull, "wb")
    streams = {"stdout": scratch / "o.stdout", "stderr": scratch / "o.stderr"}
    streams["stdout"].write_bytes(b'{"value": 1}\n')
    streams["stderr"].write_bytes(b"")
    (scratch / "outputs").mkdir()

    def plain() -> None:
        subprocess.run([str(program)], stdout=null, stderr=null, check=True)

    def forked() -> None:
        subprocess.run([str(program)], stdout=null, stderr=null, check=True, preexec_fn=os.getpid)

    def group() -> None:
        process = process_tree.start([str(program)], scratch, null, null)
        process_tree.wait(process, lambda: False)

    def folder() -> None:
        name = f"t-{uuid.uuid4().hex[:8]}"
        task = scratch / "tasks" / name
        task.mkdir(parents=True)
        place_inputs(command, task, placeholder_values(command, {}, 1, "t", 0, task))
        out, err = scratch / "tasks" / f"{name}.stdout", scratch / "tasks" / f"{name}.stderr"
        with open(out, "wb"), open(err, "wb"):
            pass
        shutil.rmtree(task)
        out.unlink()
        err.unlink()

    def parse() -> None:
        metrics_from_outputs(command.metrics, FolderOutputs(scratch / "outputs", streams))

    def whole() -> None:
        run_command(command, {}, 1, "t", 0)

    steps = [
        ("process start alone: subprocess.run", plain),
        ("the same with fork, not vfork (a preexec_fn)", forked),
        ("process_tree.start + wait", group),
        ("task folder: make, link program, streams, remove", folder),
        ("metrics from stdout", parse),
        ("run_command, whole", whole),
    ]
    try:
        # fork is slow: a tenth of the calls
        return [
            (label, *per_call(step, repeat // 10 if step is forked else repeat))
            for label, step in steps
        ]
    finally:
        null.close()
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument(
        "--batch", type=int, default=100, help="the command campaign again in batches of this"
    )
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-command-") as name:
        folder = Path(name)
        program = compile_noop(folder)
        specs = {kind: write_spec(folder, kind, args.tasks) for kind in ("command", "python")}
        with LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster:
            cluster.wait_for_workers(args.workers)
            # the first run of a session pays for imports and the dashboard's setup
            campaign_run(write_spec(folder, "warm-up", 20), cluster.scheduler_address, 20)
            for kind, spec in specs.items():
                rows[kind] = campaign_run(spec, cluster.scheduler_address, args.tasks)
            batched = campaign_run(
                specs["command"], cluster.scheduler_address, args.tasks, args.batch
            )
            rows[f"command, batches of {args.batch}"] = batched
        steps = step_costs(specs["command"], program, args.repeat)
    load_after = os.getloadavg()[0]

    print(
        f"{args.tasks} no-op tasks, {args.workers} worker processes of 1 thread, "
        f"{os.cpu_count()} cores; load average {load_before:.1f} before, {load_after:.1f} after"
    )
    print(f"{'model':>26} {'wall s':>7} {'tasks/s':>8} {'in worker ms':>13}")
    for kind, (wall, _, inside) in rows.items():
        print(f"{kind:>26} {wall:>7.2f} {args.tasks / wall:>8.0f} {inside * 1e3:>13.2f}")
    print("\nCPU ms per task, by process (during the run of all tasks)")
    print(f"{'model':>26} " + " ".join(f"{role:>9}" for role in ROLES) + f" {'total':>9}")
    for kind, (_, cpu, _) in rows.items():
        cells = [cpu[role] / args.tasks * 1e3 for role in ROLES]
        print(f"{kind:>26} " + " ".join(f"{c:>9.2f}" for c in cells) + f" {sum(cells):>9.2f}")
    print(f"\nsteps of a command task (mean of {args.repeat} calls in this process)")
    print(f"{'step':>50} {'wall us':>9} {'CPU us':>8}")
    for label, wall, cpu in steps:
        print(f"{label:>50} {wall:>9.0f} {cpu:>8.0f}")


if __name__ == "__main__":
    main()
