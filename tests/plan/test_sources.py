"""Stored results never outlive the code or the input files they were computed from.

A model's code edited, or a trace rewritten at the same path, is refused in one line naming the
file before anything runs; --rerun-changed computes exactly the affected tasks again (results
equal to a fresh run's), --accept-changed keeps them, and results.nc records the digests and
the choice. Runs go through the `campaign` command with its embedded cluster, whose worker
processes can import the test's own model.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import json
import os
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.models.grid import inputs as grid_inputs
from campaign.models.jobs import inputs as jobs_inputs
from campaign.plan.sources import Sources, combined_digest, compare
from tests.conftest import dask_cluster, read_notes

DATA = Path(__file__).resolve().parents[1] / "data"

MODEL = """
import numpy as np

SHIFT = {shift}


def run(params, seed):
    rng = np.random.default_rng(seed)
    return {{"value": SHIFT + params["level"] + rng.random()}}
"""

SPEC = """
name: edited
model: edited_model:run
factors:
  level: [0, 10]
replicates: 2
seed: 5
output: {output}
"""

TRACE_SPEC = """
name: traces
model: jobs
params: {{jobs: 100, scheduler: easy}}
factors:
  trace: [traces/a.swf, traces/b.swf]
replicates: 2
seed: 3
output: {output}
"""


@pytest.fixture
def campaign_cli(tmp_path, monkeypatch, capsys):
    """The `campaign` command, working in the test's folder, as a new process would run it but
    in this one (a process's start is not what these tests are about): the test model is
    imported anew by each command, here and by the embedded cluster's worker processes."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    paths = [str(tmp_path), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, paths)))
    monkeypatch.delitem(sys.modules, "edited_model", raising=False)

    def command(*args: str) -> tuple[int, str, str]:
        sys.modules.pop("edited_model", None)  # as a new process: the code as it is now
        importlib.invalidate_caches()
        capsys.readouterr()  # what this command prints alone
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    def run_ok(spec: Path, *options: str) -> str:
        code, out, err = command("run", str(spec), "--workers", "1", "--quiet", *options)
        assert code == 0, err
        return out

    def refused(spec: Path) -> str:
        code, out, err = command("run", str(spec), "--workers", "1", "--quiet")
        assert code == 2, out
        assert err.count("\n") == 1 and "Traceback" not in err
        return err

    def status(spec: Path) -> str:
        code, out, err = command("status", str(spec))
        assert code == 0, err
        return out

    return run_ok, refused, status


def write_model(folder: Path, shift: float) -> Path:
    path = folder / "edited_model.py"
    path.write_text(textwrap.dedent(MODEL.format(shift=shift)))
    return path


def blake2b(path: Path) -> str:
    return hashlib.blake2b(path.read_bytes(), digest_size=32).hexdigest()


def set_aside_records(output: Path) -> list[dict]:
    """The records kept in the output folder's ledger.changed-* folders."""
    files = sorted(output.glob("ledger.changed-*/*.jsonl"))
    return [json.loads(line) for path in files for line in path.read_text().splitlines()]


def test_an_edited_model_is_refused_then_kept_or_computed_again(tmp_path, campaign_cli):
    run_ok, refused, status = campaign_cli
    source = write_model(tmp_path, 0.0)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(output="out"))
    run_ok(spec)
    first = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert first.attrs["model_code_files"] == json.dumps({"edited_model.py": blake2b(source)})
    assert first.attrs["model_code_digest"] == "blake2b-256:" + combined_digest(
        {"edited_model.py": blake2b(source)}
    )
    assert json.loads(first.attrs["source_changes"]) == []
    # Unchanged: nothing runs, and what reads results.nc says nothing of it.
    assert "4 already done, 0 to run" in run_ok(spec)
    assert read_notes(tmp_path / "out", "value") == ([], [])

    write_model(tmp_path, 100.0)
    # What reads results.nc says its numbers are stale, and how to compute them again.
    note = (
        "results.nc holds 4 of its 4 results computed before the code of model "
        "edited_model:run changed (edited_model.py): they are stale; "
        f"`campaign run {tmp_path / 'out'} --rerun-changed` computes them again"
    )
    assert read_notes(tmp_path / "out", "value") == ([note], [note])
    # status refuses nothing, and says which done results the edit concerns.
    assert status(spec).splitlines()[2] == (
        "  4 of the done results were computed before the code of model edited_model:run "
        "changed (edited_model.py): `campaign run` refuses them until told --rerun-changed "
        "(compute them again) or --accept-changed (keep them)"
    )
    assert refused(spec) == (
        f"campaign: error: {tmp_path / 'out'}: 4 stored results were computed before the code "
        "of model edited_model:run changed (edited_model.py); rerun with --rerun-changed to "
        "compute them again (the earlier ones are kept in ledger.changed-*), or with "
        "--accept-changed to keep them as they are (recorded in results.nc)\n"
    )
    # Kept as they are: nothing runs, the values stay, the choice is recorded.
    out = run_ok(spec, "--accept-changed")
    assert "edited_model.py): 4 stored results kept as they are" in out
    assert "4 already done, 0 to run" in out
    kept = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert np.array_equal(kept["value"].values, first["value"].values)
    [accepted] = json.loads(kept.attrs["source_changes"])
    assert accepted["choice"] == "accept" and accepted["results"] == 4
    assert accepted["change"] == "the code of model edited_model:run changed (edited_model.py)"
    assert "4 already done, 0 to run" in run_ok(spec)
    assert "computed before" not in status(spec)  # accepted: run takes them as they are
    note = (  # not stale, yet not computed by the code results.nc names: said where read
        "results.nc holds results kept with `campaign run --accept-changed`: 4 computed "
        "before the code of model edited_model:run changed (edited_model.py), kept as they "
        f"were on {accepted['time']}"
    )
    assert read_notes(tmp_path / "out", "value") == ([note], [note])

    # Edited again: refused again; computed again, the results are those of a fresh run.
    write_model(tmp_path, 1000.0)
    assert "changed (edited_model.py); rerun with --rerun-changed" in refused(spec)
    out = run_ok(spec, "--rerun-changed")
    assert re.search(r"4 stored results set aside in .*ledger\.changed-[-\d]+; they run again", out)
    assert "0 already done, 4 to run" in out
    assert len(set_aside_records(tmp_path / "out")) == 4
    rerun = xr.load_dataset(tmp_path / "out" / "results.nc")
    fresh_spec = tmp_path / "fresh.yaml"
    fresh_spec.write_text(SPEC.format(output="fresh"))
    run_ok(fresh_spec)
    fresh = xr.load_dataset(tmp_path / "fresh" / "results.nc")
    assert np.array_equal(rerun["value"].values, fresh["value"].values)
    assert np.array_equal(rerun["value"].values - first["value"].values, np.full((2, 2), 1000.0))
    assert rerun.attrs["model_code_digest"] == fresh.attrs["model_code_digest"]
    changes = json.loads(rerun.attrs["source_changes"])
    assert [c["choice"] for c in changes] == ["accept", "rerun"]
    assert "incomplete" not in campaign.open_results(tmp_path / "out").attrs  # none kept now

    # Edited again and started afresh with --new: the earlier campaign (ledger, campaign.json
    # with its digests and choices, results.nc) moves aside whole; the new one has none of it.
    source = write_model(tmp_path, 7.0)
    out = run_ok(spec, "--new")
    assert "0 already done, 4 to run" in out
    [old] = (tmp_path / "out").glob("ledger.old-*")
    assert (
        xr.load_dataset(old / "results.nc").attrs["source_changes"] == rerun.attrs["source_changes"]
    )
    assert len(json.loads((old / "campaign.json").read_text())["source_changes"]) == 2
    new = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert json.loads(new.attrs["source_changes"]) == []
    assert new.attrs["model_code_files"] == json.dumps({"edited_model.py": blake2b(source)})
    assert np.allclose(new["value"].values - first["value"].values, 7.0, rtol=0, atol=1e-9)

    # Read where the model is not (the folder taken to another machine): said, not refused.
    source.unlink()
    sys.modules.pop("edited_model", None)
    importlib.invalidate_caches()
    note = (
        "results.nc could not be checked against the model that computed it (model "
        "'edited_model:run': cannot import module 'edited_model' (No module named "
        "'edited_model'); the module must be importable where campaign runs (on PYTHONPATH or "
        "an installed package)): whether its numbers are stale is not known"
    )
    assert read_notes(tmp_path / "out", "value") == ([note], [note])


