"""Shards: which tasks a shard owns, what its folder holds, and what a rerun of it runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

import campaign
from campaign.cli.main import main
from campaign.design.shards import Shard, owners
from campaign.design.tasks import Design
from campaign.errors import CampaignError
from campaign.spec.load import load_spec
from campaign.store.ledger import Ledger
from tests.conftest import MM1_PRECISION as PRECISION

SPEC = """
name: sharded
model: mm1
params: {{customers: 300}}
factors:
  arrival_rate: {rates}
  service_rate: {{fast: 2.0, slow: 1.0}}
paired: [service_rate]
replicates: {replicates}
seed: 8
output: out
"""


def spec_text(rates="[0.05, 0.3, 0.9]", replicates=4):
    return SPEC.format(rates=rates, replicates=replicates)


@pytest.mark.parametrize("text", ["1/3", "3/3", " 2 / 3 ", "1/1"])
def test_shard_syntax_is_i_of_n_counted_from_1(text):
    shard = Shard.parse(text)
    assert f"{shard.index}/{shard.count}" == text.replace(" ", "")


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "3", "1/3/3", "a/b", "-1/3", ""])
def test_a_bad_shard_is_refused_in_one_line(text, write_spec, capsys):
    with pytest.raises(CampaignError):
        Shard.parse(text)
    path = write_spec(spec_text())
    assert main(["run", str(path), f"--shard={text}", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("campaign: error: --shard") and err.count("\n") == 1
    assert "I/N" in err or "between 1 and N" in err
    assert not (path.parent / "out").exists()  # refused before anything was made


def test_shards_never_overlap_cover_every_task_and_differ_by_at_most_one(write_spec):
    spec = spec_text(rates="[0.1, 0.2, 0.3, 0.4, 0.5]", replicates=7)
    design = Design(load_spec(write_spec(spec)))
    keys = design.keys()
    for count in (1, 2, 3, 4, 7, 9, 70, 71):
        owned = np.array([Shard(i, count).owns(design) for i in range(1, count + 1)])
        assert (owned.sum(axis=0) == 1).all()  # every task in exactly one shard
        sizes = owned.sum(axis=1)
        assert sizes.max() - sizes.min() <= 1 and sizes.sum() == 70
        # each shard holds floor(7/n) or ceil(7/n) replicates of every cell
        per_cell = owned.reshape(count, len(design.cells), 7).sum(axis=2)
        assert set(per_cell.ravel()) <= {7 // count, -(-7 // count)}
        # the tasks sorted by key are dealt in turn: the first to shard 1, the next to 2, ...
        shard = owners(design, count)
        dealt = [shard[keys.index(key)] for key in sorted(keys)]
        assert dealt == [i % count for i in range(70)]


def test_which_shard_owns_a_task_follows_from_the_design_alone(write_spec, scheduler_address):
    path = write_spec(spec_text())
    before = owners(Design(load_spec(path)), 3)
    campaign.run(path, scheduler=scheduler_address, progress=False)  # every task stored
    elsewhere = write_spec(spec_text().replace("output: out", "output: other"), "copy.yaml")
    assert (owners(Design(load_spec(path)), 3) == before).all()
    assert (owners(Design(load_spec(elsewhere)), 3) == before).all()


def test_with_a_precision_target_a_shard_owns_whole_cells(write_spec):
    design = Design(load_spec(write_spec(PRECISION)))
    shard = owners(design, 3).reshape(5, 12)
    assert (shard == shard[:, :1]).all()
    # the cells sorted by digest are dealt in turn
    ranked = sorted(range(5), key=lambda cell: design.cell_digests[cell])
    assert [shard[cell, 0] for cell in ranked] == [0, 1, 2, 0, 1]


def test_a_shard_runs_only_its_tasks_into_its_folder_and_writes_no_results(
    write_spec, scheduler_address
):
    path = write_spec(spec_text())
    design = Design(load_spec(path))
    ds = campaign.run(path, scheduler=scheduler_address, progress=False, shard="2/3")
    folder = path.parent / "out" / "shard-2-of-3"
    own = Shard(2, 3).owns(design)
    keys = np.array(design.keys())
    stored = Ledger(folder).load()
    assert set(stored) == set(keys[own])
    assert (ds.attrs["shard"], ds.attrs["shard_tasks"]) == ("2/3", int(own.sum()))
    assert ds.attrs["shard_ok"] + ds.attrs["shard_failed"] == int(own.sum())
    assert ds.attrs["shard_missing"] == 0
    # in memory, the shard's tasks have results and the others are missing
    assert (ds["status"].values.ravel() != 0).tolist() == own.tolist()
    assert sorted(p.name for p in folder.iterdir()) == ["campaign.json", "campaign.lock", "ledger"]
    stored_identity = json.loads((folder / "campaign.json").read_text())
    assert stored_identity["shard"] == {"index": 2, "count": 3}
    assert stored_identity["design"]["spec"] == path.read_text()
    assert not (path.parent / "out" / "results.nc").exists()


def test_a_rerun_of_a_shard_runs_only_its_own_missing_tasks(write_spec, scheduler_address):
    path = write_spec(spec_text())
    options = {"scheduler": scheduler_address, "progress": False, "shard": "1/3"}
    campaign.run(path, **options)
    ledger = Ledger(path.parent / "out" / "shard-1-of-3")
    files = {p.name: p.read_bytes() for p in ledger.files()}
    said = []
    campaign.run(path, say=said.append, **options)  # nothing missing: nothing runs
    assert {p.name: p.read_bytes() for p in ledger.files()} == files
    assert any("0 to run" in line for line in said)
    # two of its tasks lost: a rerun runs exactly those two
    lost = sorted(ledger.load())[:2]
    moved, _ = ledger.set_records_aside(lambda key: key in lost)
    assert moved == 2
    before = set(ledger.files())
    ds = campaign.run(path, **options)
    new = [p for p in ledger.files() if p not in before]
    added = [json.loads(line)["key"] for p in new for line in p.read_text().splitlines()]
    assert sorted(added) == lost and ds.attrs["shard_missing"] == 0


def test_status_and_plan_of_a_shard_count_its_own_tasks(write_spec, scheduler_address, capsys):
    path = write_spec(spec_text())
    own = int(Shard(3, 3).owns(Design(load_spec(path))).sum())
    assert main(["plan", str(path), "--shard", "3/3"]) == 0
    assert (
        f"plan: shard 3/3: 0 of {own} of its tasks done, 0 failed, {own} missing; {own} tasks"
        in (capsys.readouterr().out)
    )
    out = path.parent / "elsewhere"
    code = main(
        ["run", str(path), "--shard", "3/3", "--out", str(out), "--scheduler", scheduler_address]
    )
    text = capsys.readouterr().out
    assert code == 0 and f"shard 3/3: {own} of {own} of its tasks done, 0 failed, 0 missing" in text
    assert "campaign merge" in text and (out / "ledger").is_dir()
    assert main(["status", str(path), "--shard", "3/3", "--out", str(out)]) == 0
    assert f"sharded: shard 3/3: {own} of {own} of its tasks done" in capsys.readouterr().out
    assert main(["status", str(path), "--shard", "1/3", "--out", str(out)]) == 1  # not its tasks


def test_status_of_a_sharded_campaign_before_its_merge_names_the_shard_folders(
    write_spec, scheduler_address, capsys
):
    path = write_spec(spec_text())
    output = path.parent / "out"
    assert main(["run", str(path), "--shard", "2/3", "--scheduler", scheduler_address]) == 0
    capsys.readouterr()
    assert main(["status", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:3] == [
        f"  output: {output}",
        f"  shard folders in it: shard-2-of-3; their tasks count here once merged "
        f"(`campaign merge {output} -o {output}`); `--shard I/N` counts one shard's",
    ]
    assert main(["merge", str(output), "-o", str(output)]) == 1  # shards 1 and 3 missing
    capsys.readouterr()
    own = int(Shard(2, 3).owns(Design(load_spec(path))).sum())
    assert main(["status", str(path)]) == 0
    assert f": {own} done, 0 failed" in capsys.readouterr().out.splitlines()[0]
    # another campaign started afresh in the folder: its shards are no longer this campaign's
    path = write_spec(spec_text().replace("seed: 8", "seed: 9"))
    assert main(["run", str(path), "--new", "--quiet", "--scheduler", scheduler_address]) == 0
    capsys.readouterr()
    assert main(["status", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[2] == (
        "  shard folders of another campaign in it (seed was 8, now 9): shard-2-of-3; "
        "`campaign merge` refuses them"
    )


def test_a_shard_run_refuses_a_confidence_level_before_it_runs(write_spec, capsys):
    """A shard writes no results.nc, so `--confidence` had no effect: `merge` wrote 95 %
    intervals from shards each run with `--confidence 0.9`, without a word."""
    path = write_spec(spec_text())
    assert main(["run", str(path), "--shard", "1/3", "--confidence", "0.9", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --confidence 0.9 with --shard: a shard writes no results.nc, so no "
        "interval of its own; give --confidence to the merge, which writes the campaign's\n"
    )
    assert not (path.parent / "out").exists()
    with pytest.raises(CampaignError) as caught:  # from Python: the parameters' names
        campaign.run(path, shard="1/3", confidence=0.9, progress=False)
    assert str(caught.value) == (
        "confidence 0.9 with shard: a shard writes no results.nc, so no interval of its own; "
        "give confidence to the merge, which writes the campaign's"
    )
    assert not (path.parent / "out").exists()
