"""Driver scale, end to end: a campaign of no-op tasks run, looked at and merged from shards,
with the wall time and the driver's peak memory of each step.

The spec: model ``busy`` at 0 ms, one factor ``tag`` of 1,000 levels (its cells), and the
replicates that make ``--tasks`` tasks. The steps, each in a fresh Python process of its own
so that its peak memory (the kernel's high-water mark of resident memory, VmHWM, reset
between the phases of a run) is its own:

- run: `campaign.run` on the embedded cluster of ``--workers`` workers, in phases: plan
  (spec, design, ledger read), dispatch (tasks sent, results stored in the ledger), compact
  (the ledger's batch files merged), results.nc (assembled and written);
- status: ``campaign status SPEC``; query: ``campaign query`` of one cell;
- merge: the ledger dealt into the folders of ``--shards`` shards (as ``run --shard I/N``
  would have filled them; not timed as the tool's), then ``campaign merge`` of them all.

Given ``--code DIR`` (repeatable), every step runs with the package of each source tree
(``PYTHONPATH=DIR``) in turn, in the same run: ``--code . --code /tmp/before`` sets this
checkout beside an earlier one (``git archive COMMIT | tar -x -C /tmp/before``).
Usage: ``python scripts/bench_scale.py --tasks 1000000 [--code DIR ...] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """\
name: scale
model: busy
params:
  duration_ms: 0
factors:
  tag: [{levels}]
replicates: {replicates}
seed: 1
output: {output}
"""
CELLS = 1000

RUN = r"""
import json, re, sys, time
from pathlib import Path

def high_water():
    with open("/proc/self/status") as handle:
        return int(re.search(r"VmHWM:\s+(\d+)", handle.read()).group(1)) / 1024

phases, mark = [], [None, time.perf_counter(), time.process_time()]

def enter(label):
    if label == mark[0]:
        return
    now, cpu = time.perf_counter(), time.process_time()
    if mark[0] is not None:
        phases.append((mark[0], now - mark[1], cpu - mark[2], high_water()))
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # the high-water mark starts again from what is resident now
    mark[:] = [label, now, cpu]

def timed(owner, name, label, after):
    original = getattr(owner, name, None)
    if original is None:
        return
    def wrapper(*args, **kwargs):
        enter(label)
        try:
            return original(*args, **kwargs)
        finally:
            enter(after)
    setattr(owner, name, wrapper)

import campaign
enter("plan")
module = None
from importlib import import_module
for name in ("campaign.runner", "campaign.pipelines.run", "campaign.pipelines.runner"):
    try:
        module = import_module(name)
        break
    except ImportError:
        continue
try:
    from campaign.cluster.cluster_options import ClusterOptions
except ImportError:  # a source tree from before the module's rename
    from campaign.cluster.options import ClusterOptions
from campaign.store.ledger import Ledger
timed(ClusterOptions, "client", "cluster start", "cluster start")
timed(module, "execute_tasks", "dispatch", "cluster stop")
timed(Ledger, "compact", "compact", "finish")
timed(module, "write_results", "results.nc", "finish")
dataset = campaign.run(sys.argv[1], workers=int(sys.argv[2]), progress=False)
enter(None)
print(json.dumps({"phases": phases, "ok": int(dataset.attrs["tasks_ok"])}))
"""

SPLIT = r"""
import json, sys
from pathlib import Path
import numpy as np
from campaign.design.shards import design_record, owners
from campaign.design.tasks import Design
from campaign.spec.load import load_spec

