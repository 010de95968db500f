"""`kill -USR1` on a run that seems stuck prints where each of its threads is, and the run
goes on to finish as if nothing happened."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "slurm"  # napping.py: a model that sleeps, then draws from its seed

SPEC = """
name: napping
model: napping:run
params: {nap_ms: 400}
factors: {case: [a, b]}
replicates: 3
seed: 5
output: out
"""


def test_sigusr1_prints_every_threads_stack_and_the_run_finishes(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(MODELS)])}
    command = [sys.executable, "-m", "campaign", "run", str(spec), "--quiet", "--workers", "1"]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    ledger = tmp_path / "out" / "ledger"
    deadline = time.monotonic() + 120
    while not ledger.exists():  # the run is under way: its cluster is up, tasks are out
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGUSR1)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "Current thread" in err or "Thread 0x" in err, err
    assert 'File "' in err and "campaign" in err  # frames of the run's own code
    assert (tmp_path / "out" / "results.nc").exists()
