"""A folder a program or a model reads (a folder of configuration files) is digested file by
file: a file edited, added or removed makes the stored results stale, as an edited input does."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

import campaign
from campaign.errors import CampaignError
from campaign.plan.sources import current_sources
from campaign.spec.describe import describe_spec
from campaign.spec.load import load_spec

SIM = """
import pathlib, sys
folder = pathlib.Path(sys.argv[1])
print("value=%d" % sum(int(p.read_text()) for p in sorted(folder.rglob("*.conf"))))
"""

SPEC = """
name: folders
model:
  command: [python3, sim.py, "{{cfg}}"]
  inputs: {inputs}
factors:
  cfg: [./small, ./large]
replicates: 1
seed: 1
output: out
"""


def configs(folder: Path) -> Path:
    (folder / "sim.py").write_text(textwrap.dedent(SIM))
    for name, value in (("small", 1), ("large", 100)):
        (folder / name / "more").mkdir(parents=True)
        (folder / name / "a.conf").write_text(str(value))
        (folder / name / "more" / "b.conf").write_text(str(value))
    return folder


def write(folder: Path, inputs: str) -> Path:
    spec = folder / "spec.yaml"
    spec.write_text(SPEC.format(inputs=inputs))
    return spec


def test_a_level_naming_a_folder_beside_the_spec_must_be_among_the_inputs(tmp_path):
    spec = write(configs(tmp_path), "[sim.py]")
    with pytest.raises(CampaignError) as refused:
        load_spec(spec)
    assert str(refused.value).endswith(
        "factors.cfg: './small' is a folder beside the spec but 'small/a.conf' is not among "
        "model.inputs; list the folder there (inputs: [small]) so that each task's folder has "
        "its files and a change to any of them is seen"
    )


def test_a_file_edited_or_added_in_an_input_folder_makes_the_results_stale(
    tmp_path, scheduler_address
):
    spec = write(configs(tmp_path), "[sim.py, small, large]")
    inputs = {i.name for i in load_spec(spec).command.inputs}
    folders = {f"{n}/{f}" for n in ("small", "large") for f in ("a.conf", "more/b.conf")}
    assert inputs == {"sim.py", *folders}
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results.value.values.ravel().tolist() == [2.0, 200.0]
    (tmp_path / "small" / "more" / "b.conf").write_text("5")
    with pytest.raises(CampaignError, match=r"small/more/b\.conf"):
        campaign.run(spec, scheduler=scheduler_address, progress=False)
    results = campaign.run(spec, scheduler=scheduler_address, progress=False, on_change="rerun")
    assert results.value.values.ravel().tolist() == [6.0, 200.0]
    (tmp_path / "large" / ".hidden.conf").write_text("1")  # hidden files count too
    with pytest.raises(CampaignError, match=r"large/\.hidden\.conf"):
        campaign.run(spec, scheduler=scheduler_address, progress=False)


def test_a_broken_link_in_an_input_folder_is_refused_not_left_out(tmp_path):
    spec = write(configs(tmp_path), "[sim.py, small, large]")
    os.symlink(tmp_path / "gone.conf", tmp_path / "small" / "c.conf")
    with pytest.raises(
        CampaignError,
        match=r"'small' is a folder whose files cannot all be "
        r"read: .*small/c\.conf is a broken link",
    ):
        load_spec(spec)


MODEL = """
def run(params, seed):
    return {"value": 1.0}

run.inputs = lambda params: [params["cfg"]]
"""


def test_a_python_model_may_name_a_folder_among_its_inputs(tmp_path, monkeypatch):
    configs(tmp_path)
    (tmp_path / "folder_model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "folder_model", raising=False)
    folder = str(tmp_path / "small")

    def digest() -> str:
        sources = current_sources("folder_model:run", [("cell", {"cfg": folder})])
        return sources.inputs[folder]

    first = digest()
    (tmp_path / "small" / "more" / "b.conf").write_text("7")
    edited = digest()
    (tmp_path / "small" / "more" / "b.conf").rename(tmp_path / "small" / "b.conf")
    assert len({first, edited, digest()}) == 3  # edited, then moved: each a change


def test_validate_shows_an_input_folder_as_its_count_of_files_and_bytes(tmp_path):
    spec = write(configs(tmp_path), "[sim.py, small, large]")
    assert "\n  inputs: sim.py, small/ (2 files, 2 B), large/ (2 files, 6 B)\n" in describe_spec(
        load_spec(spec)
    )
