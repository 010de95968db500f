"""Stored results stay trustworthy: damaged ledgers, changed sources, concurrent runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.plan.plan import make_plan
from campaign.store.identity import identity_difference
from campaign.store.ledger import Ledger
from tests.conftest import MM1_TWO_LOADS as MM1


def assert_same_results(ds, reference):
    for name in ("mean_wait", "mean_wait_mean", "mean_wait_ci_low", "status", "seed"):
        assert np.array_equal(ds[name].values, reference[name].values)


def test_damaged_records_are_reported_rerun_and_give_an_undisturbed_runs_results(
    write_spec, scheduler_address, capsys
):
    spec = write_spec(MM1)
    reference = campaign.run(
        write_spec(MM1.replace("output: out", "output: clean"), "clean.yaml"),
        scheduler=scheduler_address,
        progress=False,
    )
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    ledger = make_plan(spec).ledger
    path = ledger.files()[0]
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # a torn last line
    (ledger.folder / "stray.jsonl").write_bytes(b"\x00\x01 not a record \xff\n")

    assert main(["plan", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "ledger: 2 damaged records skipped in" in out
    assert "plan: 7 done, 0 failed (will be retried), 1 missing; 1 tasks would run" in out

    assert main(["run", str(spec), "--scheduler", scheduler_address, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "ledger: 2 damaged records skipped in" in out and "ledger.damaged" in out
    assert "7 already done, 1 to run" in out
    assert sorted(p.name for p in (spec.parent / "out" / "ledger.damaged").iterdir()) == sorted(
        [path.name, "stray.jsonl"]
    )
    ds = xr.load_dataset(spec.parent / "out" / "results.nc")
    assert_same_results(ds, reference)
    assert main(["status", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "8 tasks: 8 done, 0 failed, 0 missing" in out and "damaged record" not in out


def test_a_damaged_campaign_json_stops_plan_and_run_with_one_line_and_new_recovers(
    write_spec, scheduler_address, capsys
):
    spec = write_spec(MM1)
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    (spec.parent / "out" / "campaign.json").write_text('{"model": "mm1", "par')
    for command in (["plan", str(spec)], ["run", str(spec), "--scheduler", scheduler_address]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "campaign.json is damaged" in err and "--new" in err and err.count("\n") == 1
    assert main(["status", str(spec)]) == 0  # counts from the ledger, and names the damage
    out = capsys.readouterr().out
    assert "8 done" in out and "campaign.json is damaged" in out
    code = main(["run", str(spec), "--scheduler", scheduler_address, "--quiet", "--new"])
    assert code == 0
    assert "8 tasks ok, 0 failed, 0 missing" in capsys.readouterr().out


def test_results_without_their_campaign_json_are_refused_in_one_line_and_new_recovers(
    write_spec, scheduler_address, capsys
):
    spec = write_spec(MM1)
    first = campaign.run(spec, scheduler=scheduler_address, progress=False)
    output = spec.parent / "out"
    (output / "campaign.json").unlink()  # lost: what computed the stored results is unknown
    refused = (
        f"campaign: error: {output / 'ledger'} holds results but {output / 'campaign.json'}, "
        "which says what they mean (the model, params and seed, the code and input files that "
        "computed them), is missing: restore it, or rerun with --new to set those results "
        "aside and start afresh\n"
    )
    for command in (["plan", str(spec)], ["run", str(spec), "--scheduler", scheduler_address]):
        assert main(command) == 2
        assert capsys.readouterr().err == refused
    assert not (output / "campaign.json").exists()  # nothing written over it
    assert main(["status", str(spec)]) == 0  # counts from the ledger, and says why run refuses
    out = capsys.readouterr().out
    assert "8 done" in out and f"{output / 'campaign.json'} is missing" in out
    code = main(["run", str(spec), "--scheduler", scheduler_address, "--quiet", "--new"])
    assert code == 0
    assert "0 already done, 8 to run" in capsys.readouterr().out
    assert_same_results(xr.load_dataset(output / "results.nc"), first)


# -- one run per output folder ---------------------------------------------------------------
GATED = """
name: gated
model: gated_model:run
factors:
  x: [1, 2]
