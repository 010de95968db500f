"""Models that misbehave inside the model call: each failing task is one recorded failure with
one line of error text, the others end as in an undisturbed run, and nothing else is said."""

from __future__ import annotations

import json
import warnings

import numpy as np

from campaign.cli.main import main

KINDS = ["raise", "garbage", "sysexit", "cancel"]
ERRORS = {
    "raise": "RuntimeError: fault injected for draw ",
    "garbage": "TypeError: metric 'value' is not a number: 'not a number'",
    "sysexit": "SystemExit: sys.exit(4) called",
    "cancel": "CancelledError",
}


def run(spec, capfd, *options: str):
    """`campaign run SPEC --quiet *options` in this process: its exit status, and what it and
    the workers it started printed (file descriptors 1 and 2, as a terminal shows them), with
    any Python warning it issued written after it, as a process of its own would write it."""
    with warnings.catch_warnings(record=True) as issued:
        warnings.simplefilter("always")
        code = main(["run", str(spec), "--quiet", *options])
    printed = capfd.readouterr()
    said = "".join(f"{warning.category.__name__}: {warning.message}\n" for warning in issued)
    return code, printed.out, printed.err + said


def test_raise_garbage_sys_exit_and_cancelled_error_fail_only_their_tasks(
    runner, faults_cluster, faults_models, capfd
):
    fields = {"factor": "fault", "levels": KINDS, "replicates": 10}
    reference = runner.spec("undisturbed", fault="none", **fields)  # same design and seeds
    assert run(reference, capfd, "--scheduler", faults_cluster)[0] == 0
    clean = runner.results(reference)

    spec = runner.spec("faults", above=0.6, **fields)
    # an embedded cluster, whose workers write to this terminal: nothing may show there either
    code, out, err = run(spec, capfd, "--workers", "2", "--retries", "0")
    faulty = runner.results(spec)
    expected_failed = runner.draws(faulty) > 0.6
    failed = int(expected_failed.sum())
    assert failed == 8, "this seed gives two faulty tasks of each kind"
    assert code == 1, err
    assert err == "", "a model's failure is a recorded failure, not a log or traceback"
    assert f"{40 - failed} tasks ok, {failed} failed, 0 missing" in out
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


def test_a_model_that_fails_to_import_only_on_the_workers_stops_the_run_in_one_line(
    runner, faults_models, capfd
):
    spec = runner.spec("broken", model="broken_on_workers:run")
    code, _, err = run(spec, capfd, "--workers", "2")  # workers that write to this terminal
    assert code == 2
    assert err.count("\n") == 1, err
    assert err.startswith("campaign: error: on Dask worker tcp://127.0.0.1:")
    assert (
        ": model 'broken_on_workers:run': importing module 'broken_on_workers' failed: "
        "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/calibration.dat'; "
        "the 0 results finished in this run are saved: make the model importable on every worker"
    ) in err
    assert not (runner.folder / "broken" / "results.nc").exists()
