"""Which of a results file's numbers were kept, on purpose, after what computed them changed.

`campaign run --accept-changed` keeps stored results computed before the model's code, a
program or an input changed, and records that choice in results.nc (``source_changes``).
From then on the sources campaign.json keeps are the new ones, so those results are no
longer stale (`campaign.results.stale_sources`), yet they were not computed by what the file
names as its sources: `accepted_note` is the line every table, figure, export and report of
the file carries about them (`campaign.results.netcdf.open_results` adds it), from the file
alone, so a copy of results.nc says it too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def accepted_note(attrs: Mapping[str, Any]) -> str | None:
    """The words (after "results.nc ") naming each change whose earlier results a run kept
    (``source_changes`` in ``attrs``): what changed, how many results and when; None when no
    results were kept so (none recorded, or a later change of every cell's sources had every
    result computed again)."""
    try:
        changes = json.loads(str(attrs.get("source_changes") or "[]"))
    except ValueError:
        return None
    if not isinstance(changes, list):
        return None
    kept: list[Mapping[str, Any]] = []
    for change in changes:
        if not isinstance(change, Mapping):
            continue
        if change.get("choice") == "rerun" and change.get("every_cell"):
            kept = []  # every stored result was computed again since
        elif change.get("choice") == "accept" and change.get("results"):
            kept.append(change)
    if not kept:
        return None
    return "holds results kept with `campaign run --accept-changed`: " + "; ".join(
        _kept(change) for change in kept
    )


def _kept(change: Mapping[str, Any]) -> str:
    """One kept change in words: ``4 computed before the code of model m changed (m.py), kept
    as they were on 2026-01-01T00:00:00Z``."""
    beyond = change.get("beyond")
    others = f" ({beyond} of them of cells the spec then did not have)" if beyond else ""
    what = change.get("change") or "their model, program or inputs changed"
    when = f" on {change['time']}" if change.get("time") else ""
    return f"{change['results']}{others} computed before {what}, kept as they were{when}"
