"""One task run by hand: the folder `campaign task --prepare` makes and the line it prints
run the program as its worker ran it, so the program prints the stored numbers again, digit
for digit; a Python model's task gives its numbers again from its params and seed."""

from __future__ import annotations

import shutil
import stat
import subprocess

import pytest

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.models import load_model
from campaign.render.task_by_hand import task_lines

SIM = """#!/bin/sh
# the load from a filled template, a seed of 31 bits, a variable and the task's folder
load=$(cat conf.txt)
echo "value=$(( ($2 % 100003) * load * SCALE ))"
test "$3" = "$(pwd)" && echo "in_folder=1"
"""


@pytest.fixture(scope="module")
def program_campaign(tmp_path_factory, scheduler_address):
    folder = tmp_path_factory.mktemp("byhand")
    (folder / "sim.sh").write_text(SIM)
    (folder / "sim.sh").chmod(0o755 | stat.S_IXUSR)
    (folder / "conf.txt").write_text("{load}\n")
    spec = folder / "spec.yaml"
    spec.write_text(
        """name: byhand
model:
  command: [./sim.sh, "{load}", "{seed31}", "{dir}"]
  inputs: [sim.sh]
  templates: [conf.txt]
  env: {SCALE: "{scale}"}
params: {scale: 3}
factors:
  load: [1, 2]
replicates: 3
seed: 5
output: out
"""
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    return spec, data


def test_the_prepared_line_prints_the_stored_numbers_again(program_campaign, tmp_path, capsys):
    spec, data = program_campaign
    task = campaign.task(spec, where={"load": 2}, replicate=1)
    assert (task.levels, task.replicate, task.params) == ({"load": 2}, 1, {"scale": 3, "load": 2})
    stored = data.sel(load=2, replicate=1)
    assert task.seed == int(stored.seed) and task.status == "ok"
    assert task.metrics == {"value": float(stored.value), "in_folder": 1.0}

    assert main(["task", str(spec), "--task", task.key, "--prepare", str(tmp_path / "t")]) == 0
    printed = capsys.readouterr().out.splitlines()
    line = printed[-1].strip()
    assert printed[0] == f"task {task.key}: load=2, replicate 1, seed {task.seed}"
    assert printed[2] == f"stored: ok; value={float(stored.value)!r}, in_folder=1.0"
    assert line.startswith(f"cd {tmp_path / 't'} && env SCALE=3 {tmp_path / 't' / 'sim.sh'} 2 ")
    assert (tmp_path / "t" / "conf.txt").read_text() == "2\n"  # the template, filled
    again = subprocess.run(line, shell=True, capture_output=True, text=True, check=True).stdout
    assert again == f"value={int(stored.value)}\nin_folder=1\n"


def test_a_task_is_chosen_by_one_level_of_each_factor_or_refused_in_one_line(program_campaign):
    spec, _ = program_campaign
    with pytest.raises(CampaignError, match=r"^choose the task by its key \(task\), or by one "):
        campaign.task(spec)
    with pytest.raises(CampaignError, match=r"^replicate: give a replicate from 0 to 2$"):
        campaign.task(spec, where="load=1")
    with pytest.raises(CampaignError, match=r"^where: choose one level of load \(one task"):
        campaign.task(spec, replicate=0)
    with pytest.raises(CampaignError, match=r"^replicate 3: give a replicate from 0 to 2$"):
        campaign.task(spec, where="load=1", replicate=3)
    with pytest.raises(CampaignError, match=r"^task 'abc': no task of campaign byhand has"):
        campaign.task(spec, key="abc")
    chosen = campaign.task(spec, where="load=1", replicate=0)
    with pytest.raises(CampaignError, match=r"folder .*: give a new or empty folder"):
        chosen.prepare(spec.parent)  # holds the spec: never filled with a task's inputs


def test_a_python_models_task_gives_its_numbers_again_from_params_and_seed(paper_results):
    task = campaign.task(
        paper_results, where={"arrival_rate": 0.3, "service_rate": "slow"}, replicate=2
    )
    assert task.status == "ok"
    again = load_model("mm1").run(task.params, task.seed)
    assert {name: float(again[name]) for name in task.metrics} == task.metrics
    with pytest.raises(CampaignError, match=r"model mm1 is a Python function, with no folder"):
        task.prepare(paper_results.parent / "never")


def test_a_task_whose_program_changed_since_says_so(program_campaign, tmp_path):
    spec, _ = program_campaign
    shutil.copytree(spec.parent, tmp_path / "copy", symlinks=True)
    copy = tmp_path / "copy" / "spec.yaml"
    assert campaign.task(copy, where="load=1", replicate=0).changed is None
    script = tmp_path / "copy" / "sim.sh"
    script.write_text(script.read_text().replace("* SCALE", "* SCALE * 2"))
    task = campaign.task(copy, where="load=1", replicate=0)
    assert task.changed == "the program or its inputs changed (sim.sh)"
    assert task_lines(task)[3] == (
        "changed since it was stored: the program or its inputs changed (sim.sh); run by "
        "hand, it computes with them as they are now"
    )
