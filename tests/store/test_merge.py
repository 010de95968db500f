"""Merge: shards run apart, joined into one results file equal to a single run's."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.design.shards import Shard
from campaign.design.tasks import Design
from campaign.errors import CampaignError
from campaign.pipelines.merge import merge
from campaign.spec.load import load_spec
from campaign.store.ledger import Ledger
from tests.conftest import MM1_PRECISION as PRECISION
from tests.conftest import ledger_keys, load_script

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}

SPEC = """
name: merged
model: mm1
params: {{customers: 300, fail_above: {fail_above}}}
factors:
  arrival_rate: [0.05, 0.3, 0.9]
  service_rate: {{fast: 2.0, slow: 1.0}}
paired: [service_rate]
replicates: {replicates}
seed: {seed}
output: out
"""


def spec_text(seed=8, fail_above=40.0, replicates=4):
    return SPEC.format(seed=seed, fail_above=fail_above, replicates=replicates)


def compare_results():
    return load_script("compare_results")


def assert_bit_identical(first: Path, second: Path) -> None:
    """Every variable and coordinate of the two files, and of their failures groups, holds the
    same bytes (attributes such as the creation time aside)."""
    assert compare_results().differences(first / "results.nc", second / "results.nc") == []
    for group in (None, "failures"):
        a = xr.load_dataset(first / "results.nc", group=group)
        b = xr.load_dataset(second / "results.nc", group=group)
        assert list(a.variables) == list(b.variables)
        for name in a.variables:
            left, right = a[name].values, b[name].values
            assert left.dtype == right.dtype and left.shape == right.shape, name
            if left.dtype.kind == "O":
                assert left.tolist() == right.tolist(), name
            else:
                assert left.tobytes() == right.tobytes(), name


def run_shards(path: Path, scheduler: str, count: int, which=None) -> list[Path]:
    folders = []
    for index in which or range(1, count + 1):
        campaign.run(path, scheduler=scheduler, progress=False, shard=f"{index}/{count}")
        folders.append(path.parent / "out" / f"shard-{index}-of-{count}")
    return folders


def test_three_shards_in_three_processes_merge_into_a_single_runs_results(
    write_spec, tmp_path, scheduler_address, capsys
):
    path = write_spec(spec_text())
    # three shards, each `python -m campaign run --shard I/3` in a process of its own with its
    # own embedded cluster, all at once, as the tasks of a batch array job would run
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "campaign", "run", str(path), "--shard", f"{i}/3"]
            + ["--out", str(tmp_path / f"shard-{i}"), "--workers", "1", "--quiet"],
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in (1, 2, 3)
    ]
    outputs = [process.communicate(timeout=600) for process in processes]
    for (out, err), process in zip(outputs, processes):
        # this seed makes tasks fail (a first interarrival time above 40 s): exit 1 when a
        # shard holds one, and every shard ends with all its tasks stored
        assert process.returncode in (0, 1), err
        assert " 0 missing" in out
    assert sum(process.returncode for process in processes) >= 1
    code = main(
        ["merge", *(str(tmp_path / f"shard-{i}") for i in (1, 2, 3)), "-o", str(tmp_path / "all")]
    )
    out = capsys.readouterr().out
    assert code == 1  # some tasks failed, as in a single run
    assert f"merged 1/3 2/3 3/3 into {tmp_path / 'all'}: " in out and " 0 missing" in out
    campaign.run(path, scheduler=scheduler_address, progress=False)  # the same campaign at once
    single = path.parent / "out"
    assert_bit_identical(tmp_path / "all", single)
    merged = xr.load_dataset(tmp_path / "all" / "results.nc")
    assert (merged["status"] == 2).sum() == 2 and (merged["status"] == 1).sum() == 22
    assert merged.attrs["spec"] == path.read_text()
    assert merged.attrs["merged_shards"] == "1/3 2/3 3/3"
    stored = json.loads((tmp_path / "all" / "campaign.json").read_text())
    assert stored["merged"] == {"count": 3, "shards": ["1/3", "2/3", "3/3"]}
    # the merged folder is an output folder like any other: a run there has nothing to do
    # but retry the failed tasks, which fail again with the same seeds
    said = []
    again = campaign.run(
        path, scheduler=scheduler_address, progress=False, output=tmp_path / "all", say=said.append
    )
    assert any("22 already done, 2 to run" in line for line in said)
    assert again.attrs["tasks_failed"] == 2


def test_precision_campaign_in_shards_merges_into_a_single_runs_rounds(
    write_spec, scheduler_address
):
    path = write_spec(PRECISION)
    folders = run_shards(path, scheduler_address, 3)
    result = merge(folders, path.parent / "all")
    assert result.missing == [] and result.failed == 0
    campaign.run(path, scheduler=scheduler_address, progress=False)
    assert_bit_identical(path.parent / "all", path.parent / "out")
    single = xr.load_dataset(path.parent / "out" / "results.nc")
    # the rounds gave cells different replicate counts, so this compared rounds too
    assert len(set(single["precision_replicates"].values.tolist())) > 1


SELECTION = """
name: merged-selection
model: normal
params: {means: [0.0, 0.3, 1.5], sds: [1.0, 2.0, 1.0], correlation: 0.5}
factors:
  system: [0, 1, 2]
  tag: [a, b, c]
