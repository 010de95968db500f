"""What becomes of each task's result in a finished batch, and the failures a batch that
could not run gives, without a cluster."""

import pytest

from campaign.errors import CampaignError
from campaign.execute import Item
from campaign.execute.finishing import Fate, result_fate
from campaign.execute.reading import batch_failures, no_engine_like_this, other_code, unloadable


def item(copies=0, attempts=0, done=False):
    task = Item("t", {}, 1, {})
    task.copies, task.attempts, task.done = copies, attempts, done
    return task


def test_an_ok_result_of_the_only_copy_is_final():
    assert result_fate(item(), "ok", False, retries=0) is Fate.FINAL


def test_the_first_result_wins_and_a_failure_waits_for_another_copy_in_flight():
    assert result_fate(item(done=True), "ok", False, 0) is Fate.IGNORE
    assert result_fate(item(copies=1), "failed", False, 0) is Fate.IGNORE
    assert result_fate(item(copies=1), "ok", False, 0) is Fate.FINAL


def test_a_skipped_task_runs_again_only_when_no_copy_of_it_is_left():
    assert result_fate(item(), "skipped", False, 0) is Fate.AGAIN
    assert result_fate(item(copies=1), "skipped", False, 0) is Fate.IGNORE
    assert result_fate(item(done=True), "skipped", False, 0) is Fate.IGNORE


def test_a_transient_failure_is_tried_again_while_tries_are_left():
    assert result_fate(item(attempts=0), "failed", True, retries=2) is Fate.RETRY
    assert result_fate(item(attempts=1), "failed", True, retries=2) is Fate.RETRY
    assert result_fate(item(attempts=2), "failed", True, retries=2) is Fate.FINAL
    assert result_fate(item(attempts=0), "failed", False, retries=2) is Fate.FINAL


def test_a_batch_that_could_not_run_fails_each_task_transiently():
    failures = batch_failures(ImportError("no module named sim"), 2)
    assert (
        failures
        == [
            {
                "status": "failed",
                "error": "ImportError: no module named sim",
                "traceback": "",
                "elapsed": 0.0,
                "transient": True,
            }
        ]
        * 2
    )
    assert failures[0] is not failures[1]


@pytest.mark.parametrize(
    ("error", "start"),
    [
        (other_code("tcp://w:1", "m:run"), "the Dask worker tcp://w:1 runs other code of model"),
        (unloadable("tcp://w:1", "no module m", 4), "on Dask worker tcp://w:1: no module m; the 4"),
        (no_engine_like_this("tcp://w:1", "numpy 2.0", 3), "no Dask worker runs the engine"),
    ],
)
def test_the_errors_that_stop_a_run_name_the_worker(error, start):
    assert isinstance(error, CampaignError)
    assert str(error).startswith(start)
