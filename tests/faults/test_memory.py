"""A model that exhausts memory: under an address-space limit (RLIMIT_AS, inherited by the
embedded cluster's workers, as a batch system's memory limit is) its allocation fails or its
worker process dies; either way only its own tasks fail and the others end as undisturbed."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).resolve().parent
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [str(FOLDER.parents[1]), str(FOLDER), os.environ.get("PYTHONPATH", "")]
    ),
}

LIMIT = 2 * 2**30  # bytes of address space for `run` and each worker: the model's hoard hits it
REPLICATES = 5
FIELDS = {"factor": "fault", "levels": ["none", "memory"], "replicates": REPLICATES}


def test_a_model_exhausting_memory_fails_only_its_tasks(runner, undisturbed, same_results):
    clean = undisturbed(**FIELDS)
    spec = runner.spec("memory", above=0.6, **FIELDS)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))

    command = [sys.executable, "-m", "campaign", "run", str(spec), "--quiet"]
    done = subprocess.run(
        [*command, "--workers", "2", "--retries", "0"],
        env=ENV,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=600,
    )
    faulty = runner.results(spec)
    levels = list(faulty["fault"].values)
    expected = np.zeros(faulty["status"].shape, dtype=bool)
    hoarding = (runner.draws(faulty) > 0.6)[levels.index("memory")]
    expected[levels.index("memory")] = hoarding
    assert 0 < expected.sum() < REPLICATES, "this seed gives a few hoarding tasks"
    assert done.returncode == 1, done.stderr
    assert done.stderr == "", done.stderr
    failed = int(expected.sum())
    assert f"{2 * REPLICATES - failed} tasks ok, {failed} failed, 0 missing" in done.stdout
    assert np.array_equal(faulty["status"].values, np.where(expected, 2, 1))
    ok = ~expected
    assert np.array_equal(faulty["value"].values[ok], clean["value"].values[ok])
    assert np.array_equal(faulty["seed"].values, clean["seed"].values)
    for error in runner.failures(spec)["failure_error"].values:
        assert str(error).startswith(("MemoryError", "KilledWorker")), error
        assert "\n" not in str(error)
