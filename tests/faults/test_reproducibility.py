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


def campaign(scheduler: str, capsys, *args: str):
    """`campaign ARGS --scheduler SCHEDULER` in this process: its exit status and output."""
    code = main([*args, "--scheduler", scheduler])
    return code, capsys.readouterr()


def test_a_model_drawing_from_the_global_generators_gives_the_same_results_twice(
    runner, same_results, faults_cluster, faults_models, capsys
):
    # both runs and the verify on the same two worker processes, one after the other: a
    # generator left unseeded would go on where the run before left it
    spec = write_spec(runner, "global", "global_generators:run")
    first, second = runner.folder / "first", runner.folder / "second"
    run = ("run", str(spec), "--quiet", "--out")
    code, done = campaign(faults_cluster, capsys, *run, str(first), "--batch-size", "6")
    assert code == 0, done.err
    code, again = campaign(faults_cluster, capsys, *run, str(second), "--batch-size", "3")
    assert code == 0, again.err
    a, b = xr.load_dataset(first / "results.nc"), xr.load_dataset(second / "results.nc")
    same_results(a, b)
    assert len(np.unique(a["numpy_global"].values)) == 12  # one stream per task, not one value
    code, verified = campaign(faults_cluster, capsys, "verify", str(first))
    assert code == 0, verified.out + verified.err
    assert verified.out == "verify: 10 of 10 sampled tasks reproduced bit for bit\n"


def test_verify_names_each_metric_of_a_model_that_reads_a_clock(
    runner, faults_cluster, faults_models, capsys
):
    spec = write_spec(runner, "clocked", "global_generators:clocked", replicates=3)
    code, done = campaign(faults_cluster, capsys, "run", str(spec), "--quiet")
    assert code == 0, done.err
    records = Ledger(runner.folder / "clocked").load()
    code, verified = campaign(faults_cluster, capsys, "verify", str(spec), "--sample", "4")
    assert code == 1, verified.out + verified.err
    lines = verified.out.splitlines()
    assert lines[-1] == "verify: 0 of 4 sampled tasks reproduced bit for bit"
    mismatches = lines[:-1]
    assert len(mismatches) == 4, lines  # the clock of each task; the seeded draws match
    for line in mismatches:
        key, metric, values = line.split(": ", 2)
        assert metric == "clock" and key in records, line
        stored = records[key]["metrics"]["clock"]
        assert values.startswith(f"stored {stored!r}, now "), line
    # the sample is drawn from the campaign's seed: the same tasks every time
    code, again = campaign(faults_cluster, capsys, "verify", str(spec), "--sample", "4")
    assert [line.split(":")[0] for line in again.out.splitlines()[:-1]] == [
        line.split(":")[0] for line in mismatches
    ]


def test_verify_of_a_folder_with_no_finished_task_says_so_in_one_line(runner, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))  # the model's module
    spec = write_spec(runner, "empty", "global_generators:run")
    assert main(["verify", str(spec)]) == 2  # refused before any cluster starts
    assert capsys.readouterr().err == (
        f"campaign: error: {runner.folder / 'empty'}: no finished task to verify\n"
    )
