"""`plan --rerun-changed` counts what `run --rerun-changed` does: the changed results are set
aside before the run decides its precision rounds, so the plan decides them without them."""

from __future__ import annotations

import textwrap

import campaign
from campaign.cli.main import main

SIM = """
import random, sys
print("value=%f" % (10 + random.Random(int(sys.argv[1])).gauss(0, 3)))
"""

SPEC = """
name: rounds
model:
  command: [python3, sim.py, "{seed}"]
  inputs: [sim.py]
precision: {metrics: [value], half_width: 0.05, min_replicates: 3, max_replicates: 12}
seed: 1
output: out
"""


def test_plan_counts_the_rounds_of_a_rerun_as_the_run_does(tmp_path, scheduler_address, capsys):
    (tmp_path / "sim.py").write_text(textwrap.dedent(SIM))
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    first = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert int(first.status.count()) == 12  # every round the target asked for, up to the most
    with (tmp_path / "sim.py").open("a") as sim:
        sim.write("# edited\n")
    plan = campaign.plan(spec, on_change="rerun")
    assert (plan.done, len(plan.changed), len(plan.to_run)) == (0, 12, 3)
    assert main(["plan", str(spec), "--rerun-changed"]) == 0
    planned = capsys.readouterr().out
    assert (
        "12 stored results were computed before the program or its inputs changed (sim.py): "
        "they would be set aside, 3 run again first\n"
        "plan: 0 done, 0 failed (will be retried), 0 missing, 3 to compute again; "
        "3 tasks would run\n"
        "precision: 1 cell still running (later rounds follow their results)\n"
        "  value: no interval yet (1 cell with fewer than 2 results)\n"
    ) in planned
    argv = ["run", str(spec), "--rerun-changed", "--scheduler", scheduler_address]
    assert main(argv) == 0
    ran = capsys.readouterr()
    assert "; 0 already done, 3 to run in this round" in ran.out + ran.err
