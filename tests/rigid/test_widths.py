"""The widths kept for EASY survive a frame that outlives its call: Dask's profiler holds
the frames it samples, and a numpy view of the widths left in one would lock their buffer."""

from __future__ import annotations

import sys

from campaign.models.rigid.policies.widths import Widths


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
