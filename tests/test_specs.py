"""Every ready spec in specs/ is valid: its keys, its factor levels and every cell's params."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaign.design import Design
from campaign.spec import load_spec

SPECS = sorted((Path(__file__).resolve().parents[1] / "specs").glob("*.yaml"))


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_ready_spec_validates(path, workloads):
    spec = load_spec(path)
    design = Design(spec)
    assert design.size == spec.tasks > 0
    assert len(set(design.keys())) == design.size


def test_demo_is_a_small_scheduling_campaign():
    spec = load_spec(Path(__file__).resolve().parents[1] / "specs" / "demo.yaml")
    assert spec.model == "jobs" and spec.params["workload"] == "synthetic"
    assert spec.tasks <= 200
