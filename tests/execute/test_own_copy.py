"""A task's own copy of its params: batchmates of one cell share one params object, so a
model changing its params (at the top or deep inside) must not change a batchmate's."""

from __future__ import annotations

from campaign.execute.worker import own_copy


def test_plain_params_are_copied_at_the_top():
    shared = {"load": 1.5, "policy": "easy", "jobs": 100, "kill": True, "note": None}
    mine = own_copy(shared)
    mine["load"] = 2.0
    mine.pop("jobs")
    assert shared == {"load": 1.5, "policy": "easy", "jobs": 100, "kill": True, "note": None}


def test_params_holding_containers_are_copied_all_the_way_down():
    shared = {"sites": [{"cpus": 4}], "weights": (1, [2, 3])}
    mine = own_copy(shared)
    mine["sites"][0]["cpus"] = 8
    mine["weights"][1].append(4)
    assert shared == {"sites": [{"cpus": 4}], "weights": (1, [2, 3])}
