"""The decision to stop a run whose first results all failed the same way, on known
sequences of stored batches."""

from __future__ import annotations

from campaign.plan.early_stop import SameFailure, error_shape


def failed(cell: int, error: str = "ValueError: trace missing") -> dict:
    return {"status": "failed", "cell": {"load": cell}, "error": error}


def ok(cell: int) -> dict:
    return {"status": "ok", "cell": {"load": cell}, "metrics": {"v": 1.0}}


def test_eight_same_failures_over_two_cells_stop_at_the_batch_that_completes_them():
    watch = SameFailure(cells=3)
    assert not watch.stop([failed(1)] * 5)
    assert not watch.stop([failed(1)] * 4)  # 9 failures, one cell: not yet
    assert watch.stop([failed(2)])
    assert (watch.failed, len(watch.seen_cells), watch.error) == (
        10,
        2,
        "ValueError: trace missing",
    )
    assert not watch.stop([failed(3)])  # decided once


def test_a_success_or_another_error_first_ends_the_watch():
    watch = SameFailure(cells=2)
    assert not watch.stop([failed(1)] * 3 + [ok(2)] + [failed(2)] * 10)
    assert not watch.stop([failed(1)] * 20)
    other = SameFailure(cells=2)
    assert not other.stop([failed(1)] * 4 + [failed(2, "KeyError: 'x'")] + [failed(2)] * 10)
    assert not other.stop([failed(1)] * 20)


def test_a_run_of_one_cell_stops_within_it_and_fewer_than_eight_never_stop():
    assert SameFailure(cells=1).stop([failed(1)] * 8)
    watch = SameFailure(cells=2)
    assert not watch.stop([failed(1), failed(2)] * 3)


def test_errors_differing_in_numbers_and_hexadecimal_names_are_the_same():
    a = "prog exited with code 3; stderr: diverged at step 12 in /tmp/tasks/9f3a0c1d-4be2/x.log"
    b = "prog exited with code 3; stderr: diverged at step 977 in /tmp/tasks/77aa10be-0c1f/x.log"
    assert error_shape(a) == error_shape(b)
    assert error_shape("code 3; stderr: diverged") != error_shape("code 3; stderr: converged")
