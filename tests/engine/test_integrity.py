"""Stored results stay trustworthy: damaged ledgers, changed sources, concurrent runs."""

from __future__ import annotations

import numpy as np
import xarray as xr

import campaign
from campaign.cli import main
from campaign.runner import make_plan

MM1 = """
name: integrity
model: mm1
params: {service_rate: 1.0, customers: 500}
factors:
  arrival_rate: [0.5, 0.8]
replicates: 4
seed: 3
output: out
"""


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
    assert main(["status", str(spec)]) == 0
    assert "8 done" in capsys.readouterr().out
    code = main(["run", str(spec), "--scheduler", scheduler_address, "--quiet", "--new"])
    assert code == 0
    assert "8 tasks ok, 0 failed, 0 missing" in capsys.readouterr().out
