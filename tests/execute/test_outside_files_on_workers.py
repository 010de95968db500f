"""Files a program reads by absolute path (a param's value, an argument) are read on each
worker, never sent: a worker whose copy differs from the one the run was planned with (a
node's local copy) fails those tasks, or stops the run, naming the file, rather than storing
numbers computed from other content."""

from __future__ import annotations

import campaign
from campaign.execute.items import task_items
from campaign.execute.program_task import command_code, differing_files
from campaign.execute.worker import run_batch
from campaign.plan.command_declaration import worker_code, worker_model
from campaign.plan.sources import file_digest

SIM = '#!/bin/sh\necho "value=$(cat "$1")"\n'
SPEC = """
name: outside
model:
  command: [./sim, "{{scale}}", {base}]
  inputs: [sim]
params:
  scale: {scale}
replicates: 1
seed: 1
output: out
"""


def planned(tmp_path):
    """A plan of one task reading data/scale.txt (a param) and data/base.txt (an argument)."""
    (tmp_path / "data").mkdir()
    for name, value in (("scale.txt", "1.0"), ("base.txt", "2.0")):
        (tmp_path / "data" / name).write_text(value)
    (tmp_path / "sim").write_text(SIM)
    (tmp_path / "sim").chmod(0o755)
    data = tmp_path / "data"
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(scale=data / "scale.txt", base=data / "base.txt"))
    plan = campaign.plan(spec)
    return plan, worker_model(plan.spec, plan.sources), data


def test_a_worker_reading_another_copy_of_a_file_a_param_names_fails_the_task(tmp_path):
    plan, command, data = planned(tmp_path)
    (item,) = task_items(plan, [0], "run")
    assert item.digests == (file_digest(data / "scale.txt"),)
    task = (item.key, item.params, item.seed, 0, item.digests)
    (data / "scale.txt").write_text("1.25")  # this worker's copy
    _, results, *_ = run_batch(command, [task], None)
    assert results[0]["status"] == "failed"
    assert results[0]["error"].startswith(
        f"model command: input {data / 'scale.txt'} has other content (digest "
    ), results[0]["error"]
    assert "give every worker the same file (or copy it at that path there)" in results[0]["error"]
    (data / "scale.txt").write_text("1.0")  # as planned
    _, results, *_ = run_batch(command, [task], None)
    assert results[0]["status"] == "ok", results


def test_a_worker_reading_another_copy_of_a_file_an_argument_names_runs_other_code(tmp_path):
    plan, command, data = planned(tmp_path)
    assert command_code(command) == worker_code(command, plan.sources)
    (data / "base.txt").write_text("3.25")  # this worker's copy
    assert command_code(command) != worker_code(command, plan.sources)
    assert differing_files(command) == [f"{data / 'base.txt'} differs"]


def test_a_file_a_param_names_that_a_task_writes_fails_the_next_task_saying_so(tmp_path):
    """A program that writes the file its param names (``--out /data/{size}.out``): the next
    task here found it changed, and failed saying to give every worker the same file, as if
    the workers held other copies."""
    plan, command, data = planned(tmp_path)
    (tmp_path / "sim").write_text('#!/bin/sh\necho 9 >> "$1"\necho "value=1"\n')
    plan = campaign.plan(tmp_path / "spec.yaml")
    command = worker_model(plan.spec, plan.sources)
    (item,) = task_items(plan, [0], "run")
    task = (item.key, item.params, item.seed, 0, item.digests)
    _, results, *_ = run_batch(command, [task, task], None)
    assert [result["status"] for result in results] == ["ok", "failed"]
    assert results[1]["error"].startswith(
        f"model command: input {data / 'scale.txt'} changed on this worker after an earlier "
        "task found it as planned (digest "
    ), results[1]["error"]
    assert "name it in the task's folder ({dir}/..., or a relative path)" in results[1]["error"]
