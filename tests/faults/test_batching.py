"""Results do not depend on how tasks are batched: a batch carries the tasks of a cell with one
params object, and each task must still get params of its own, whatever its model does to
them."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
import yaml

from campaign.cli import main

# --batch-size: one task per batch, all 30 tasks in one batch, batches of a few tasks, and
# batches sized from measured durations (no option)
SIZES = ["1", "30", "4", None]


def test_models_changing_their_params_in_place_give_the_same_results_whatever_the_batches(
    runner, same_results, faults_cluster, faults_models, capsys
):
    spec = runner.folder / "mutating.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "mutating",
                "model": "mutating:run",
                "params": {"scale": 2.0, "k": 0},
                "factors": {"mutate": ["none", "pop", "add"]},
                "replicates": 10,
                "seed": 7,
            }
        )
    )
    results = []
    for size in SIZES:
        out = runner.folder / f"out-{size}"
        options = ["--scheduler", faults_cluster, "--out", str(out), "--retries", "0", "--quiet"]
        code = main(["run", str(spec), *options, *(["--batch-size", size] if size else [])])
        done = capsys.readouterr()
        assert code == 0, (size, done.out, done.err)
        assert "30 tasks ok, 0 failed, 0 missing" in done.out, size
        results.append(xr.load_dataset(out / "results.nc"))
    first = results[0]
    # every task as if it ran alone: 2.0 u + 0 + 1 for the first draw u of its seed
    assert np.array_equal(first["value"].values, 2.0 * runner.draws(first) + 1.0)
    for other in results[1:]:
        same_results(other, first)


@pytest.mark.parametrize("size", ["0", "-3"])
def test_a_batch_size_below_one_is_refused_in_one_line(runner, size, capsys):
    spec = runner.spec("refused")
    assert main(["run", str(spec), "--batch-size", size]) == 2  # refused before any work
    assert capsys.readouterr().err == f"campaign: error: --batch-size {size} must be >= 1\n"
    assert not (runner.folder / "refused").exists()
