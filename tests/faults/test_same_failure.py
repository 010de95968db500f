"""A run whose first results all fail the same way stops there, in one line, what finished
stored and written to results.nc; ``--keep-going`` runs on, and the rerun ends as a run that
never stopped. The runs go through `campaign run` in this process, on one cluster of one
worker for the module (tests/faults/conftest.py), which imports the faulty model."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from campaign.cli import main

FOLDER = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def scheduler(one_worker_cluster):
    return one_worker_cluster


@pytest.fixture
def run(scheduler, capsys):
    """`campaign run SPEC --quiet OPTIONS` in this process on the module's cluster: its exit
    status, what it printed and said."""

    def run(spec: Path, *options: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(["run", str(spec), "--quiet", "--scheduler", scheduler, *options])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_a_run_whose_first_results_all_fail_the_same_way_stops_early(runner, run):
    fields = {"levels": list(range(1, 10)), "replicates": 10}  # 90 tasks, 9 cells
    spec = runner.spec("broken", fault="raise", above=0.0, **fields)  # every task raises
    code, out, line = run(spec, "--batch-size", "2", "--retries", "0")
    assert code == 2, line
    assert out.startswith("broken: 90 tasks (9 cells x 10 replicates)")
    stored = runner.records(spec)
    assert 11 <= stored < 90  # the first cell's 10 and at least one of the second's
    assert line.count("\n") == 1
    # the draws differ from task to task: the same error, numbers aside
    assert re.fullmatch(
        rf"campaign: error: {re.escape(str(spec))}: stopped: the first {stored} finished tasks "
        r"\((\d) cells\) all failed with the same error: RuntimeError: fault injected for draw "
        r"0\.\d{6}; they are stored, the rest did not run: fix it and run again \(failed tasks "
        r"are tried again\), or run with --keep-going to run every task regardless\n",
        line,
    ), line
    results = runner.results(spec)  # what finished, written
    assert results.attrs["tasks_failed"] == stored
    assert results.attrs["tasks_missing"] == 90 - stored
    assert results.attrs["tasks_ok"] == 0
    # --keep-going runs the rest regardless, and ends as a run that never stopped
    code, out, err = run(spec, "--batch-size", "2", "--keep-going")
    assert code == 1, err
    assert "0 tasks ok, 90 failed, 0 missing" in out
    reference = runner.spec("reference", fault="raise", above=0.0, **fields)
    code, _, err = run(reference, "--keep-going")
    assert code == 1, err
    for name in ("seed", "status"):
        assert np.array_equal(runner.results(spec)[name], runner.results(reference)[name])
    errors = [runner.failures(s)["failure_error"].values.tolist() for s in (spec, reference)]
    assert errors[0] == errors[1] and len(set(errors[0])) == 10  # a draw per replicate


def test_failures_of_one_cell_or_of_different_kinds_do_not_stop_the_run(runner, run):
    # one cell of two fails every task the same way: the run goes on
    spec = runner.spec("one-cell", factor="above", levels=[0.0, 1.0], fault="raise")
    code, out, err = run(spec, "--batch-size", "2", "--retries", "0")
    assert code == 1, err
    assert "10 tasks ok, 10 failed, 0 missing" in out