replicates: 20
seed: 8
output: out
"""

GATED_MODEL = """
import os, time

def run(params, seed):
    # every task waits until the test opens the gate: the run is still going while probed
    while not os.path.exists(os.environ["GATE_FILE"]):
        time.sleep(0.02)
    return {"value": float(params["x"])}
"""


def cli(*args: str, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "campaign", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def test_a_second_run_refuses_in_one_line_naming_the_first_while_it_runs(
    write_spec, tmp_path, scheduler_address, monkeypatch, capsys
):
    spec = write_spec(GATED)
    (tmp_path / "gated_model.py").write_text(GATED_MODEL)
    gate = tmp_path / "gate"
    env = {
        **os.environ,
        "GATE_FILE": str(gate),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
    }
    # the later commands run in this process: another process than the first run's
    monkeypatch.setenv("GATE_FILE", str(gate))
    monkeypatch.syspath_prepend(str(tmp_path))
    lock = spec.parent / "out" / "campaign.lock"
    first = subprocess.Popen(
        [sys.executable, "-m", "campaign", "run", str(spec), "--workers", "1", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 120
        while not (lock.exists() and lock.read_text()):
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        for extra in ([], ["--new"]):
            assert main(["run", str(spec), "--workers", "1", *extra]) == 2
            second = capsys.readouterr().err
            assert second.count("\n") == 1
            assert f"{spec.parent / 'out'} is in use by another campaign run (host " in second
            assert f", pid {first.pid}, since " in second
        assert main(["status", str(spec)]) == 0 and "40 tasks:" in capsys.readouterr().out
        assert first.poll() is None  # the gate is closed: the first run cannot have ended
        gate.write_text("open")
        out, err = first.communicate(timeout=300)
    finally:
        gate.write_text("open")
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 0, err
    assert "40 tasks ok, 0 failed, 0 missing" in out
    assert not list((spec.parent / "out").glob("ledger.old-*"))
    assert lock.read_text() == ""
    again = main(["run", str(spec), "--scheduler", scheduler_address, "--quiet"])
    assert again == 0 and "40 already done, 0 to run" in capsys.readouterr().out


KILL_HOLDER = """
import sys, time
from campaign.store.ledger import Ledger
from tests.conftest import MM1_TWO_LOADS as MM1
with Ledger(sys.argv[1]).lock():
    print("held", flush=True)
    time.sleep(600)
"""


def test_the_lock_goes_with_its_holder_even_when_killed(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", KILL_HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline() == "held\n"
    with pytest.raises(CampaignError, match=f"pid {holder.pid}, since "):
        with Ledger(tmp_path).lock():
            pass
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with Ledger(tmp_path).lock():
        with pytest.raises(CampaignError, match=f"pid {os.getpid()}, since "):
            with Ledger(tmp_path).lock():
                pass


WRITE_RESULTS = """
import os, sys
import numpy as np, xarray as xr
from campaign.results.netcdf import write_netcdf
value = float(sys.argv[2])
dataset = xr.Dataset({"m": ("x", np.full(20000, value))}, attrs={"writer": value})
while not os.path.exists(sys.argv[3]):  # until the reader has seen enough
    write_netcdf(dataset, sys.argv[1])