paired: [system]
select: {metric: value, goal: max, among: system, indifference: 0.5, first: 5, batch: 3}
seed: 11
output: out
"""


def test_selection_campaign_in_shards_merges_into_a_single_runs_stages(
    write_spec, scheduler_address
):
    """Each shard runs its groups' stages to their end (a group is dealt whole); the merged
    file holds the single run's tasks, stages and selected systems, bit for bit."""
    path = write_spec(SELECTION)
    folders = run_shards(path, scheduler_address, 2)
    first, second = (ledger_keys(folder) for folder in folders)
    assert first and second and not first & second  # each ran tasks, none twice
    result = merge(folders, path.parent / "all")
    assert result.missing == [] and result.failed == 0
    campaign.run(path, scheduler=scheduler_address, progress=False)
    assert_bit_identical(path.parent / "all", path.parent / "out")
    assert ledger_keys(path.parent / "out") == first | second
    merged = xr.load_dataset(path.parent / "all" / "results.nc")
    assert (
        merged.attrs["selection"]
        == xr.load_dataset(path.parent / "out" / "results.nc").attrs["selection"]
    )
    report = campaign.select(path.parent / "all")
    assert report.groups["selected"].tolist() == ["2", "2", "2"]
    # the stages gave systems different replicate counts, so this compared stages too
    assert len(set(merged["selection_replicates"].values.ravel().tolist())) > 1
    assert report.tasks == int(merged["selection_replicates"].sum()) == merged.attrs["tasks"]


def test_merge_of_incomplete_shards_says_what_is_missing_and_finishes_later(
    write_spec, scheduler_address, capsys
):
    path = write_spec(spec_text(fail_above=1000.0))
    folders = run_shards(path, scheduler_address, 3, which=[1, 3])
    out = path.parent / "all"
    assert main(["merge", *map(str, folders), "-o", str(out)]) == 1
    text = capsys.readouterr().out
    design = Design(load_spec(path))
    lacking = int(Shard(2, 3).owns(design).sum())
    assert f"ok, 0 failed, {lacking} missing" in text
    assert f"shard 2/3: {lacking} tasks missing (its folder was not given)" in text
    merged = xr.load_dataset(out / "results.nc")
    assert (merged["status"].values.ravel() == 0).tolist() == Shard(2, 3).owns(design).tolist()
    # shard 2 done later; a merge of the same folders with it into the same output completes
    folders += run_shards(path, scheduler_address, 3, which=[2])
    assert main(["merge", *map(str, folders), "-o", str(out)]) == 0
    assert "0 missing" in capsys.readouterr().out
    campaign.run(path, scheduler=scheduler_address, progress=False)
    assert_bit_identical(out, path.parent / "out")


def test_a_task_stored_in_two_shard_folders_is_resolved_as_on_one_machine(
    write_spec, scheduler_address
):
    path = write_spec(spec_text(fail_above=1000.0))
    folders = run_shards(path, scheduler_address, 3)
    # another folder of shard 1, where each of its tasks failed, stored after the successes
    again = path.parent / "shard-1-again"
    shutil.copytree(folders[0], again)
    ledger = Ledger(again)
    failed = [
        {"key": key, "status": "failed", "error": "ValueError: elsewhere", "attempts": 1}
        for key in ledger.load()
    ]
    for old in ledger.files():
        old.unlink()
    ledger.append(failed)
    assert Ledger(folders[0]).files()[-1].name < ledger.files()[0].name  # stored later
    merge([*folders, again], path.parent / "all")
    campaign.run(path, scheduler=scheduler_address, progress=False)
    assert_bit_identical(path.parent / "all", path.parent / "out")  # a success beats a failure
    # with only the failures of shard 1, its tasks are failed ones, with their error texts
    result = merge([again, *folders[1:]], path.parent / "failed")
    assert result.failed == len(failed)
    errors = campaign.open_failures(path.parent / "failed")["failure_error"].values
    assert errors.tolist() == ["ValueError: elsewhere"] * len(failed)


