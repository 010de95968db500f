"""The ready-made specs of the jobs model name valid parameters and metrics."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml

from campaign.models.jobs import MODEL, run

SPECS = Path(__file__).resolve().parents[2] / "specs"


@pytest.mark.parametrize("name", ["kth-backfilling.yaml", "jobs-synthetic.yaml", "datacenter.yaml"])
def test_spec_cells_pass_the_model_check(name, workloads, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    spec = yaml.safe_load((SPECS / name).read_text())
    assert spec["model"] == "jobs"
    assert set(spec["paired"]) <= set(spec["factors"])
    assert set(spec["metrics"]) <= set(MODEL.metrics)
    for levels in itertools.product(*spec["factors"].values()):
        MODEL.check({**spec["params"], **dict(zip(spec["factors"], levels, strict=True))})


def test_synthetic_demo_cell_runs_quickly():
    spec = yaml.safe_load((SPECS / "jobs-synthetic.yaml").read_text())
    cell = {**spec["params"], "scheduler": "conservative", "load": 2.0}
    metrics = run(cell, spec["seed"])
    assert metrics["jobs"] == 1000


def test_datacenter_spec_replays_easy_both_ways():
    """The reference simulator's EASY rule and the usual one, both on every workload."""
    spec = yaml.safe_load((SPECS / "datacenter.yaml").read_text())
    assert spec["factors"]["backfill_after_start"] == [False, True]
    assert "backfill_after_start" in spec["paired"]
    assert spec["factors"]["workload"] == ["datacenter_exp1", "datacenter_exp2", "datacenter_exp3"]
    assert 1.4 in spec["factors"]["estimate_accuracy"]
    cell = {**spec["params"], "workload": "datacenter_exp1", "scheduler": "easy"}
    reference = run({**cell, "backfill_after_start": False}, spec["seed"])
    usual = run({**cell, "backfill_after_start": True}, spec["seed"])
    assert reference["mean_wait"] != usual["mean_wait"]
