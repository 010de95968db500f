"""The embedded cluster keeps its full set of workers until the campaign ends, however many
worker processes its tasks end."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import numpy as np
from distributed import Client

from campaign.execute.calls import WorkerCalls
from tests.conftest import dask_cluster

# Dask closes a nanny whose worker is away this long after a death (15 s by default), which
# tasks that keep ending their processes bring about sooner or later; at 0 s it happens at the
# first death, so only the campaign's own keeper can bring the workers back.
NANNIES_GIVE_UP = {"DASK_DISTRIBUTED__DEPLOY__LOST_WORKER_TIMEOUT": "0s"}


def test_four_hung_tasks_past_the_timeout_end_as_four_failures_and_the_rest_run(
    runner, undisturbed
):
    """Twice as many hung tasks as workers: worker processes that replace ended ones are
    ended in turn, while the nannies give up at the first death."""
    fields = {"levels": [1, 2], "seed": 27}
    spec = runner.spec("hangs", fault="hang", above=0.85, **fields)
    done = runner.run(spec, "--workers", "2", "--task-timeout", "1", env=NANNIES_GIVE_UP)
    assert done.returncode == 1, done.stderr + done.stdout
    assert "16 tasks ok, 4 failed, 0 missing" in done.stdout, done.stderr + done.stdout
    hung = runner.draws(runner.results(spec)) > 0.85
    assert hung.sum() == 4, "this seed gives 4 hung tasks in 20"
    assert "16 tasks ok, 4 failed, 0 missing" in done.stdout
    ended = re.findall(
        r"ending (\d+) worker process\(es\) stuck past the task timeout of", done.stdout
    )
    assert sum(map(int, ended)) >= 4, done.stdout

    results = runner.results(spec)
    clean = undisturbed(**fields)
    assert np.array_equal(results["status"].values, np.where(hung, 2, 1))
    assert np.array_equal(results["value"].values[~hung], clean["value"].values[~hung])
    failures = runner.failures(spec)
    assert failures.sizes["failure"] == 4
    for error in failures["failure_error"].values:
        assert str(error).startswith(
            "TimeoutError: timed out: the task ran longer than the task timeout of 1 s"
        )


def test_a_worker_stopped_midway_holds_no_run_its_tasks_run_on_the_other_worker(
    runner, undisturbed, same_results, monkeypatch
):
    """SIGSTOP freezes a worker for longer than the whole run takes: it answers nothing, and
    the scheduler keeps it for minutes. The run copies its tasks to the other worker and ends
    while it is still frozen, with the results of an undisturbed run."""
    fields = {"levels": [1, 2, 3, 4], "duration_ms": 40, "seed": 29}
    spec = runner.spec("frozen", **fields)
    # the worker processes start with this process's path: they import `faulty` from here
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    with (
        dask_cluster(2) as cluster,
        Client(cluster) as client,
    ):
        pids = client.run(os.getpid)
        process = runner.start(spec, "--scheduler", cluster.scheduler_address)
        frozen = sorted(pids)[0]
        try:
            deadline = time.monotonic() + 60
            while runner.records(spec) < 6:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the campaign made no progress"
                time.sleep(0.01)
            os.kill(pids[frozen], signal.SIGSTOP)
            started = time.monotonic()
            out, err = process.communicate(timeout=60)  # the worker is frozen all this time
            took = time.monotonic() - started
        finally:
            os.kill(pids[frozen], signal.SIGCONT)
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert process.returncode == 0, err
    assert took < 30, took
    assert "40 tasks ok, 0 failed, 0 missing" in out
    assert re.search(rf"worker {frozen} does not answer within 5 s: \d+ tasks it holds", out), out
    same_results(runner.results(spec), undisturbed(**fields))


def test_a_question_to_a_stopped_worker_waits_the_bound_and_is_not_asked_again_until_answered():
    with (
        dask_cluster(2) as cluster,
        Client(cluster) as client,
    ):
        pids = client.run(os.getpid)
        frozen, other = sorted(pids)
        calls = WorkerCalls(client, timeout=1.0)
        os.kill(pids[frozen], signal.SIGSTOP)
        try:
            started = time.monotonic()
            assert calls.run(os.getpid, workers=pids) == {other: pids[other]}
            assert 1.0 <= time.monotonic() - started < 5
            assert calls.silent == {frozen}
            started = time.monotonic()
            assert calls.run(os.getpid, workers=pids) == {other: pids[other]}
            assert time.monotonic() - started < 0.9  # not asked: no second wait
        finally:
            os.kill(pids[frozen], signal.SIGCONT)
        deadline = time.monotonic() + 10
        while calls.silent:  # it answers the open question once it runs again
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert calls.run(os.getpid, workers=pids) == pids