@pytest.mark.parametrize(
    ("other", "reason"),
    [
        ({"seed": 9}, "(seed: 8 against 9)"),
        ({"fail_above": 50.0}, "(param fail_above: 40.0 against 50.0)"),
        ({"replicates": 5}, "(replicates: 4 against 5)"),
    ],
)
def test_merge_refuses_a_foreign_campaign_in_one_line_saying_why(
    write_spec, scheduler_address, capsys, other, reason
):
    ours = write_spec(spec_text(), "ours.yaml")
    theirs = write_spec(spec_text(**other).replace("output: out", "output: theirs"), "theirs.yaml")
    campaign.run(ours, scheduler=scheduler_address, progress=False, shard="1/2")
    campaign.run(theirs, scheduler=scheduler_address, progress=False, shard="2/2")
    a, b = ours.parent / "out" / "shard-1-of-2", ours.parent / "theirs" / "shard-2-of-2"
    out = ours.parent / "all"
    assert main(["merge", str(a), str(b), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"campaign: error: merge: {b} holds another campaign than {a} {reason}\n"
    assert not (out / "ledger").exists() and not (out / "results.nc").exists()


def test_merge_refuses_other_input_files_other_shard_counts_and_plain_folders(
    write_spec, scheduler_address
):
    path = write_spec(spec_text())
    first = run_shards(path, scheduler_address, 2, which=[1])[0]
    second = run_shards(path, scheduler_address, 2, which=[2])[0]
    third = run_shards(path, scheduler_address, 3, which=[3])[0]
    with pytest.raises(CampaignError, match=r"is a shard of 3, .* of 2: merge the shards of one"):
        merge([first, third], path.parent / "all")
    # a shard run with other percentiles: its stored samples are the same, but the merged
    # results would keep the first shard's alone (edited by hand here: mm1 keeps no sample)
    stored = json.loads((second / "campaign.json").read_text())
    kept = stored["design"]["spec"]
    stored["design"]["spec"] = kept + "percentiles: [50, 90]\n"
    (second / "campaign.json").write_text(json.dumps(stored))
    with pytest.raises(CampaignError) as refused:
        merge([first, second], path.parent / "all")
    assert str(refused.value) == (
        f"merge: {second} keeps percentiles [50, 90] of each sample, {first} [50, 95, 99]: the "
        "merged results would keep one shard's alone; run every shard with the same "
        "percentiles (`campaign run SPEC --shard I/N` computes nothing again: the percentiles "
        "are taken from the stored samples)"
    )
    stored["design"]["spec"] = kept
    # a shard that read an input file with other content (edited by hand here: mm1 reads none)
    stored["design"]["inputs"] = {"/data/trace.swf": "ab" * 32}
    (second / "campaign.json").write_text(json.dumps(stored))
    with pytest.raises(CampaignError, match=r"other content of input file /data/trace.swf"):
        merge([first, second], path.parent / "all")
    campaign.run(path, scheduler=scheduler_address, progress=False)
    with pytest.raises(CampaignError, match=r"was not run as a shard"):
        merge([first, path.parent / "out"], path.parent / "all")
    assert not (path.parent / "all").exists()
    # a plain run's folder of another campaign is no output for these shards
    other = write_spec(spec_text(seed=9).replace("output: out", "output: other"), "other.yaml")
    campaign.run(other, scheduler=scheduler_address, progress=False)
    before = sorted(p.name for p in Ledger(other.parent / "other").files())
    with pytest.raises(CampaignError) as refused:
        merge([first], other.parent / "other")
    assert str(refused.value) == (  # an earlier merge's, a plain run's: not the shards' to fix
        f"merge: -o {other.parent / 'other'} already holds the results of another campaign than "
        f"{first} (seed: 8 against 9): merge into another folder"
    )
    assert sorted(p.name for p in Ledger(other.parent / "other").files()) == before


def test_merge_into_a_plain_runs_folder_adds_the_shards_and_counts_only_new_records(
    write_spec, scheduler_address, capsys
):
    """A plain run's output folder of the same campaign takes the shards' records (README:
    merging again adds records), and `records copied` counts only records new to it, also
    once the merge compacted its ledger."""
    half = write_spec(spec_text(fail_above=1000.0, replicates=6), "half.yaml")
    campaign.run(half, scheduler=scheduler_address, progress=False)  # out: replicates 0-5
    path = write_spec(spec_text(fail_above=1000.0, replicates=12))
    folders = run_shards(path, scheduler_address, 2)
    for folder in folders:  # one file per record: the merged ledger gets compacted
        ledger = Ledger(folder)
        records = ledger.load()
        for old in ledger.files():
            old.unlink()
        for record in records.values():
            ledger.append([record])
    out = path.parent / "out"
    assert main(["merge", *map(str, folders), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "merged 1/2 2/2 into " in text
    assert ": 72 tasks ok, 0 failed, 0 missing (72 records copied)" in text
    assert len(Ledger(out).files()) == 1  # compacted
    assert main(["merge", *map(str, folders), "-o", str(out)]) == 0
    assert ": 72 tasks ok, 0 failed, 0 missing (0 records copied)" in capsys.readouterr().out
    campaign.run(path, scheduler=scheduler_address, progress=False, output=path.parent / "one")
    assert_bit_identical(out, path.parent / "one")


def test_merged_values_are_the_model_s_own(write_spec, scheduler_address):
    """Not merely equal to a single run: each merged value is what the model returns."""
    from campaign.models.check import mm1

    path = write_spec(spec_text(fail_above=1000.0, replicates=2))
    folders = run_shards(path, scheduler_address, 2)
    # into the campaign's own output folder, which holds the shards' default folders
    dataset = merge(folders, path.parent / "out").dataset
    assert xr.load_dataset(path.parent / "out" / "results.nc").identical(dataset)
    for rate in (0.05, 0.3, 0.9):
        for label, service in (("fast", 2.0), ("slow", 1.0)):
            for r in range(2):
                cell = {"arrival_rate": rate, "service_rate": label, "replicate": r}
                seed = int(dataset["seed"].sel(cell))
                params = {"customers": 300, "fail_above": 1000.0}
                params.update(arrival_rate=rate, service_rate=service)
                assert float(dataset["mean_wait"].sel(cell)) == mm1(params, seed)["mean_wait"]
    assert np.isfinite(dataset["mean_wait_mean"].values).all()


SITE_SPEC = """
name: sites
model: jobs
params: {jobs: 100}
factors:
  trace: [traces/a.swf, traces/b.swf]
  scheduler: [fcfs, easy]
paired: [scheduler]
replicates: 3
seed: 3
output: out
"""


def site(root: Path, name: str, traces: dict[str, str]) -> Path:
    """A site's copy of the spec and its traces (slices of tests/data), under its own path."""
    folder = root / name
    (folder / "traces").mkdir(parents=True)
    for file, source in traces.items():
        data = gzip.decompress((REPO / "tests" / "data" / f"{source}.swf.gz").read_bytes())
        (folder / "traces" / file).write_bytes(data)
    (folder / "spec.yaml").write_text(SITE_SPEC)
    return folder / "spec.yaml"


def test_sites_with_the_same_traces_under_other_paths_merge_and_other_content_is_refused(
    tmp_path, scheduler_address
):
    same = {"a.swf": "KTH-SP2-1996-2.1-cln", "b.swf": "HPC2N-2002-2.1-cln"}
    north, south = site(tmp_path, "north", same), site(tmp_path, "south", same)
    other = site(
        tmp_path, "west", {"a.swf": "KTH-SP2-1996-2.1-cln", "b.swf": "SDSC-BLUE-2000-4.2-cln"}
    )
    for spec, index in ((north, 1), (south, 2), (other, 2)):
        campaign.run(spec, scheduler=scheduler_address, progress=False, shard=f"{index}/2")
    shard = {spec.parent.name: spec.parent / "out" for spec in (north, south, other)}
    first, second = shard["north"] / "shard-1-of-2", shard["south"] / "shard-2-of-2"
    result = merge([first, second], tmp_path / "all")
    assert (result.failed, result.missing) == (0, [])
    campaign.run(north, scheduler=scheduler_address, progress=False)  # all of it, at one site
    assert_bit_identical(tmp_path / "all", north.parent / "out")
    inputs = json.loads((tmp_path / "all" / "campaign.json").read_text())["sources"]["inputs"]
    assert sorted(inputs) == sorted(
        str(site / "traces" / name) for site in (north.parent, south.parent) for name in same
    )
    west = shard["west"] / "shard-2-of-2"
    b = other.parent / "traces" / "b.swf"
    with pytest.raises(CampaignError) as refusal:
        merge([first, west], tmp_path / "mixed")
    assert str(refusal.value) == (
        f"merge: {west} holds another campaign than {first} (computed from other content of "
        f"input file {b}, read in {west}); give every shard the same input files"
    )


def test_a_grown_campaign_runs_in_shards_from_copies_of_the_merged_folder(
    write_spec, scheduler_address
):
    path = write_spec(spec_text(fail_above=1000.0, replicates=2))
    merge(run_shards(path, scheduler_address, 2), path.parent / "all")
    path.write_text(spec_text(fail_above=1000.0, replicates=3))  # one more replicate
    copies = []
    for index in (1, 2):
        copy = path.parent / f"start-{index}"
        shutil.copytree(path.parent / "all", copy)
        before = set(Ledger(copy).files())
        campaign.run(
            path, scheduler=scheduler_address, progress=False, shard=f"{index}/2", output=copy
        )
        new = [p for p in Ledger(copy).files() if p not in before]
        copies.append((copy, [json.loads(line)["replicate"] for p in new for line in p.open()]))
    assert sorted(r for _, ran in copies for r in ran) == [2] * 6  # only the new tasks ran
    merge([copy for copy, _ in copies], path.parent / "grown")
    campaign.run(path, scheduler=scheduler_address, progress=False)
    assert_bit_identical(path.parent / "grown", path.parent / "out")
    # into the earlier merge itself, of 2 replicates: its records join, as a plain run's do
    merge([copy for copy, _ in copies], path.parent / "all")
    assert_bit_identical(path.parent / "all", path.parent / "out")


def test_a_damaged_record_in_a_shard_is_skipped_said_and_its_task_missing(
    write_spec, scheduler_address, capsys
):
    path = write_spec(spec_text(fail_above=1000.0))
    folders = run_shards(path, scheduler_address, 2)
    ledger_file = Ledger(folders[1]).files()[0]
    lines = ledger_file.read_bytes().splitlines(keepends=True)
    damaged_key = json.loads(lines[0])["key"]
    lines[0] = lines[0].replace(b'"mean_wait": ', b'"mean_wait": 1')  # an edited value
    ledger_file.write_bytes(b"".join(lines))
    out = path.parent / "all"
    assert main(["merge", *map(str, folders), "-o", str(out)]) == 1
    text = capsys.readouterr().out
    assert f"{folders[1]}: ledger: 1 damaged record skipped in {folders[1] / 'ledger'}/" in text
    assert "shard 2/2: 1 tasks missing\n" in text
    merged = xr.load_dataset(out / "results.nc")
    missing = merged["status"].values.ravel() == 0
    assert np.array(Design(load_spec(path)).keys())[missing].tolist() == [damaged_key]
    assert damaged_key not in Ledger(out).load()


LATIN = """
name: latin
model: mm1
params: {{customers: 300}}
factors:
  arrival_rate: {{low: 0.1, high: 0.9}}
  service_rate: {{fast: 2.0, slow: 1.0}}
paired: [service_rate]
design: {{latin_hypercube: {{points: {points}}}}}
replicates: 2
seed: 4
output: {output}
"""


def test_a_latin_hypercube_in_shards_merges_as_one_run_and_other_points_are_refused(
    write_spec, scheduler_address
):
    path = write_spec(LATIN.format(points=7, output="out"))
    folders = run_shards(path, scheduler_address, 3)
    result = merge(folders, path.parent / "all")
    assert (result.failed, result.missing) == (0, [])
    campaign.run(path, scheduler=scheduler_address, progress=False)
    assert_bit_identical(path.parent / "all", path.parent / "out")
    assert xr.load_dataset(path.parent / "all" / "results.nc")["status"].size == 28
    more = write_spec(LATIN.format(points=8, output="more"), "more.yaml")
    campaign.run(more, scheduler=scheduler_address, progress=False, shard="2/3")
    other = path.parent / "more" / "shard-2-of-3"
    with pytest.raises(CampaignError) as refusal:
        merge([folders[0], other], path.parent / "mixed")
    assert str(refusal.value) == (
        f"merge: {other} holds another campaign than {folders[0]} (design: latin_hypercube "
        "(7 points) against latin_hypercube (8 points))"
    )


def test_merge_names_the_factor_whose_levels_differ(write_spec, scheduler_address):
    ours = write_spec(spec_text(), "ours.yaml")
    text = spec_text().replace("[0.05, 0.3, 0.9]", "[0.05, 0.3, 0.8]")
    theirs = write_spec(text.replace("output: out", "output: theirs"), "theirs.yaml")
    campaign.run(ours, scheduler=scheduler_address, progress=False, shard="1/2")
    campaign.run(theirs, scheduler=scheduler_address, progress=False, shard="2/2")
    a, b = ours.parent / "out" / "shard-1-of-2", ours.parent / "theirs" / "shard-2-of-2"
    with pytest.raises(CampaignError) as refusal:
        merge([a, b], ours.parent / "all")
    assert str(refusal.value).endswith(
        "(factor arrival_rate: [0.05, 0.3, 0.9] against [0.05, 0.3, 0.8])"
    )
