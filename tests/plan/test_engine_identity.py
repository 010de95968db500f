"""What a worker's engine is, and how it differs from the driver's: the campaign code digest,
the Python version and the numeric libraries, compared with each batch's result."""

from __future__ import annotations

import platform
import shutil
from importlib.metadata import version
from pathlib import Path

import campaign
from campaign.plan.sources import (
    _engine_identity,
    combined_digest,
    engine_files,
    engine_identity,
    identity_differences,
)

PACKAGE = Path(campaign.__file__).resolve().parent


def test_the_engine_identity_names_the_code_python_and_numeric_libraries_and_is_taken_once():
    _engine_identity.cache_clear()
    identity = engine_identity()
    assert identity == {
        "campaign": campaign.__version__,
        "campaign code": combined_digest(engine_files(PACKAGE)),
        "python": f"CPython {platform.python_version()}",
        "numpy": version("numpy"),
        "scipy": version("scipy"),
        "pandas": version("pandas"),
    }
    identity["numpy"] = "changed by a caller"
    assert engine_identity()["numpy"] == version("numpy")
    assert _engine_identity.cache_info().misses == 1


def test_the_engine_code_is_the_package_less_the_models_own_packages(tmp_path):
    copy = tmp_path / "campaign"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    files = engine_files(copy)
    assert files == engine_files(PACKAGE)  # named relative to the package: any place
    assert {
        "execute/worker.py",
        "results/names.py",
        "models/__init__.py",
        "models/contract.py",
    } <= set(files)
    assert not [name for name in files if name.startswith(("models/jobs/", "models/rigid/"))]

    digest = combined_digest(files)
    jobs = copy / "models" / "jobs" / "__init__.py"
    jobs.write_text(jobs.read_text() + "\n# a model's own code: digested as the model's\n")
    assert combined_digest(engine_files(copy)) == digest
    worker = copy / "execute" / "worker.py"
    worker.write_text(
        worker.read_text().replace("STOPPED_EXIT_CODE = 70", "STOPPED_EXIT_CODE = 71")
    )
    assert combined_digest(engine_files(copy)) != digest


HERE = {
    "campaign": "0.1.0",
    "campaign code": "9f8e7d6c5b4a3f2e1d0c" + "0" * 44,
    "python": "CPython 3.11.7",
    "numpy": "2.4.6",
    "scipy": "1.17.1",
    "pandas": "3.1.1",
}


def test_the_same_engine_differs_in_nothing():
    assert identity_differences(HERE, dict(HERE)) == []


def test_each_difference_is_named_with_the_workers_value_and_this_ones():
    there = {**HERE, "campaign code": "1a2b3c4d5e6f7a8b" + "1" * 48, "numpy": "2.3.0"}
    del there["pandas"]
    assert identity_differences(HERE, there) == [
        "campaign code differs (digest 1a2b3c4d5e6f there, 9f8e7d6c5b4a here)",
        "numpy differs (2.3.0 there, 2.4.6 here)",
        "pandas differs (unknown there, 3.1.1 here)",
    ]


def test_a_worker_that_sends_no_identity_runs_an_older_engine():
    assert identity_differences(HERE, None) == [
        "campaign differs (the worker does not say which engine it runs: an older one)"
    ]
