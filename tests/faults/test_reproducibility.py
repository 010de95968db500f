"""A model drawing from the global generators (numpy's legacy one, Python's `random`) is
reproducible, as the worker seeds them from each task's seed; and `campaign verify` reruns a
sample of finished tasks and names every metric that did not come back bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr
import yaml

from campaign.cli import main
from campaign.store.ledger import Ledger


def write_spec(runner, name: str, model: str, replicates: int = 6) -> object:
    spec = runner.folder / f"{name}.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": name,
                "model": model,
                "params": {"size": 1},
                "factors": {"level": [1, 2]},
                "replicates": replicates,
                "seed": 5,
                "output": name,
            }
        )
    )
    return spec


def test_a_model_drawing_from_the_global_generators_gives_the_same_results_twice(
    runner, same_results
):
    spec = write_spec(runner, "global", "global_generators:run")
    first, second = runner.folder / "first", runner.folder / "second"
    done = runner.run(spec, "--workers", "1", "--out", str(first))
    assert done.returncode == 0, done.stderr
    again = runner.run(spec, "--workers", "2", "--out", str(second), "--batch-size", "3")
    assert again.returncode == 0, again.stderr
    a, b = xr.load_dataset(first / "results.nc"), xr.load_dataset(second / "results.nc")
    same_results(a, b)
    assert len(np.unique(a["numpy_global"].values)) == 12  # one stream per task, not one value
    verified = runner.command("verify", str(first), "--workers", "1")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout == "verify: 10 of 10 sampled tasks reproduced bit for bit\n"


def test_verify_names_each_metric_of_a_model_that_reads_a_clock(runner):
    spec = write_spec(runner, "clocked", "global_generators:clocked", replicates=3)
    done = runner.run(spec, "--workers", "2")
    assert done.returncode == 0, done.stderr
    records = Ledger(runner.folder / "clocked").load()
    verified = runner.command("verify", str(spec), "--sample", "4", "--workers", "2")
    assert verified.returncode == 1, verified.stdout + verified.stderr
    lines = verified.stdout.splitlines()
    assert lines[-1] == "verify: 0 of 4 sampled tasks reproduced bit for bit"
    mismatches = lines[:-1]
    assert len(mismatches) == 4, lines  # the clock of each task; the seeded draws match
    for line in mismatches:
        key, metric, values = line.split(": ", 2)
        assert metric == "clock" and key in records, line
        stored = records[key]["metrics"]["clock"]
        assert values.startswith(f"stored {stored!r}, now "), line
    # the sample is drawn from the campaign's seed: the same tasks every time
    again = runner.command("verify", str(spec), "--sample", "4", "--workers", "2")
    assert [line.split(":")[0] for line in again.stdout.splitlines()[:-1]] == [
        line.split(":")[0] for line in mismatches
    ]


def test_verify_of_a_folder_with_no_finished_task_says_so_in_one_line(runner, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))  # the model's module
    spec = write_spec(runner, "empty", "global_generators:run")
    assert main(["verify", str(spec)]) == 2  # refused before any cluster starts
    assert capsys.readouterr().err == (
        f"campaign: error: {runner.folder / 'empty'}: no finished task to verify\n"
    )
