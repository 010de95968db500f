"""What `campaign verify` counts as the same value: the same bits."""

from __future__ import annotations

import math

from campaign.pipelines.verify import Mismatch, compare


def ok(**metrics):
    return {"status": "ok", "metrics": metrics}


def test_values_compare_bit_for_bit_nan_with_nan_and_zero_apart_from_minus_zero():
    stored = ok(a=0.1 + 0.2, b=math.nan, c=0.0, d=1.0)
    now = ok(a=0.30000000000000004, b=math.nan, c=-0.0, e=2.0)
    assert compare("k", stored, now) == [
        Mismatch("k", "c", 0.0, -0.0),
        Mismatch("k", "d", 1.0, None),
        Mismatch("k", "e", None, 2.0),
    ]
    assert [m.line() for m in compare("k", stored, now)] == [
        "k: c: stored 0.0, now -0.0",
        "k: d: stored 1.0, now (none)",
        "k: e: stored (none), now 2.0",
    ]


def test_a_task_that_fails_now_is_one_mismatch_with_its_error():
    now = {"status": "failed", "error": "OSError: gone"}
    assert [m.line() for m in compare("k", ok(a=1.0), now)] == [
        "k: (the task): stored ok, now failed: OSError: gone"
    ]
