"""SIGKILL `campaign run` halfway; the rerun runs only what was missing and matches a clean run."""

from __future__ import annotations

import sys

import numpy as np
import xarray as xr

import campaign
from campaign.cli import main
from campaign.plan.plan import make_plan
from tests.conftest import run_and_kill

SPEC = """
name: killme
model: busy
factors:
  duration_ms: [37, 39, 41, 43]
replicates: 50
seed: 5
output: {output}
"""


def test_sigkill_midway_then_rerun_finishes_only_the_rest(tmp_path, scheduler_address, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(output="killed"))
    output = tmp_path / "killed"
    command = [sys.executable, "-m", "campaign", "run", str(spec), "--workers", "2"]
    done_before = run_and_kill(command, output, after=60)
    assert 60 <= len(done_before) < 200, "the kill came too late to test a resume"

    # the rerun, in this process on the shared cluster: the killed run is the process of its own
    capsys.readouterr()
    assert main(["run", str(spec), "--quiet", "--scheduler", scheduler_address]) == 0
    rerun = capsys.readouterr()
    assert f"{len(done_before)} already done, {200 - len(done_before)} to run" in rerun.out

    records = make_plan(spec).ledger.load()
    by_run = {}
    for record in records.values():
        by_run.setdefault(record["run"], set()).add(record["key"])
    assert len(records) == 200
    rerun_keys = [keys for keys in by_run.values() if keys.isdisjoint(done_before)]
    assert len(rerun_keys) == 1 and rerun_keys[0] == set(records) - done_before

    clean_spec = tmp_path / "clean.yaml"
    clean_spec.write_text(SPEC.format(output="clean"))
    clean = campaign.run(clean_spec, scheduler=scheduler_address, progress=False)
    resumed = xr.load_dataset(output / "results.nc")
    for name in ("value", "value_mean", "value_ci_low", "value_ci_high", "seed", "status"):
        assert np.array_equal(resumed[name].values, clean[name].values, equal_nan=True), name
