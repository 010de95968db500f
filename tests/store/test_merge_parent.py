"""`campaign merge OUTPUT -o OUTPUT`: the one folder that holds a campaign's `shard-I-of-N`
folders (run --shard's default output, an array job's) merges like the shards named one by one."""

from __future__ import annotations

from pathlib import Path

import campaign
from campaign.cli.main import main
from tests.conftest import load_script

SPEC = """
name: parent
model: mm1
params: {customers: 300}
factors:
  arrival_rate: [0.3, 0.6, 0.9]
replicates: 4
seed: 12
output: out
"""


def differences(first: Path, second: Path) -> list[str]:
    return load_script("compare_results").differences(first, second)


def test_the_folder_of_the_shards_merges_into_itself(write_spec, scheduler_address, capsys):
    path = write_spec(SPEC)
    out = path.parent / "out"
    for index in (1, 2, 3):
        campaign.run(path, scheduler=scheduler_address, progress=False, shard=f"{index}/3")
    assert main(["merge", str(out), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"merged 1/3 2/3 3/3 into {out}: 12 tasks ok, 0 failed, 0 missing" in said
    single = campaign.run(
        path, scheduler=scheduler_address, progress=False, output=path.parent / "single"
    )
    assert single.attrs["tasks_ok"] == 12
    assert differences(out / "results.nc", path.parent / "single" / "results.nc") == []
    # merging again (a shard rerun since, say) joins the earlier merge and the shards anew
    assert main(["merge", str(out), "-o", str(out)]) == 0
    assert "12 tasks ok, 0 failed, 0 missing" in capsys.readouterr().out
    assert differences(out / "results.nc", path.parent / "single" / "results.nc") == []
