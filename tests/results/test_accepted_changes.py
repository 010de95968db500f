"""The note on results kept with --accept-changed, from results.nc's ``source_changes``
alone: each kept change said, none once a change of every cell's sources had every result
computed again."""

from __future__ import annotations

import json

from campaign.results.accepted_changes import accepted_note


def test_only_changes_whose_results_were_kept_are_said():
    rerun = {"choice": "rerun", "change": "input file t.swf changed", "results": 6}
    kept = {"choice": "accept", "change": "the code of model m changed (m.py)", "results": 3}
    kept["time"] = "2026-01-02T03:04:05Z"
    assert accepted_note({"source_changes": json.dumps([rerun])}) is None
    assert accepted_note({"source_changes": "[]"}) is None
    assert accepted_note({}) is None
    assert accepted_note({"source_changes": json.dumps([rerun, kept])}) == (
        "holds results kept with `campaign run --accept-changed`: 3 computed before the code "
        "of model m changed (m.py), kept as they were on 2026-01-02T03:04:05Z"
    )


def test_kept_results_computed_again_since_are_not_said():
    kept = {"choice": "accept", "change": "input file t.swf changed", "results": 3}
    code = {"choice": "rerun", "change": "the code of model m changed (m.py)", "results": 8}
    later = json.dumps([kept, code | {"every_cell": True}])
    assert accepted_note({"source_changes": later}) is None
    assert accepted_note({"source_changes": json.dumps([code | {"every_cell": True}, kept])})
