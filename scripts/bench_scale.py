"""Driver scale: plan and status of a 1,000,000-task design, assembly of 100,000 results.

Each step runs in a fresh Python process so that its peak memory (max RSS) is its own.
A ledger is filled with synthetic finished records (the real record format, written through
`Ledger.append`) so that status and resume are measured against a half-finished campaign.
Usage: ``python scripts/bench_scale.py [--tasks 1000000] [--assemble 100000]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SPEC = """
name: scale
model: busy
factors:
  duration_ms: [{levels}]
  tag: [{strategies}]
paired: [tag]
replicates: {replicates}
seed: 1
output: out
"""

STEP = r"""
import json, resource, sys, time
from pathlib import Path
step, spec_path, arg = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
start = time.perf_counter()
if step == "fill":
    from campaign.design.tasks import Design
    from campaign.store.ledger import Ledger
    from campaign.spec.load import load_spec
    spec = load_spec(spec_path)
    design = Design(spec)
    ledger = Ledger(spec.output)
    ledger.write_identity({"model": spec.model, "params": spec.params, "seed": spec.seed,
                           "name": spec.name})
    keys = design.keys()[: int(arg)]
    for first in range(0, len(keys), 10000):
        ledger.append({"key": k, "status": "ok", "metrics": {"value": 0.5}, "replicate": 0,
                       "cell": {}, "run": "fill", "attempts": 1, "elapsed": 0.001}
                      for k in keys[first:first + 10000])
    detail = f"{len(keys)} records"
elif step == "plan":
    from campaign.plan.plan import make_plan
    plan = make_plan(spec_path)
    detail = f"{plan.done} done, {len(plan.missing)} missing"
elif step == "assemble":
    from campaign.design.tasks import Design
    from campaign.store.ledger import Ledger
    from campaign.plan.plan import Plan, check_model
    from campaign.plan.state import RunState
    from campaign.results.writing import write_results
    from campaign.spec.load import load_spec
    spec = load_spec(spec_path)
    plan = Plan(spec, check_model(spec), Design(spec))
    dataset = write_results(RunState(plan, Ledger(spec.output)))
    detail = f"{dataset.attrs['tasks_ok']} results assembled and written"
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "detail": detail}))
"""


def step(name: str, spec: Path, arg: int = 0) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", STEP, name, str(spec), str(arg)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def make_spec(folder: Path, tasks: int) -> Path:
    levels, strategies = 100, 10
    replicates = tasks // (levels * strategies)
    path = folder / f"scale-{tasks}.yaml"
    path.write_text(
        textwrap.dedent(
            SPEC.format(
                levels=", ".join(str(i) for i in range(levels)),
                strategies=", ".join(f"s{i}" for i in range(strategies)),
                replicates=replicates,
            )
        ).replace("output: out", f"output: out-{tasks}")
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--assemble", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        big = make_spec(folder, args.tasks)
        rows = [("plan, empty ledger", step("plan", big))]
        rows.append(("fill half the ledger", step("fill", big, args.tasks // 2)))
        rows.append(("plan/status, half done", step("plan", big)))
        small = make_spec(folder, args.assemble)
        step("fill", small, args.assemble)
        rows.append((f"assemble {args.assemble} results", step("assemble", small)))
    print(f"design of {args.tasks} tasks (100 x 10 levels x {args.tasks // 1000} replicates)")
    print(f"{'step':<28} {'seconds':>8} {'peak MB':>8}  detail")
    for name, row in rows:
        print(f"{name:<28} {row['seconds']:>8.2f} {row['peak_mb']:>8.0f}  {row['detail']}")


if __name__ == "__main__":
    main()
