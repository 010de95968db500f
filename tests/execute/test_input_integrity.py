"""A program that writes to its input: every task of a worker links the one cached copy, so
the task that changed it and every task that would read it changed fail in one line, and no
result computed from a changed input is stored as if from the input digested."""

from __future__ import annotations

import textwrap

import campaign
from campaign.execute.input_integrity import changed_message

# Counts the lines of its input, then adds one (making its copy writable first: root need not).
WRITER = """#!/bin/sh
n=$(wc -l < data.txt)
chmod u+w data.txt 2>/dev/null
echo more >> data.txt
echo "y=$n"
"""
SPEC = """
name: writer
model:
  command: [./sim.sh, "{replicate}"]
  inputs: [sim.sh, data.txt]
replicates: 4
seed: 2
output: out
"""


def write_campaign(folder, script):
    (folder / "sim.sh").write_text(script)
    (folder / "sim.sh").chmod(0o755)
    (folder / "data.txt").write_text("a\nb\n")
    (folder / "spec.yaml").write_text(textwrap.dedent(SPEC))
    return folder / "spec.yaml"


def test_a_program_writing_to_its_input_fails_every_task_that_saw_it_changed(tmp_path):
    spec = write_campaign(tmp_path, WRITER)
    data = campaign.run(spec, workers=1, progress=False)
    assert "y" not in data  # no task gave a value
    plan = campaign.plan(spec)
    assert (plan.done, len(plan.failed)) == (0, 4)
    records = plan.ledger.load()
    errors = {record["error"] for record in records.values()}
    assert errors == {changed_message("data.txt")}
    assert (tmp_path / "data.txt").read_text() == "a\nb\n"  # the spec's own file untouched


def test_a_program_reading_its_input_runs_every_task_on_the_same_copy(tmp_path):
    spec = write_campaign(tmp_path, WRITER.replace("echo more >> data.txt", ":"))
    data = campaign.run(spec, workers=1, progress=False)
    assert data.y.values.tolist() == [2.0] * 4
