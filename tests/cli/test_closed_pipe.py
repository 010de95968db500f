"""A command whose stdout is a pipe its reader closed (`campaign outputs | head`) stops
quietly: no traceback, no "Exception ignored" from the interpreter's last flush."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from campaign.store.ledger import Ledger
from tests.cli.test_outputs import attach_outputs
from tests.conftest import MM1_TWO_LOADS

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE, as a shell reports a writer ended by a closed pipe


def into_closed_pipe(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`campaign ARGS` with stdout a pipe whose reading end is already closed."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "campaign", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=ENV,
            timeout=300,
        )
    finally:
        os.close(write)


@pytest.fixture(scope="module")
def finished(run_campaign) -> Path:
    output = run_campaign("closed-pipe", MM1_TWO_LOADS)
    attach_outputs(output)  # its tasks' records carry kept outputs, as a program's would
    return output


@pytest.mark.parametrize(
    "args",
    [
        ["outputs", "{spec}"],
        ["outputs", "{spec}", "--task", "{key}", "--show", "stdout"],
        ["models"],
        ["status", "{spec}"],
        ["query", "{out}"],
        ["plan", "{spec}"],
    ],
)
def test_a_command_writing_into_a_closed_pipe_ends_quietly(finished, args):
    spec = finished.parent / "spec.yaml"
    key = min(Ledger(finished).load())
    line = [word.format(spec=spec, out=finished, key=key) for word in args]
    done = into_closed_pipe(*line, cwd=finished.parent)
    assert done.stderr == ""
    assert done.returncode == EXIT_CLOSED_PIPE