spec, count, into = load_spec(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
design = Design(spec)
owner = owners(design, count)
# task keys as 32-byte strings: the cell's digest and the seed in hex, in task order
seeds = np.frombuffer(design.seeds.astype(">u8").tobytes().hex().encode(), dtype="S16")
cells = np.repeat(np.array(design.cell_digests, dtype="S16"), spec.replicates)
keys = np.char.add(cells, seeds)
order = np.argsort(keys)
keys = keys[order]
stored = json.loads((spec.output / "campaign.json").read_text())
inputs = stored.get("sources", {}).get("inputs", {})
folders = [into / f"shard-{i + 1}-of-{count}" for i in range(count)]
for index, folder in enumerate(folders):
    (folder / "ledger").mkdir(parents=True)
    shard = {"index": index + 1, "count": count}
    record = dict(stored, design=design_record(design, inputs), shard=shard)
    (folder / "campaign.json").write_text(json.dumps(record))
for path in sorted((spec.output / "ledger").glob("*.jsonl")):
    with open(path, "rb") as source:  # in blocks: a compacted ledger may be gigabytes
        rest = b""
        while block := source.read(2**24):
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            lines = [line + b"\n" for line in lines if line.strip()]
            found = np.array([line[9:41] for line in lines], dtype="S32")
            shard = owner[order[np.searchsorted(keys, found)]]
            for index, folder in enumerate(folders):
                mine = [line for line, s in zip(lines, shard) if s == index]
                if mine:
                    with open(folder / "ledger" / path.name, "ab") as target:
                        target.write(b"".join(mine))
        assert not rest.strip(), "a ledger file ends within a line"
print(json.dumps({"folders": [str(f) for f in folders]}))
"""


def child_peak(command: list[str], code: Path, cwd: Path) -> tuple[float, float, float, str]:
    """Run a command with the package of ``code``: its wall time, CPU time, peak memory (MB,
    of that one process: ``wait4``) and output."""
    env = dict(os.environ, PYTHONPATH=str(code.resolve()))
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    output = process.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{output}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, output


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def bench(code: Path, folder: Path, tasks: int, workers: int, shards: int) -> list[tuple]:
    """Every step with the package of ``code``: (step, seconds, peak MB, detail) rows."""
    output = folder / "out"
    spec = folder / "scale.yaml"
    spec.write_text(
        SPEC.format(
            levels=", ".join(f"t{i}" for i in range(CELLS)),
            replicates=tasks // CELLS,
            output=output,
        )
    )
    python = [sys.executable]
    rows = []
    seconds, cpu, _, text = child_peak([*python, "-c", RUN, str(spec), str(workers)], code, folder)
    result = json.loads(text.strip().splitlines()[-1])
    for label, phase_seconds, phase_cpu, phase_peak in result["phases"]:
        if label != "finish":
            rows.append((f"run: {label}", phase_seconds, phase_cpu, phase_peak, ""))
    ledger = folder_size(output / "ledger")
    size = (output / "results.nc").stat().st_size
    peak = max(row[3] for row in rows)  # the high-water mark was reset between phases
    detail = (
        f"{result['ok']} ok; ledger {ledger / tasks:.0f} B/task, "
        f"results.nc {size / tasks:.1f} B/task"
    )
    rows.append(("run (whole, driver)", seconds, cpu, peak, detail))
    status = [*python, "-m", "campaign", "status", str(spec)]
    seconds, cpu, peak, text = child_peak(status, code, folder)
    rows.append(("status", seconds, cpu, peak, text.splitlines()[0][:60]))
    query = ["query", str(output), "--where", "tag=t7", "--format", "csv"]
    seconds, cpu, peak, text = child_peak([*python, "-m", "campaign", *query], code, folder)
    rows.append(("query (one cell)", seconds, cpu, peak, text.splitlines()[-1][:60]))
    if not shards:  # --shards 0: no merge
        return rows
    split = [*python, "-c", SPLIT, str(spec), str(shards), str(folder / "shards")]
    seconds, cpu, peak, text = child_peak(split, code, folder)
    rows.append((f"(ledger dealt to {shards} shards)", seconds, cpu, peak, "bench set-up"))
    merged = folder / "merged"
    names = json.loads(text.strip().splitlines()[-1])["folders"]
    command = [*python, "-m", "campaign", "merge", *names, "-o", str(merged)]
    seconds, cpu, peak, text = child_peak(command, code, folder)
    said = next((line for line in text.splitlines() if line.startswith("merged")), text)
    rows.append((f"merge of {shards} shards", seconds, cpu, peak, said.split(": ")[-1][:60]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shards", type=int, default=10, help="merged at the end (0: no merge)")
    parser.add_argument("--code", type=Path, action="append", help="source tree (repeatable)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    trees = args.code or [Path(__file__).resolve().parent.parent]
    tables = []
    for code in trees:
        if args.keep:
            folder = args.keep / code.resolve().name
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            tables.append((code, bench(code, folder, args.tasks, args.workers, args.shards)))
            continue
        with tempfile.TemporaryDirectory() as tmp:
            tables.append((code, bench(code, Path(tmp), args.tasks, args.workers, args.shards)))
    print(
        f"{args.tasks} no-op tasks ({CELLS} cells x {args.tasks // CELLS} replicates), "
        f"{args.workers} workers"
    )
    for code, rows in tables:
        print(f"\ncode: {code}")
        print(f"{'step':<30} {'seconds':>8} {'CPU s':>8} {'peak MB':>8}  detail")
        for name, seconds, cpu, peak, detail in rows:
            print(f"{name:<30} {seconds:>8.1f} {cpu:>8.1f} {peak:>8.0f}  {detail}")


if __name__ == "__main__":
    main()
