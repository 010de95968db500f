"""results.nc read after what computed it changed: every table, figure, export and report of
it says which of its numbers are stale (the same comparison as `campaign status` makes), and a
folder read where its program is not says the check could not be made, without failing; a
copy of results.nc away from its folder is checked against the digests it keeps."""

from __future__ import annotations

import shutil
import textwrap

import campaign
from campaign.cli.main import main
from tests.conftest import read_notes

SIM = '#!/bin/sh\nread scale < data.txt\necho "value=$(( $1 % 100 * scale + $2 ))"\n'
SPEC = """
name: stale
model:
  command: [./sim, "{seed}", "{level}"]
  inputs: [sim, data.txt]
factors:
  level: [1, 2]
replicates: 2
seed: 6
output: out
"""


def test_a_program_input_edited_or_the_program_gone_is_said_on_every_read(
    tmp_path, scheduler_address, capsys
):
    (tmp_path / "sim").write_text(SIM)
    (tmp_path / "sim").chmod(0o755)
    (tmp_path / "data.txt").write_text("1\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent(SPEC))
    out = tmp_path / "out"
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert read_notes(out, "value") == ([], [])

    (tmp_path / "data.txt").write_text("2\n")
    note = (
        "results.nc holds 4 of its 4 results computed before the program or its inputs "
        f"changed (data.txt): they are stale; `campaign run {out} --rerun-changed` computes "
        "them again"
    )
    assert read_notes(out, "value") == ([note], [note])
    capsys.readouterr()
    assert main(["export", str(out), "--out", str(tmp_path / "tasks.csv")]) == 0
    assert capsys.readouterr().err.splitlines() == [f"campaign: {note}"]
    table = campaign.query(campaign.open(out).results(), "value")  # the handle: the same
    assert note in campaign.table(table).splitlines()
    copy = tmp_path / "copy" / "results.nc"  # away from campaign.json: its own digests
    copy.parent.mkdir()
    shutil.copy(out / "results.nc", copy)
    table = campaign.query(campaign.open_results(copy), "value")
    assert note.replace(f"run {out}", f"run {spec}") in campaign.table(table).splitlines()

    (tmp_path / "sim").unlink()  # the folder read where the program is not
    note = (
        f"results.nc could not be checked against the model that computed it ({spec}: "
        f"model.inputs: 'sim' is not found ({tmp_path / 'sim'})): whether its numbers are "
        "stale is not known"
    )
    assert read_notes(out, "value") == ([note], [note])
