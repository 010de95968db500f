"""The ledger: atomic batch files, precedence of records, identity checks, set-aside, compaction."""

from __future__ import annotations

import json

import pytest

from campaign.errors import CampaignError
from campaign.ledger import Ledger


def record(key, status="ok", value=1.0):
    return {"key": key, "status": status, "metrics": {"m": value} if status == "ok" else {}}


def test_append_and_load_round_trip_floats_exactly(tmp_path):
    ledger = Ledger(tmp_path)
    values = [0.1 + 0.2, 1e-310, float("nan"), 12345.678901234567]
    ledger.append([record(f"k{i}", value=v) for i, v in enumerate(values)])
    loaded = ledger.load()
    for i, v in enumerate(values):
        got = loaded[f"k{i}"]["metrics"]["m"]
        assert (got == v) or (got != got and v != v)
    assert not list(tmp_path.glob("ledger/.*.tmp"))


def test_success_beats_failure_and_later_beats_earlier(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append([record("a", "failed"), record("b", value=1.0)])
    ledger.append([record("a", value=2.0), record("b", "failed"), record("c", value=3.0)])
    ledger.append([record("c", value=4.0)])
    loaded = ledger.load()
    assert loaded["a"]["metrics"] == {"m": 2.0}
    assert loaded["b"]["metrics"] == {"m": 1.0}
    assert loaded["c"]["metrics"] == {"m": 4.0}


def test_identity_change_is_refused_with_the_difference_and_a_hint(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.write_identity({"model": "mm1", "params": {"customers": 10}, "seed": 1})
    ledger.append([record("a")])
    ledger.check_identity({"model": "mm1", "params": {"customers": 10}, "seed": 1})
    with pytest.raises(CampaignError) as info:
        ledger.check_identity({"model": "mm1", "params": {"customers": 20}, "seed": 1})
    assert "param 'customers' was 10, now 20" in str(info.value)
    assert "--new" in str(info.value)
    with pytest.raises(CampaignError, match="seed was 1, now 2"):
        ledger.check_identity({"model": "mm1", "params": {"customers": 10}, "seed": 2})


def test_set_aside_moves_records_without_deleting_them(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.write_identity({"model": "mm1", "params": {}, "seed": 1})
    ledger.append([record("a")])
    aside = ledger.set_aside()
    assert aside is not None and aside.name.startswith("ledger.old-")
    assert ledger.load() == {}
    kept = [json.loads(line) for f in aside.glob("*.jsonl") for line in f.read_text().splitlines()]
    assert [r["key"] for r in kept] == ["a"]
    assert (aside / "campaign.json").exists()


def test_compaction_keeps_every_record(tmp_path):
    ledger = Ledger(tmp_path)
    for i in range(70):
        ledger.append([record(f"k{i}", value=float(i))])
    before = ledger.load()
    ledger.compact(min_files=64)
    assert len(ledger.files()) == 1
    assert ledger.load() == before
