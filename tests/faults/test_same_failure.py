"""A run whose first results all fail the same way stops there, in one line, what finished
stored and written to results.nc; ``--keep-going`` runs on, and the rerun ends as a run that
never stopped."""

from __future__ import annotations

import re

import numpy as np


def test_a_run_whose_first_results_all_fail_the_same_way_stops_early(runner):
    fields = {"levels": list(range(1, 10)), "replicates": 10}  # 90 tasks, 9 cells
    spec = runner.spec("broken", fault="raise", above=0.0, **fields)  # every task raises
    done = runner.run(spec, "--workers", "1", "--batch-size", "2", "--retries", "0")
    assert done.returncode == 2, done.stderr
    assert done.stdout.startswith("broken: 90 tasks (9 cells x 10 replicates)")
    stored = runner.records(spec)
    assert 11 <= stored < 90  # the first cell's 10 and at least one of the second's
    line = done.stderr
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
    going = runner.run(spec, "--workers", "1", "--batch-size", "2", "--keep-going")
    assert going.returncode == 1, going.stderr
    assert "0 tasks ok, 90 failed, 0 missing" in going.stdout
    reference = runner.spec("reference", fault="raise", above=0.0, **fields)
    through = runner.run(reference, "--workers", "2", "--keep-going")
    assert through.returncode == 1, through.stderr
    for name in ("seed", "status"):
        assert np.array_equal(runner.results(spec)[name], runner.results(reference)[name])
    errors = [runner.failures(s)["failure_error"].values.tolist() for s in (spec, reference)]
    assert errors[0] == errors[1] and len(set(errors[0])) == 10  # a draw per replicate


def test_failures_of_one_cell_or_of_different_kinds_do_not_stop_the_run(runner):
    # one cell of two fails every task the same way: the run goes on
    spec = runner.spec("one-cell", factor="above", levels=[0.0, 1.0], fault="raise")
    done = runner.run(spec, "--workers", "1", "--batch-size", "2", "--retries", "0")
    assert done.returncode == 1, done.stderr
    assert "10 tasks ok, 10 failed, 0 missing" in done.stdout
