"""The widths kept for EASY: they survive a frame that outlives its call (Dask's profiler
holds the frames it samples, and a numpy view of the widths left in one would lock their
buffer), and a queue that grows long and short again gets the same schedule."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from numpy.random import SeedSequence

from campaign.models.jobs import build_workload, parse
from campaign.models.rigid.policies import widths as widths_module
from campaign.models.rigid.policies.widths import Widths
from campaign.models.rigid.simulate import run_schedule


def test_a_held_frame_of_easy_candidates_does_not_lock_the_widths():
    sizes, estimates = [4, 300, 2, 8], [10.0, 5.0, 1.0, 50.0]
    widths = Widths(sizes, estimates)
    widths.follow([0, 1, 2, 3], True)
    held = []

    def hold(frame, event, arg):
        if event == "return" and frame.f_code.co_name == "easy_candidates":
            held.append(frame)  # as a sampling profiler keeps it, locals and all

    sys.setprofile(hold)
    try:
        candidates = widths.easy_candidates(0, 0.0, 20.0, 16, 0)
    finally:
        sys.setprofile(None)
    assert held and candidates == [0, 2]
    widths.gone = [0]
    widths.follow([1, 2, 3], False)  # BufferError while a view of the bytes is alive
    assert bytes(widths.bytes) == bytes([255, 2, 8])
    assert widths.estimates.tolist() == [5.0, 1.0, 50.0]


@pytest.mark.parametrize("policy", ["easy", "accasim_easy"])
def test_a_queue_growing_past_the_short_list_and_back_keeps_its_schedule(policy, monkeypatch):
    """Lists up to SHORT long are walked job by job and longer ones through the widths,
    rebuilt when a list grows long again: the schedule is the one of either way alone."""
    params = parse({"workload": "randomized", "jobs": 700, "scheduler": policy})
    workload, processors, _ = build_workload(params, SeedSequence(3).spawn(5))

    def schedule(short):
        monkeypatch.setattr(widths_module, "SHORT", short)
        return run_schedule(workload, processors, policy, "user", True)

    switching = schedule(widths_module.SHORT)
    walked, followed = schedule(10**9), schedule(0)
    assert switching.start.tolist() == walked.start.tolist() == followed.start.tolist()
    # The queue (submitted, not started) passes SHORT on the way up and on the way down.
    events = sorted([(s, 1) for s in workload.submit] + [(s, -1) for s in switching.start])
    lengths = np.cumsum([step for _, step in events])
    peak = int(np.argmax(lengths))
    assert lengths[peak] > 2 * widths_module.SHORT
    assert (lengths[:peak] <= widths_module.SHORT).any()
    assert (lengths[peak:] <= widths_module.SHORT).any()
