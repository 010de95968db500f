"""Kept outputs of real programs (command models): stored with their records, read back by
`campaign outputs`, the same bit for bit after a SIGKILLed driver and a rerun as after an
undisturbed run, refused over the size limit, and parsed again by `campaign remetric`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.pipelines.remetric import remetric
from campaign.pipelines.verify import verify
from campaign.spec.command_model import MetricsSource
from campaign.store.ledger import Ledger
from campaign.store.outputs import Archives

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}

SIM = """
import json, sys, time
load, seed, pause = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
time.sleep(pause)
if seed % 5 == 0:
    print("diverged at step", seed % 977, file=sys.stderr)
    sys.exit(3)
rows = [f"{job},{(seed >> job) % 1000 * load:.3f}" for job in range(int(load * 40))]
open("schedule.csv", "w").write("job,start\\n" + "\\n".join(rows) + "\\n")
print("step", seed % 977)
print(json.dumps({"mean_wait": load * (seed % 1000), "jobs": len(rows)}))
"""

SPEC = """
name: kept-program
model:
  command: [python3, sim.py, "{{load}}", "{{seed}}", "{pause}"]
  inputs: [sim.py]
  keep: [stdout, schedule.csv]{limit}
factors:
  load: [1.0, 2.0, 3.0]
replicates: 5
seed: 21
output: out
"""


def write_campaign(folder: Path, pause: float = 0.0, limit: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sim.py").write_text(textwrap.dedent(SIM))
    spec = folder / "spec.yaml"
    spec.write_text(SPEC.format(pause=pause, limit=f"\n  keep_limit: {limit}" if limit else ""))
    return spec


def kept_by_task(output: Path) -> dict[str, dict[str, bytes]]:
    """Every stored task's kept outputs, read back (and checked) through the archives."""
    records = Ledger(output).load()
    with Archives(output) as archives:
        return {key: archives.read(record) for key, record in sorted(records.items())}


def what_counts(output: Path) -> dict[str, tuple]:
    """Per task, what a rerun must reproduce: status, seed, metrics, error."""
    return {
        key: (r["status"], r["seed"], r.get("metrics"), r.get("error"))
        for key, r in sorted(Ledger(output).load().items())
    }


