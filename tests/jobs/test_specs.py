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


MONTHS = [f"2000-{m:02d}" for m in range(7, 13)] + [f"2001-{m:02d}" for m in range(1, 6)]
"""Eleven calendar months, as the source's Jul 1996 - May 1997 (list-scheduling.md 7.3)."""


def test_pfcfs_spec_runs_the_presets_at_the_source_thresholds_against_fcfs():
    spec = yaml.safe_load((SPECS / "pfcfs.yaml").read_text())
    assert spec["params"]["scheduler"] == "pfcfs" and "seed 002" in spec["description"]
    assert spec["factors"]["month"] == MONTHS
    assert spec["factors"]["max_processors"] == [128, 256]
    assert spec["factors"]["pfcfs_preset"] == ["pfcfs1", "pfcfs2", "pfcfs3", "theory"]
    assert spec["factors"]["pfcfs_wide"] == [0.4, 0.45, 0.5, 0.55, 0.6, 1.0]
    assert set(spec["metrics"]) <= set(MODEL.metrics)


def test_pfcfs_sweep_spec_holds_the_levels_of_table_4_2_and_fcfs():
    spec = yaml.safe_load((SPECS / "pfcfs-sweep.yaml").read_text())
    factors = spec["factors"]
    assert spec["params"]["scheduler"] == "pfcfs" and "Table 4.2" in spec["description"]
    assert spec["params"]["pfcfs_preempt"] == "greedy" and spec["params"]["pfcfs_penalty_s"] == 0
    assert factors["month"] == MONTHS and factors["max_processors"] == [128, 256]
    assert factors["pfcfs_wide"] == [0.4, 0.45, 0.5, 0.55, 0.6]
    assert factors["pfcfs_max_preemptions"] == [0, 1, 2, 3, 10, 11]
    assert factors["pfcfs_delay_s"] == [60, 120, 240, 600, 1800, 3600]
    assert factors["pfcfs_slice_s"] == {"1": 1, "60": 60, "delay": "delay"}
    assert set(spec["metrics"]) <= set(MODEL.metrics)


@pytest.mark.parametrize("name", ["pfcfs-quick.yaml", "pfcfs-sweep-quick.yaml"])
def test_pfcfs_quick_specs_take_their_levels_from_the_full_specs(name):
    quick = yaml.safe_load((SPECS / name).read_text())
    full = yaml.safe_load((SPECS / name.replace("-quick", "")).read_text())
    assert {**quick["params"], **quick["factors"]}.keys() == {
        **full["params"],
        **full["factors"],
    }.keys()
    for factor, levels in quick["factors"].items():
        assert set(levels) <= set(full["factors"][factor]), factor
    assert quick["params"].get("month", "2000-07") in MONTHS
    assert quick["metrics"] == full["metrics"]
