"""A program's memory is the task's: `status`, `plan --estimate` and the cluster file size a
campaign of programs on what the program and its children held, not on the worker process
that waited for them (a few tens of MB whatever the program holds)."""

from __future__ import annotations

import textwrap

import pytest

from campaign.cli.main import main
from campaign.pipelines.sizing_pilot import pilot
from campaign.store.ledger import Ledger

HOLD = """
import subprocess, sys, time
megabytes, children = int(sys.argv[1]), int(sys.argv[2])
if children:  # children holding their share side by side, waited for together
    share = str(megabytes // children)
    started = [subprocess.Popen([sys.executable, sys.argv[0], share, "0", "2"],
                                stdout=subprocess.DEVNULL) for _ in range(children)]
    codes = [child.wait() for child in started]
    print(f"held={megabytes}")
    sys.exit(max(codes))
block = b"\\x01" * (megabytes * 10**6)  # written, so resident
time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0)
print(f"held={len(block) // 10**6}")
"""

SPEC = """
name: holding
model:
  command: [python3, hold.py, "{megabytes}", "{children}"]
  env: {SEED: "{seed}"}
  inputs: [hold.py]
factors:
  megabytes: [300]
  children: [0, 3]
replicates: 2
seed: 7
output: out
"""

MB = 10**6


@pytest.fixture
def holding(tmp_path):
    (tmp_path / "hold.py").write_text(textwrap.dedent(HOLD))
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    return tmp_path / "spec.yaml"


def test_a_programs_peak_memory_and_its_childrens_together_size_the_campaign(
    holding, scheduler_address, capsys
):
    found, planned = pilot(holding, 2, 1.0, 4, scheduler=scheduler_address, progress=False)
    records = Ledger(holding.parent / "out").load()
    assert len(records) == 4 and {r["status"] for r in records.values()} == {"ok"}, records
    for record in records.values():
        assert record["metrics"] == {"held": 300.0}
        # one process of 300 MB (the kernel's peak of it), or three of 100 MB side by side
        # (their session's resident memory, summed while they run); the interpreters' own
        # few MB on top, and not the worker's
        assert 300 * MB <= record["peak_memory"] < 450 * MB, record
    assert 300 * MB <= found.peak_memory < 450 * MB
    assert planned.job_memory == pytest.approx(found.peak_memory * 1.5 * planned.job_cores)
    assert main(["status", str(holding)]) == 0
    cost = next(line for line in capsys.readouterr().out.splitlines() if "cost:" in line)
    assert cost.endswith(f"peak memory {found.peak_memory / MB:.3g} MB")