def test_a_programs_stdout_and_kept_file_come_back_and_failures_keep_their_stderr(
    tmp_path, scheduler_address, capsys
):
    spec = write_campaign(tmp_path)
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    failed = int((data.status == 2).sum())
    assert 0 < failed < 15
    kept = kept_by_task(tmp_path / "out")
    records = Ledger(tmp_path / "out").load()
    assert len(kept) == 15
    for key, record in records.items():
        seed, outputs = record["seed"], kept[key]
        if record["status"] == "ok":
            assert outputs == expected_outputs(record["cell"]["load"], seed)
        else:
            assert outputs["stderr"] == f"diverged at step {seed % 977}\n".encode()
            assert outputs["stdout"] == b""
    assert main(["outputs", str(spec), "--where", "load=2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and lines[-1].startswith("5 tasks kept outputs (")
    key = next(k for k, r in records.items() if r["status"] != "ok")
    assert main(["outputs", str(spec), "--task", key, "--show", "stderr"]) == 0
    assert capsys.readouterr().out == kept[key]["stderr"].decode()


def expected_outputs(load: float, seed: int) -> dict[str, bytes]:
    """What sim.py leaves to keep for a task that succeeds (as its code says)."""
    rows = [f"{job},{(seed >> job) % 1000 * load:.3f}" for job in range(int(load * 40))]
    metrics = {"mean_wait": load * (seed % 1000), "jobs": len(rows)}
    return {
        "files/schedule.csv": ("job,start\n" + "\n".join(rows) + "\n").encode(),
        "stdout": f"step {seed % 977}\n{json.dumps(metrics)}\n".encode(),
    }


def test_outputs_over_the_size_limit_fail_their_task_in_one_line(tmp_path, scheduler_address):
    spec = write_campaign(tmp_path, limit="1kB")
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    records = Ledger(tmp_path / "out").load()
    over = 0
    for record in records.values():
        if record["seed"] % 5 == 0:
            assert (
                record["error"]
                == f"python3 exited with code 3; stderr: diverged at step {record['seed'] % 977}"
            )
            continue
        size = sum(map(len, expected_outputs(record["cell"]["load"], record["seed"]).values()))
        if size <= 1000:
            assert record["status"] == "ok"
            continue
        over += 1
        assert record["status"] == "failed"
        assert record["error"] == (
            f"the outputs to keep are {size:,} bytes, over the limit of 1,000 bytes per task "
            "(model.keep_limit)"
        )
    assert 0 < over < len(records)


def test_a_sigkilled_driver_and_a_rerun_keep_the_same_records_and_outputs_bit_for_bit(
    tmp_path, scheduler_address
):
    # the undisturbed run: its programs need not pause (the pause is only to stop the other
    # while it runs; it changes no seed, metric or kept file)
    clean = write_campaign(tmp_path / "clean")
    campaign.run(clean, scheduler=scheduler_address, progress=False, retries=0)
    killed = write_campaign(tmp_path / "killed", pause=0.3)
    output = tmp_path / "killed" / "out"
    command = [sys.executable, "-m", "campaign", "run", str(killed), "--quiet"]
    command += ["--workers", "2", "--batch-size", "1", "--retries", "0"]
    process = subprocess.Popen(
        command,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        guard = time.monotonic() + 300  # against a hang of the test, not a time limit
        while len(Ledger(output).files()) < 3:
            assert process.poll() is None, "the campaign ended before it was killed"
            assert time.monotonic() < guard, "the campaign stored nothing"
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)  # the driver alone
        process.wait()
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # what the test started, whatever is left
        except ProcessLookupError:
            pass
    stored = Ledger(output).load()
    assert 3 <= len(stored) < 15
    assert len(list((output / "outputs").glob("*.zip"))) >= 3
    # the rerun, in this process on the shared cluster: a process of its own is not the point
    rerun = ["run", str(killed), "--quiet", "--scheduler", scheduler_address, *command[-4:]]
    assert main(rerun) == 1  # some tasks fail, as in the clean run
    assert what_counts(output) == what_counts(tmp_path / "clean" / "out")
    assert kept_by_task(output) == kept_by_task(tmp_path / "clean" / "out")
    with (
        xr.open_dataset(output / "results.nc") as after,
        xr.open_dataset(tmp_path / "clean" / "out" / "results.nc") as before,
    ):
        assert after["mean_wait"].equals(before["mean_wait"])


PARSER = """
from pathlib import Path

def late_jobs(folder):
    rows = Path(folder, "schedule.csv").read_text().splitlines()[1:]
    starts = [float(row.split(",")[1]) for row in rows]
    return {"late_jobs": sum(start > 1000 for start in starts), "first_start": starts[0]}
"""


def test_metrics_added_later_from_kept_files_and_recomputed_from_stdout_without_a_run(
    tmp_path, scheduler_address, monkeypatch, capsys
):
    spec = write_campaign(tmp_path)
    first = campaign.run(spec, scheduler=scheduler_address, progress=False)
    (tmp_path / "laterparse.py").write_text(textwrap.dedent(PARSER))
    monkeypatch.syspath_prepend(str(tmp_path))
    stored = Ledger(tmp_path / "out").load()
    # Added: a new metric from the kept schedule.csv, through the CLI, no cluster.
    assert main(["remetric", str(spec), "--parse", "laterparse:late_jobs"]) == 0
    out = capsys.readouterr().out
    ok = sum(r["status"] == "ok" for r in stored.values())
    assert out.startswith(
        f"remetric: {ok} tasks recomputed with parse: laterparse:late_jobs: first_start, "
        "late_jobs\n"
    )
    with xr.open_dataset(tmp_path / "out" / "results.nc") as results:
        (stamp,) = json.loads(results.attrs["metrics_recomputed"])
        assert results["mean_wait"].equals(first["mean_wait"])
        for record in stored.values():
            seed, load = record["seed"], record["cell"]["load"]
            task = results.sel(load=load, replicate=record["replicate"])
            if record["status"] != "ok":
                assert task["late_jobs"].isnull()
                continue
            starts = [float(f"{(seed >> job) % 1000 * load:.3f}") for job in range(int(load * 40))]
            assert float(task["late_jobs"]) == sum(start > 1000 for start in starts)
            assert float(task["first_start"]) == starts[0]
    assert stamp["parser"] == "parse: laterparse:late_jobs"
    import hashlib

    digest = hashlib.sha256((tmp_path / "laterparse.py").read_bytes()).hexdigest()
    assert stamp["digest"] == f"sha256:{digest}" and stamp["tasks"] == ok
    assert stamp["metrics"] == ["first_start", "late_jobs"]
    # Recomputed: the spec's own parser (stdout) gives back the stored numbers, bit for bit.
    done = remetric(tmp_path / "out", MetricsSource("stdout"))
    assert done.metrics == ["jobs", "mean_wait"]
    after = Ledger(tmp_path / "out").load()
    for key, record in stored.items():
        if record["status"] == "ok":
            assert {k: after[key]["metrics"][k] for k in record["metrics"]} == record["metrics"]
    with pytest.raises(CampaignError, match="metrics parser nosuch:f: cannot import nosuch"):
        remetric(spec, MetricsSource("parse", "nosuch:f"))


def test_a_merge_of_shards_carries_their_kept_outputs(tmp_path, scheduler_address, capsys):
    spec = write_campaign(tmp_path / "sharded")
    for shard in ("1/2", "2/2"):
        campaign.run(spec, scheduler=scheduler_address, shard=shard, progress=False)
    assert main(["outputs", str(spec), "--shard", "1/2"]) == 0
    listed = capsys.readouterr().out.splitlines()
    mine = Ledger(tmp_path / "sharded" / "out" / "shard-1-of-2").load()
    assert {line.split()[0] for line in listed[:-1]} == set(mine)  # the shard's tasks only
    assert 0 < len(mine) < 15
    merged = tmp_path / "merged"
    assert main(["merge", str(tmp_path / "sharded" / "out"), "-o", str(merged)]) == 1  # failures
    assert "merged 1/2 2/2 into" in capsys.readouterr().out
    clean = write_campaign(tmp_path / "clean")
    campaign.run(clean, scheduler=scheduler_address, progress=False)
    assert what_counts(merged) == what_counts(tmp_path / "clean" / "out")
    assert kept_by_task(merged) == kept_by_task(tmp_path / "clean" / "out")
    assert len(kept_by_task(merged)) == 15


CLOCK = """
import json, sys, time
open("log.txt", "w").write(f"started at {time.time_ns()}\\n")
print(json.dumps({"value": int(sys.argv[1]) % 101}))
"""


def test_verify_finds_a_kept_file_that_a_rerun_writes_otherwise(tmp_path, scheduler_address):
    (tmp_path / "clock.py").write_text(textwrap.dedent(CLOCK))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        textwrap.dedent(
            """
            name: clock
            model:
              command: [python3, clock.py, "{seed}"]
              inputs: [clock.py]
              keep: [stdout, log.txt]
            replicates: 4
            seed: 2
            output: out
            """
        )
    )
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    verdict = verify(spec, count=2, scheduler=scheduler_address)
    assert verdict.sampled == 2 and verdict.outputs == []
    assert [m.metric for m in verdict.mismatches] == ["kept output files/log.txt"] * 2
    records = Ledger(tmp_path / "out").load()
    for mismatch in verdict.mismatches:
        stored = records[mismatch.key]["outputs"]["members"]["files/log.txt"]["sha256"]
        assert mismatch.stored == f"sha256 {stored[:12]}"
        assert mismatch.now.startswith("sha256 ") and mismatch.now != mismatch.stored


PARSE_SPEC = """
name: fixed-parser
model:
  command: [python3, sim.py, "{load}", "{seed}", "0"]
  inputs: [sim.py]
  metrics: {parse: "fixparser:metrics"}
  keep: [stdout]
factors:
  load: [1.0, 2.0]
replicates: 2
seed: 8
output: out
"""

FIX_PARSER = """
import json

def metrics(folder):
    value = json.loads((folder / "stdout").read_text().splitlines()[-1])["mean_wait"]
    return {"mean_wait": value * SCALE}

SCALE = %s
"""


def test_a_fixed_parser_recomputes_the_results_and_run_keeps_them(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "sim.py").write_text(textwrap.dedent(SIM))
    spec = folder / "spec.yaml"
    spec.write_text(PARSE_SPEC)
    parser = tmp_path / "fixparser.py"
    parser.write_text(FIX_PARSER % "1000.0")  # the bug: seconds read as milliseconds
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{ENV['PYTHONPATH']}")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = campaign.run(spec, workers=1, progress=False)
    parser.write_text(FIX_PARSER % "1.0")
    for name in [n for n in sys.modules if n == "fixparser"]:
        del sys.modules[name]
    with pytest.raises(CampaignError, match="changed"):
        campaign.run(spec, workers=1, progress=False)  # computed by other code: refused
    assert main(["remetric", str(spec)]) == 0
    said = capsys.readouterr().out
    assert "recomputed with parse: fixparser:metrics: mean_wait" in said
    assert "campaign.json now names the parser's code as it is (fixparser:metrics)" in said
    again = campaign.run(spec, workers=1, progress=False)  # nothing runs, nothing refused
    ok = first["status"].values == 1
    assert (again["mean_wait"].values[ok] == first["mean_wait"].values[ok] / 1000.0).all()
    (stamp,) = json.loads(again.attrs["metrics_recomputed"])
    assert stamp["parser"] == "parse: fixparser:metrics" and stamp["tasks"] == int(ok.sum())


RAISING = """
import json
from pathlib import Path

def key(folder):
    return {"y": json.loads(Path(folder, "stdout").read_text().splitlines()[-1])["nope"]}

def unkept(folder):
    return {"y": len(Path(folder, "result.json").read_text())}

def zero(folder):
    return {"y": 1 / 0}
"""


def test_a_parser_that_raises_is_one_line_naming_the_task_and_nothing_is_stored(
    tmp_path, scheduler_address, monkeypatch, capsys
):
    spec = write_campaign(tmp_path)
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    (tmp_path / "raising.py").write_text(textwrap.dedent(RAISING))
    monkeypatch.syspath_prepend(str(tmp_path))
    ledger = tmp_path / "out" / "ledger"
    before = {path.name: path.read_bytes() for path in ledger.iterdir()}
    results = (tmp_path / "out" / "results.nc").read_bytes()
    records = Ledger(tmp_path / "out").load()
    ok = sorted(key for key, record in records.items() if record["status"] == "ok")
    first = records[ok[0]]
    task = f"task {first['key']} (load={first['cell']['load']}, replicate {first['replicate']})"
    expected = {
        "key": "KeyError: 'nope'",
        "unkept": "FileNotFoundError: [Errno 2] No such file or directory: ",
        "zero": "ZeroDivisionError: division by zero",
    }
    for name, error in expected.items():
        assert main(["remetric", str(spec), "--parse", f"raising:{name}"]) == 2
        said = capsys.readouterr()
        assert said.out == "" and "Traceback" not in said.err
        assert said.err.startswith(
            f"campaign: error: remetric: {len(ok)} of {len(ok)} finished tasks cannot be "
            f"recomputed with parse: raising:{name}; nothing was stored; the first: {task}: "
            f"{error}"
        ), said.err
        assert said.err.count("\n") == 1
        if name == "unkept":
            assert said.err.endswith(
                "(a parser is given the task's kept outputs only: stdout, stderr, what keep: "
                "names)\n"
            )
    assert {path.name: path.read_bytes() for path in ledger.iterdir()} == before
    assert (tmp_path / "out" / "results.nc").read_bytes() == results
