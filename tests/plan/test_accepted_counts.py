"""`--accept-changed` keeps every stored result computed before the change, those of a level
the spec no longer has too, and says so: their count is the one recorded, and a spec that
brings their level back counts them as done under that acceptance."""

from __future__ import annotations

import json
import textwrap

import campaign
from campaign.cli.main import main

SIM = """
import sys
print("value=%s" % (1 if sys.argv[1] == "a" else {b}))
"""

SPEC = """
name: accepted
model:
  command: [python3, sim.py, "{{v}}", "{{seed}}"]
  inputs: [sim.py]
factors:
  v: {levels}
replicates: 2
seed: 1
output: out
"""


def test_accepted_results_count_those_of_levels_the_spec_no_longer_has(
    tmp_path, scheduler_address, capsys
):
    sim, spec = tmp_path / "sim.py", tmp_path / "spec.yaml"
    sim.write_text(textwrap.dedent(SIM.format(b=2)))
    spec.write_text(SPEC.format(levels="[a, b]"))
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    spec.write_text(SPEC.format(levels="[a]"))  # b taken out for a while
    sim.write_text(textwrap.dedent(SIM.format(b=20)))
    assert main(["plan", str(spec), "--accept-changed"]) == 0
    assert (
        "2 stored results were computed before the program or its inputs changed (sim.py): "
        "they would be kept as they are, and so would 2 of cells the spec no longer has\n"
    ) in capsys.readouterr().out
    argv = ["run", str(spec), "--accept-changed", "--scheduler", scheduler_address]
    assert main(argv) == 0
    said = capsys.readouterr()
    assert (
        "the program or its inputs changed (sim.py): 4 stored results kept as they are (2 of "
        "them of cells the spec no longer has) (as asked; recorded in results.nc)"
    ) in said.out + said.err
    spec.write_text(SPEC.format(levels="[a, b]"))  # b is back: its kept results count as done
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.value.sel(v="b").values.tolist() == [2.0, 2.0]
    (choice,) = json.loads(data.attrs["source_changes"])
    assert (choice["choice"], choice["results"], choice["beyond"]) == ("accept", 4, 2)
    note = (  # the tables a paper copies say it, not only the attribute
        "results.nc holds results kept with `campaign run --accept-changed`: 4 (2 of them of "
        "cells the spec then did not have) computed before the program or its inputs changed "
        f"(sim.py), kept as they were on {choice['time']}"
    )
    table = campaign.query(campaign.open_results(tmp_path / "out"), "value")
    for form in ("text", "markdown", "latex"):
        assert note.replace("`", "") in campaign.table(table, form).replace("`", "")
    assert main(["query", str(tmp_path / "out"), "--metric", "value", "--format", "csv"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"campaign: {note}",  # and the warning under the text table, which CSV says too
        "campaign: warning: some intervals rest on 2 replicate(s) (fewer than 5): too few for "
        "an interval to say much; add replicates",
    ]
