"""The faulty model's faults, only while a switch file exists: a fault of a task's
surroundings (a full disk, a flaky mount, a stuck service) that is gone when the campaign is
run again. ``switch`` (a param) names the file; without it, or while the file is missing, every
task returns its seeded draw as the faulty model does without faults."""

from __future__ import annotations

import os
from collections.abc import Mapping

import faulty


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    switch = params.get("switch")
    on = isinstance(switch, str) and os.path.exists(switch)
    return faulty.run({**params, "fault": params.get("fault", "none") if on else "none"}, seed)
