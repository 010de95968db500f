"""Timeout decisions from a snapshot of what the workers run, without a cluster."""

from campaign.execute.timeouts import (
    Stuck,
    Timeouts,
    TimeoutSnapshot,
    timed_out_result,
    timeout_decisions,
)


def snapshot(reports, in_flight=("a", "b", "c"), abandoned=(), timeout=2.0):
    return TimeoutSnapshot(reports, frozenset(in_flight), frozenset(abandoned), timeout)


def test_a_task_past_the_timeout_fails_and_its_worker_is_ended():
    reports = {"w1": {"a": (3, 2.5), "b": (0, 1.0)}, "w2": {"c": (1, 2.0)}}
    # c ran exactly the timeout: it goes on
    assert timeout_decisions(snapshot(reports)) == Timeouts(
        (Stuck("a", 3, 2.5),), frozenset({"w1"}), frozenset({"a", "b", "c"})
    )


def test_an_abandoned_batch_stuck_past_the_timeout_ends_its_worker_without_a_failure():
    reports = {"w1": {"x": (0, 9.0)}, "w2": {"x2": (0, 1.0)}}
    decided = timeout_decisions(snapshot(reports, abandoned=("x", "x2")))
    assert decided == Timeouts((), frozenset({"w1"}), frozenset({"x", "x2"}))


def test_a_batch_no_longer_in_flight_and_silent_workers_are_left_alone():
    reports = {"w1": {"gone": (0, 5.0)}, "w2": TimeoutError("no answer")}
    assert timeout_decisions(snapshot(reports)) == Timeouts((), frozenset(), frozenset({"gone"}))


def test_a_batch_reported_by_two_workers_fails_once_and_ends_both():
    reports = {"w1": {"a": (0, 3.0)}, "w2": {"a": (0, 3.0)}}
    decided = timeout_decisions(snapshot(reports))
    assert decided.stuck == (Stuck("a", 0, 3.0),)
    assert decided.stop == frozenset({"w1", "w2"})


def test_the_failure_of_a_timed_out_task_says_the_limit_and_the_time_it_ran():
    assert timed_out_result("t1", 3.04, 2.0) == {
        "key": "t1",
        "status": "failed",
        "error": "TimeoutError: timed out: the task ran longer than the task timeout of 2 s "
        "(stopped after 3.0 s)",
        "traceback": "",
        "elapsed": 3.04,
    }
