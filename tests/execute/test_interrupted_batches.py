"""A run stopped (Ctrl-C) while a task of a batch hangs, with no task timeout to end it: the
tasks of that batch that finished before the stop are stored, not lost with the batch."""

from __future__ import annotations

import _thread
import signal
import threading
import time
from pathlib import Path

from campaign.cli import main
from campaign.store.ledger import Ledger

SPEC = """
name: stopped
model:
  command: [/bin/sh, -c, "if [ {{i}} = 4 ]; then touch {started}; n=0; while [ ! -e {release} ]
    && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done; fi; echo x={{i}}", sh]
factors:
  i: [1, 2, 3, 4, 5, 6]
replicates: 1
seed: 4
output: out
"""


def interrupt_when(path: Path) -> threading.Thread:
    """Ctrl-C to this process once ``path`` exists (the hanging task started)."""

    def wait() -> None:
        deadline = time.monotonic() + 120
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        _thread.interrupt_main(signal.SIGINT)

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread


def test_ctrl_c_keeps_the_tasks_a_hanging_batch_finished(tmp_path, scheduler_address, capsys):
    started, release = tmp_path / "started", tmp_path / "release"
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(started=started, release=release))
    interrupt_when(started)
    try:  # one batch of all six tasks: the fourth hangs
        args = ["run", str(spec), "--quiet", "--scheduler", scheduler_address]
        code = main([*args, "--batch-size", "6", "--no-tail-replication"])
    finally:
        release.touch()  # the hanging task ends, freeing the shared cluster's worker
    assert code == 130
    assert "campaign: interrupted; finished results are saved" in capsys.readouterr().err
    records = Ledger(tmp_path / "out").load().values()
    assert sorted((r["cell"]["i"], r["status"], r["metrics"]) for r in records) == [
        (1, "ok", {"x": 1.0}),
        (2, "ok", {"x": 2.0}),
        (3, "ok", {"x": 3.0}),
    ]
    assert all(r["worker"].startswith("tcp://") and r["attempts"] == 1 for r in records)
