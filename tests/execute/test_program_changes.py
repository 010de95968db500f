"""A program's files replaced while a campaign runs: a worker digests the program, its
interpreter and its libraries as each batch starts and as it ends, so a batch that ran while
they changed comes back saying so, and nothing it computed is stored."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import campaign
from campaign.errors import CampaignError
from campaign.execute.program_task import command_code
from campaign.execute.worker import CHANGED_WHILE_RUNNING, run_batch
from campaign.plan.command_declaration import worker_model
from campaign.plan.program_sources import command_sources
from campaign.spec.load import load_spec

# Appends a line to its own file each time it runs: its digest changes as the task runs.
CHANGING = '#!/bin/sh\necho "# ran once more" >> "$0"\necho "y=$1"\n'
SPEC = """
name: changing
model:
  command: ["{bin}/changing", "{{replicate}}"]
replicates: {replicates}
seed: 3
output: out
"""


@pytest.fixture
def changing_spec(tmp_path):
    def write(replicates: int):
        (tmp_path / "bin").mkdir(exist_ok=True)
        program = tmp_path / "bin" / "changing"
        program.write_text(CHANGING)
        program.chmod(0o755)
        path = tmp_path / "spec.yaml"
        path.write_text(textwrap.dedent(SPEC.format(bin=tmp_path / "bin", replicates=replicates)))
        return path

    return write


def test_a_batch_whose_program_changes_as_it_runs_returns_both_digests(changing_spec):
    spec = load_spec(changing_spec(2))
    command = worker_model(spec, command_sources(spec.command))
    before = command_code(command)
    _, results, code, *_ = run_batch(command, [("a", {}, 5, 0), ("b", {}, 6, 1)], None)
    assert [r["status"] for r in results] == ["ok", "ok"]
    assert code == f"{before}{CHANGED_WHILE_RUNNING}{command_code(command)}"
    assert command_code(command) != before
    _, _, again, *_ = run_batch(command, [("c", {}, 7, 2)], None)  # the next batch: digested
    assert again.startswith(f"{code.split(CHANGED_WHILE_RUNNING)[1]}{CHANGED_WHILE_RUNNING}")


def test_a_program_that_changes_while_it_runs_stops_the_run_storing_nothing(
    changing_spec, scheduler_address
):
    spec = changing_spec(1)
    with pytest.raises(CampaignError) as raised:
        campaign.run(spec, scheduler=scheduler_address, progress=False)
    message = str(raised.value)
    assert "files of model command (the program, its libraries or its interpreter) " in message
    changed = f"changed while a batch of it ran ({spec.parent / 'bin' / 'changing'} differs); "
    assert changed + "the results of that batch were not stored" in message
    assert "\n" not in message
    plan = campaign.plan(spec)
    assert (plan.done, plan.missing) == (0, [0])


LOGGING = """
import os, sys
with open(os.environ["LOG"], "a") as log:
    log.write("ran\\n")
print("y=%s" % sys.argv[1])
"""


def logging_spec(folder: Path, log: Path) -> Path:
    """A spec in ``folder`` whose program appends to ``log``, named by absolute path in env."""
    (folder / "sim.py").write_text(textwrap.dedent(LOGGING))
    spec = folder / "spec.yaml"
    spec.write_text(
        textwrap.dedent(f"""
        name: logging
        model:
          command: [python3, sim.py, "{{seed}}"]
          inputs: [sim.py]
          env: {{LOG: {log}}}
        replicates: 1
        seed: 3
        output: out
        """)
    )
    return spec


def test_a_file_the_program_writes_named_by_absolute_path_is_named_in_the_stop(
    tmp_path, scheduler_address
):
    """``LOG: /scratch/log.txt`` names a file the program writes: digested as one it reads,
    it changes as the batch runs. The run stopped with `files of model command (the program,
    its libraries or its interpreter) changed`, naming neither the file nor what to do."""
    log = tmp_path / "scratch" / "log.txt"
    log.parent.mkdir()
    log.write_text("an earlier run\n")
    spec = logging_spec(tmp_path, log)
    with pytest.raises(CampaignError) as raised:
        campaign.run(spec, scheduler=scheduler_address, progress=False)
    message = str(raised.value)
    assert f", {log} changed while a batch of model command ran; " in message
    assert "name it in the task's folder ({dir}/log.txt" in message
    assert "\n" not in message


def test_a_run_whose_program_writes_a_file_named_by_absolute_path_says_so(
    tmp_path, scheduler_address
):
    """The file did not exist when the run was planned: the run ended as if nothing
    happened, and the next one refused every result as computed before the file changed."""
    log = tmp_path / "scratch" / "log.txt"
    log.parent.mkdir()
    spec = logging_spec(tmp_path, log)
    said: list[str] = []
    campaign.run(spec, scheduler=scheduler_address, progress=False, say=said.append)
    note = f"note: {log} did not exist when this run was planned and exists now: "
    assert any(line.startswith(note) for line in said), said