"""


def test_concurrent_result_writes_and_reads_see_whole_files(tmp_path):
    path, stop = tmp_path / "results.nc", tmp_path.parent / f"{tmp_path.name}-stop"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITE_RESULTS, str(path), value, str(stop)])
        for value in ("1", "2")
    ]
    reads, seen = 0, set()
    deadline = time.monotonic() + 120  # against a hang of the test, not a time limit
    try:
        # read while both write, until each writer's file was read whole, 50 reads in all
        while reads < 50 or seen != {1.0, 2.0}:
            assert all(w.poll() is None for w in writers) and time.monotonic() < deadline
            if path.exists():
                ds = xr.load_dataset(path)
                assert ds.attrs["writer"] in (1.0, 2.0)
                assert (ds["m"].values == ds.attrs["writer"]).all()
                seen.add(ds.attrs["writer"])
                reads += 1
    finally:
        stop.write_text("")
        codes = [w.wait() for w in writers]
    assert codes == [0, 0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.nc"]


def test_new_twice_in_one_second_sets_each_campaign_aside_with_its_results(
    write_spec, scheduler_address, capsys
):
    spec = write_spec(MM1)
    output = spec.parent / "out"
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    firsts = []
    for customers in (600, 700):
        firsts.append(xr.load_dataset(output / "results.nc").attrs["params"])
        spec.write_text(MM1.replace("customers: 500", f"customers: {customers}"))
        code = main(["run", str(spec), "--scheduler", scheduler_address, "--quiet", "--new"])
        assert code == 0, capsys.readouterr().err
    asides = sorted(output.glob("ledger.old-*"), key=lambda p: p.stat().st_mtime_ns)
    assert len(asides) == 2
    for aside, params in zip(asides, firsts):
        assert xr.load_dataset(aside / "results.nc").attrs["params"] == params
        assert (aside / "campaign.json").exists() and list(aside.glob("*.jsonl"))
    assert '"customers":700' in xr.load_dataset(output / "results.nc").attrs["params"]


def test_set_aside_twice_in_one_second_keeps_both(tmp_path):
    ledger = Ledger(tmp_path)
    names = []
    for key in ("a", "b", "c"):
        ledger.append([{"key": key, "status": "ok", "metrics": {"m": 1.0}}])
        (tmp_path / "results.nc").write_text(key)
        names.append(ledger.set_aside(also=["results.nc"]))
    assert len(set(names)) == 3
    assert [(n / "results.nc").read_text() for n in names] == ["a", "b", "c"]
    assert [list(Ledger(tmp_path).load()) for _ in names] == [[], [], []]
    assert not (tmp_path / "results.nc").exists()


PROGRAM = """
name: jobs
model:
  command: [/bin/sh, -c, "echo y=$0", "JOBS", "{seed}"]
replicates: 2
seed: 1
output: out
"""


def test_status_of_a_folder_whose_results_mean_another_campaign_says_so(
    write_spec, capsys, tmp_path
):
    """The command given another fixed argument (2000 jobs, now 5000): `run` refuses the
    folder, but `status` said "2 done" and named its results.nc, computed with 2000 jobs,
    without a word."""
    spec = write_spec(PROGRAM.replace("JOBS", "2000"))
    campaign.run(spec, workers=1, progress=False)
    write_spec(PROGRAM.replace("JOBS", "5000"))
    assert main(["run", str(spec), "--workers", "1"]) == 2
    refused = capsys.readouterr().err
    assert "holds results of a different campaign (command's 'command' was" in refused
    assert main(["status", str(spec)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("jobs: 2 tasks: 2 done, 0 failed, 0 missing  (ledger ")
    assert lines[2].startswith(
        f"  {tmp_path / 'out'} holds results of a different campaign (command's 'command' was "
        "['/bin/sh', '-c', 'echo y=$0', '2000', '{seed}'], now "
        "['/bin/sh', '-c', 'echo y=$0', '5000', '{seed}']): "
    )
    assert lines[2].endswith(
        "): these counts and its results.nc are theirs; `run` refuses the folder until the "
        "spec means what they do, or the campaign starts afresh (--new; new=True from Python)"
    )
    assert lines[-2] == f"results: {tmp_path / 'out' / 'results.nc'}"
    assert lines[-1].startswith("  results.nc was written from another spec than the one given")
    write_spec(PROGRAM.replace("JOBS", "2000"))  # put back: nothing to say
    assert main(["status", str(spec)]) == 0
    assert "different campaign" not in capsys.readouterr().out


def test_another_program_campaign_is_named_by_the_one_key_that_differs():
    """A sample read from another column of the program's file: the refusal said both whole
    command mappings (argv, cores, shell, templates, metrics), to be compared by eye."""
    command = {"command": ["./mw", "{seed}"], "cores": 1, "shell": False, "templates": []}
    old = {"command": {**command, "metrics": "stdout; sample response: tasks.csv column end"}}
    new = {"command": {**command, "metrics": "stdout; sample response: tasks.csv column start"}}
    assert identity_difference(old, new) == (
        "command's 'metrics' was 'stdout; sample response: tasks.csv column end', now "
        "'stdout; sample response: tasks.csv column start'"
    )
