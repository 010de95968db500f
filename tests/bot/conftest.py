"""The worked example of the bot model document (section 7), shared by its tests.

Site 0 = {p0: speed 1}, site 1 = {p1: speed 2, p2: speed 4}; link 125,000 bytes/s;
t0 (300,000 bytes, cost 300), t1 (200,000 bytes, cost 200); one job released at 0."""

from __future__ import annotations

from campaign.models.bot import Platform, SimResult, Simulator, Workload

PLATFORM = Platform.from_sites([[1.0], [2.0, 4.0]])
WORKLOAD = Workload((300_000.0, 200_000.0), ((300.0, 200.0),))
WARM = {0: [0], 1: [1]}
"""Warm start: site 0 holds f0, site 1 holds f1."""


def worked_example(heuristic, placement=WARM, latency: float = 0.0) -> SimResult:
    """The worked example scheduled by ``heuristic``."""
    return Simulator(PLATFORM, WORKLOAD, heuristic, placement=placement, latency=latency).run()
