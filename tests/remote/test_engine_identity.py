"""A worker that runs another engine than the driver (an older or edited checkout of `campaign`
on a remote machine) is not used: its results are never stored and its tasks run elsewhere."""

from __future__ import annotations

import shutil

import numpy as np
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.plan.sources import combined_digest, engine_files

SPEC = """
name: {name}
model: busy
factors:
  duration_ms: [20, 21]
replicates: 40
seed: 33
output: {name}
"""


def edited_copy(repo, folder):
    """A copy of the `campaign` package whose metric values are doubled: numbers that would
    show if one of its results were stored."""
    copy = folder / "campaign"
    shutil.copytree(repo / "campaign", copy, ignore=shutil.ignore_patterns("__pycache__"))
    layout = copy / "results" / "names.py"
    text = layout.read_text()
    for line in ("values[name] = _as_float(name, value)\n", "values[name] = value\n"):
        assert text.count(line) == 1, line  # the checked path and the plain floats' one
        text = text.replace(line, line.replace("= ", "= 2 * "))
    layout.write_text(text)
    return copy


def test_results_of_a_worker_with_edited_campaign_code_are_never_stored(
    start_cluster, write_spec, remote, tmp_path, scheduler_address, capsys
):
    copy = edited_copy(remote.repo, tmp_path / "other")
    cluster = start_cluster(workers=1, nanny=False)
    port = remote.free_port()
    cluster.start_worker(env={**remote.env, "PYTHONPATH": str(copy.parent)}, port=port)
    cluster.wait_for_workers(2)

    clean_spec = write_spec(SPEC.format(name="clean"), "clean.yaml")
    clean = campaign.run(clean_spec, scheduler=scheduler_address, progress=False)
    spec = write_spec(SPEC.format(name="mixed"), "mixed.yaml")
    # the driver in this process; the worker with the edited copy is a process of its own
    code = main(["run", str(spec), "--quiet", "--scheduler", cluster.address])
    ran = capsys.readouterr()
    assert code == 0, ran.err + cluster.logs()

    here = combined_digest(engine_files(remote.repo / "campaign"))[:12]
    there = combined_digest(engine_files(copy))[:12]
    assert here != there
    refused = (
        f"worker tcp://127.0.0.1:{port}: campaign code differs (digest {there} there, {here} "
        "here) — it is not used"
    )
    assert ran.out.count(refused) == 1, ran.out
    assert "80 tasks ok, 0 failed, 0 missing" in ran.out
    workers = {record["worker"] for record in remote.ledger_records(spec.parent / "mixed")}
    assert workers and f"tcp://127.0.0.1:{port}" not in workers
    mixed = xr.load_dataset(spec.parent / "mixed" / "results.nc")
    for name in ("value", "value_mean", "value_std", "value_ci_low", "value_ci_high", "seed"):
        assert np.array_equal(mixed[name].values, clean[name].values, equal_nan=True), name
    draws = np.vectorize(lambda seed: np.random.default_rng(int(seed)).random())(mixed["seed"])
    assert np.array_equal(mixed["value"].values, draws)


def test_a_run_whose_only_worker_runs_other_campaign_code_stops_in_one_line(
    start_cluster, write_spec, remote, tmp_path, capsys
):
    copy = edited_copy(remote.repo, tmp_path / "other")
    cluster = start_cluster(workers=0, wait=False, nanny=False)
    port = remote.free_port()
    cluster.start_worker(env={**remote.env, "PYTHONPATH": str(copy.parent)}, port=port)
    cluster.wait_for_workers(1)

    spec = write_spec(SPEC.format(name="refused"), "refused.yaml")
    code = main(["run", str(spec), "--quiet", "--scheduler", cluster.address])
    ran = capsys.readouterr()
    assert code == 2, ran.out + ran.err
    lines = ran.err.strip().splitlines()
    assert len(lines) == 1, ran.err
    assert lines[0].startswith(
        f"campaign: error: no Dask worker runs the engine this machine runs (worker "
        f"tcp://127.0.0.1:{port}: campaign code differs (digest "
    ), lines[0]
    assert "the 0 results finished in this run are saved" in lines[0]
    assert remote.ledger_records(spec.parent / "refused") == []
