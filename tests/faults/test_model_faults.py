"""Models that misbehave inside the model call: each failing task is one recorded failure with
one line of error text, the others end as in an undisturbed run, and nothing else is said."""

from __future__ import annotations

import json

import numpy as np

KINDS = ["raise", "garbage", "sysexit", "cancel"]
ERRORS = {
    "raise": "RuntimeError: fault injected for draw ",
    "garbage": "TypeError: metric 'value' is not a number: 'not a number'",
    "sysexit": "SystemExit: sys.exit(4) called",
    "cancel": "CancelledError",
}


def test_raise_garbage_sys_exit_and_cancelled_error_fail_only_their_tasks(runner, undisturbed):
    fields = {"factor": "fault", "levels": KINDS, "replicates": 10}
    clean = undisturbed(**fields)

    spec = runner.spec("faults", above=0.6, **fields)
    done = runner.run(spec, "--workers", "2", "--retries", "0")
    faulty = runner.results(spec)
    expected_failed = runner.draws(faulty) > 0.6
    failed = int(expected_failed.sum())
    assert failed == 8, "this seed gives two faulty tasks of each kind"
    assert done.returncode == 1, done.stderr
    assert done.stderr == "", "a model's failure is a recorded failure, not a log or traceback"
    assert f"{40 - failed} tasks ok, {failed} failed, 0 missing" in done.stdout
    assert np.array_equal(faulty["status"].values, np.where(expected_failed, 2, 1))
    ok = ~expected_failed
    assert np.array_equal(faulty["value"].values[ok], clean["value"].values[ok])
    assert np.isnan(faulty["value"].values[expected_failed]).all()
    assert np.array_equal(faulty["seed"].values, clean["seed"].values)

    errors = {}
    failures = runner.failures(spec)
    for cell, error in zip(failures["failure_cell"].values, failures["failure_error"].values):
        errors.setdefault(json.loads(str(cell))["fault"], []).append(str(error))
    for kind, row in zip(KINDS, expected_failed):
        assert len(errors.get(kind, [])) == row.sum() > 0, kind
        for error in errors[kind]:
            assert error.startswith(ERRORS[kind]) and "\n" not in error, (kind, error)


def test_a_model_that_fails_to_import_only_on_the_workers_stops_the_run_in_one_line(runner):
    spec = runner.spec("broken", model="broken_on_workers:run")
    done = runner.run(spec, "--workers", "2")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("campaign: error: on Dask worker tcp://127.0.0.1:")
    assert (
        ": model 'broken_on_workers:run': importing module 'broken_on_workers' failed: "
        "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/calibration.dat'; "
        "the 0 results finished in this run are saved: make the model importable on every worker"
    ) in done.stderr
    assert not (runner.folder / "broken" / "results.nc").exists()
