"""The embedded cluster keeps its full set of workers until the campaign ends, however many
worker processes its tasks end."""

from __future__ import annotations

import re

import numpy as np

# Dask closes a nanny whose worker is away this long after a death (15 s by default), which
# tasks that keep ending their processes bring about sooner or later; at 0 s it happens at the
# first death, so only the campaign's own keeper can bring the workers back.
NANNIES_GIVE_UP = {"DASK_DISTRIBUTED__DEPLOY__LOST_WORKER_TIMEOUT": "0s"}


def test_twelve_hung_tasks_past_the_timeout_end_as_twelve_failures_and_the_rest_run(
    runner, undisturbed
):
    fields = {"levels": [1, 2, 3, 4], "seed": 27}
    spec = runner.spec("hangs", fault="hang", above=0.8, **fields)
    done = runner.run(spec, "--workers", "2", "--task-timeout", "1", env=NANNIES_GIVE_UP)
    assert done.returncode == 1, done.stderr + done.stdout
    hung = runner.draws(runner.results(spec)) > 0.8
    assert hung.sum() == 12, "this seed gives 12 hung tasks in 40"
    assert "28 tasks ok, 12 failed, 0 missing" in done.stdout
    ended = re.findall(r"ending (\d+) worker process\(es\) stuck past --task-timeout", done.stdout)
    assert sum(map(int, ended)) >= 12, done.stdout

    results = runner.results(spec)
    clean = undisturbed(**fields)
    assert np.array_equal(results["status"].values, np.where(hung, 2, 1))
    assert np.array_equal(results["value"].values[~hung], clean["value"].values[~hung])
    failures = runner.failures(spec)
    assert failures.sizes["failure"] == 12
    for error in failures["failure_error"].values:
        assert str(error).startswith(
            "TimeoutError: timed out: the task ran longer than --task-timeout 1 s"
        )