def quiet_runs(scheduler_address: str, capsys):
    """`campaign run SPEC --quiet` on the shared cluster, asserted to succeed: its output."""

    def run(spec: Path, *options: str) -> str:
        code = main(["run", str(spec), "--scheduler", scheduler_address, "--quiet", *options])
        out, err = capsys.readouterr()
        assert code == 0, err
        return out

    return run


def two_traces(tmp_path: Path) -> Path:
    """A folder of two real traces, a.swf and b.swf."""
    traces = tmp_path / "traces"
    traces.mkdir()
    for name, source in (("a", "KTH-SP2-1996-2.1-cln"), ("b", "HPC2N-2002-2.1-cln")):
        (traces / f"{name}.swf").write_bytes(
            gzip.decompress((DATA / f"{source}.swf.gz").read_bytes())
        )
    return traces


def test_a_trace_rewritten_at_the_same_path_reruns_exactly_its_tasks(
    tmp_path, scheduler_address, capsys
):
    run = quiet_runs(scheduler_address, capsys)
    traces = two_traces(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text(TRACE_SPEC.format(output="out"))
    run(spec)
    first = xr.load_dataset(tmp_path / "out" / "results.nc")
    a, b = traces / "a.swf", traces / "b.swf"
    assert json.loads(first.attrs["input_digests"]) == {str(a): blake2b(a), str(b): blake2b(b)}
    assert "4 already done, 0 to run" in run(spec)

    # Rewrite trace a in place: same size, same modification time, other run times.
    text, stat = a.read_text(), a.stat()
    lines = text.splitlines(keepends=True)
    jobs = [i for i, line in enumerate(lines) if line.strip() and not line.startswith(";")]
    for i in jobs[:50]:  # the run time, the fourth field, with its digits 1 made 2
        parts = re.split(r"(\s+)", lines[i])
        field = [k for k, part in enumerate(parts) if part and not part.isspace()][3]
        parts[field] = parts[field].replace("1", "2")
        lines[i] = "".join(parts)
    a.write_text("".join(lines))
    os.utime(a, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert a.stat().st_size == stat.st_size and a.read_text() != text
    note = (
        f"results.nc holds 2 of its 4 results computed before input file {a} changed: they "
        f"are stale; `campaign run {tmp_path / 'out'} --rerun-changed` computes them again"
    )
    assert read_notes(tmp_path / "out", "mean_wait") == ([note], [note])

    assert main(["run", str(spec), "--scheduler", scheduler_address, "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"campaign: error: {tmp_path / 'out'}: 2 stored results were computed before input "
        f"file {a} changed; rerun with --rerun-changed to compute them again (the earlier ones "
        "are kept in ledger.changed-*), or with --accept-changed to keep them as they are "
        "(recorded in results.nc)\n"
    )
    assert main(["plan", str(spec), "--rerun-changed"]) == 0
    out = capsys.readouterr().out
    assert f"2 stored results were computed before input file {a} changed: they would run" in out
    assert "plan: 2 done, 0 failed (will be retried), 0 missing, 2 to compute again; 2 tasks" in out
    out = run(spec, "--rerun-changed")
    assert f"input file {a} changed: 2 stored results set aside in" in out
    assert "2 already done, 2 to run" in out
    assert len(set_aside_records(tmp_path / "out")) == 2
    rerun = xr.load_dataset(tmp_path / "out" / "results.nc")
    fresh_spec = tmp_path / "fresh.yaml"
    fresh_spec.write_text(TRACE_SPEC.format(output="fresh"))
    run(fresh_spec)
    fresh = xr.load_dataset(tmp_path / "fresh" / "results.nc")
    metrics = [name for name in fresh.data_vars if fresh[name].dims == fresh["status"].dims]
    for name in metrics:
        assert np.array_equal(rerun[name].values, fresh[name].values, equal_nan=True), name

    def same(name: str, cell: int) -> bool:
        return np.array_equal(first[name].values[cell], rerun[name].values[cell], equal_nan=True)

    assert not all(same(name, 0) for name in metrics)  # trace a: computed again, other values
    assert all(same(name, 1) for name in metrics)  # trace b: kept
    assert json.loads(rerun.attrs["input_digests"]) == {str(a): blake2b(a), str(b): blake2b(b)}
    assert rerun.attrs["input_digests"] == fresh.attrs["input_digests"]
    [change] = json.loads(rerun.attrs["source_changes"])
    assert (change["choice"], change["results"]) == ("rerun", 2)


LEVELS_SPEC = """
name: traces
model: jobs
params: {{jobs: 100}}
factors:
  trace: [traces/a.swf, traces/b.swf]
  scheduler: {schedulers}
paired: [scheduler]
replicates: 2
seed: 3
output: {output}
"""


def test_a_trace_rewritten_while_a_level_was_out_reruns_that_levels_tasks_too(
    tmp_path, scheduler_address, capsys
):
    run = quiet_runs(scheduler_address, capsys)
    traces = two_traces(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text(LEVELS_SPEC.format(schedulers="[fcfs, easy]", output="out"))
    run(spec)
    first = xr.load_dataset(tmp_path / "out" / "results.nc")
    # easy taken out for a while, and trace a rewritten meanwhile (its first run times doubled)
    spec.write_text(LEVELS_SPEC.format(schedulers="[fcfs]", output="out"))
    a = traces / "a.swf"
    lines = a.read_text().splitlines(keepends=True)
    jobs = [i for i, line in enumerate(lines) if line.strip() and not line.startswith(";")]
    for i in jobs[:50]:
        fields = lines[i].split()
        fields[3] = str(2 * int(fields[3]))
        lines[i] = " ".join(fields) + "\n"
    a.write_text("".join(lines))
    out = run(spec, "--rerun-changed")
    # easy back: its tasks on trace a are computed from the trace as it is now
    spec.write_text(LEVELS_SPEC.format(schedulers="[fcfs, easy]", output="out"))
    again = run(spec)
    rerun = xr.load_dataset(tmp_path / "out" / "results.nc")
    fresh_spec = tmp_path / "fresh.yaml"
    fresh_spec.write_text(LEVELS_SPEC.format(schedulers="[fcfs, easy]", output="fresh"))
    run(fresh_spec)
    fresh = xr.load_dataset(tmp_path / "fresh" / "results.nc")
    assert not np.array_equal(first["mean_wait"].values[0], fresh["mean_wait"].values[0])
    for name in fresh.data_vars:
        if fresh[name].dims == fresh["status"].dims:
            assert np.array_equal(rerun[name].values, fresh[name].values, equal_nan=True), name
    assert f"input file {a} changed: 6 stored results set aside in " in out
    assert (
        "; they run again (4 of them of cells the spec no longer has, which may have read what "
        "changed: they run again once a spec has them)"
    ) in out
    assert "4 already done, 4 to run" in again


def test_workers_still_running_the_old_code_stop_the_run_and_store_nothing(tmp_path, monkeypatch):
    """A long-lived cluster's workers keep the code they loaded: their results would claim
    the new code's digest, so the run stops with one line and stores none of them."""
    write_model(tmp_path, 0.0)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(output="out"))
    monkeypatch.syspath_prepend(str(tmp_path))
    paths = [str(tmp_path), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, paths)))
    monkeypatch.delitem(sys.modules, "edited_model", raising=False)
    with dask_cluster(1) as cluster:
        campaign.run(spec, scheduler=cluster.scheduler_address, progress=False)
        write_model(tmp_path, 7.0)
        with pytest.raises(CampaignError) as caught:
            campaign.run(
                spec, scheduler=cluster.scheduler_address, progress=False, on_change="rerun"
            )
    assert re.fullmatch(
        r"the Dask worker tcp://127\.0\.0\.1:\d+ runs other code of model edited_model:run than "
        r"this machine has \(it loaded the model before its code changed, or has another "
        r"version\): restart the workers \(or install the same code on them\) and run again; "
        r"the results it computed were not stored",
        str(caught.value),
    )
    assert not list((tmp_path / "out" / "ledger").glob("*.jsonl"))  # set aside, none stored
    assert len(set_aside_records(tmp_path / "out")) == 4


def sources(code: dict[str, str], inputs: dict[str, str], cells: dict) -> Sources:
    return Sources(code=code, inputs=inputs, cell_inputs=cells)


def test_a_change_names_its_files_and_the_cells_that_read_them():
    stored = sources({"m/a.py": "1", "m/b.py": "2"}, {"/w/x.swf": "x1", "/w/y.swf": "y1"}, {})
    stored = stored.stored()
    cells = {"c" * 16: ("/w/x.swf",), "d" * 16: ("/w/y.swf",), "e" * 16: ()}
    same = sources({"m/a.py": "1", "m/b.py": "2"}, {"/w/x.swf": "x1", "/w/y.swf": "y1"}, cells)
    assert compare(stored, same) is None
    assert compare(None, same) is None  # results stored before digests were kept
    # The workloads folder moved: other paths, same contents.
    moved = sources({"m/a.py": "1", "m/b.py": "2"}, {"/v/x.swf": "x1", "/v/y.swf": "y1"}, cells)
    assert compare(stored, moved) is None
    # One trace rewritten: only the cells reading it are affected.
    rewritten = sources({"m/a.py": "1", "m/b.py": "2"}, {"/w/x.swf": "x2", "/w/y.swf": "y1"}, cells)
    change = compare(stored, rewritten)
    assert (change.code_files, change.input_files, change.cells) == ([], ["/w/x.swf"], {"c" * 16})
    assert change.affects("c" * 16 + "0123") and not change.affects("d" * 16 + "0123")
    assert change.describe("jobs") == "input file /w/x.swf changed"
    # Code edited, added or removed: every cell is affected.
    edited = sources({"m/a.py": "9", "m/c.py": "3"}, {"/w/x.swf": "x1", "/w/y.swf": "y1"}, cells)
    change = compare(stored, edited)
    assert (change.code_files, change.input_files, change.cells) == (
        ["m/a.py", "m/b.py", "m/c.py"],
        [],
        None,
    )
    assert change.affects("e" * 16 + "0123")
    assert change.describe("jobs") == "the code of model jobs changed (m/a.py, m/b.py, m/c.py)"


def test_the_trace_models_name_the_files_they_read(workloads):
    kth = str(workloads / "KTH-SP2-1996-2.1-cln.swf.gz")
    assert jobs_inputs({"trace": "KTH-SP2-1996-2.1-cln.swf.gz"}) == (kth,)
    assert jobs_inputs({"workload": "synthetic"}) == ()
    assert grid_inputs({"trace": "KTH-SP2-1996-2.1-cln.swf.gz", "config": "m64"}) == (kth,)
    assert grid_inputs({"config": "pwa3"}) == tuple(
        str(workloads / name)
        for name in (
            "KTH-SP2-1996-2.1-cln.swf.gz",
            "HPC2N-2002-2.1-cln.swf.gz",
            "SDSC-BLUE-2000-4.2-cln.swf.gz",
        )
    )
    with pytest.raises(ValueError, match="not found in the workloads folder"):
        jobs_inputs({"trace": "missing.swf"})


def test_records_of_changed_tasks_are_set_aside_whole_files_and_the_rest_kept(tmp_path):
    from campaign.store.ledger import Ledger

    ledger = Ledger(tmp_path)

    def record(key: str, status: str = "ok") -> dict:
        return (
            {"key": key, "status": status, "metrics": {"v": 1.0}}
            if status == "ok"
            else {
                "key": key,
                "status": status,
                "error": "E",
            }
        )

    mixed = ledger.append([record("a" * 16 + "1"), record("b" * 16 + "1")])
    untouched = ledger.append([record("b" * 16 + "2"), record("b" * 16 + "3", "failed")])
    only_changed = ledger.append([record("a" * 16 + "2", "failed")])
    moved, folder = ledger.set_records_aside(lambda key: key.startswith("a" * 16))
    assert moved == 2 and folder.name.startswith("ledger.changed-")
    assert sorted(path.name for path in folder.iterdir()) == sorted([mixed.name, only_changed.name])
    assert untouched.exists()
    assert ledger.statuses() == {"b" * 16 + "1": True, "b" * 16 + "2": True, "b" * 16 + "3": False}
    assert ledger.set_records_aside(lambda key: key.startswith("a" * 16)) == (0, None)
