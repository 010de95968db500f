"""Whether the spec file a results file was made from has been edited since it was written.

A results file keeps its spec's text and the path of its file. After the file is edited and
before it runs again, results.nc still holds the earlier spec's numbers (four replicates
where the spec now says two, a level since renamed or removed), and every table, figure and
export read from it would show them as the campaign's: `edited_note` is the line they carry
instead (`campaign.results.netcdf.open_results` adds it). An edit that leaves the spec's data
as it was (a comment, the layout, the free-text description) changes no number and is none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.spec.load import read_text, read_yaml
from campaign.store.results_attributes import results_attributes

FREE_TEXT = ("description",)  # keys whose edit changes no number


def edited_note(attrs: Mapping[str, Any]) -> str | None:
    """The words (after "results.nc ") saying that the spec file named in ``attrs``
    (``spec_file``) no longer holds the spec the results were made from (``spec``), or None:
    the same spec, no file named, or a file no longer there to compare with."""
    kept, name = attrs.get("spec"), attrs.get("spec_file")
    if not kept or not name:
        return None
    path = Path(str(name))
    try:
        now = read_text(path)
    except CampaignError:  # moved, removed or unreadable: nothing to compare with
        return None
    if now == str(kept) or _data(now) == _data(str(kept)):
        return None
    return (
        f"was written from {path} as it was before an edit: these numbers are the earlier "
        f"spec's (the one results.nc keeps), not the file's now; `campaign run {path}` writes "
        "the edited spec's"
    )


def other_spec_note(path: Path, spec_text: str) -> str | None:
    """The words (after "results.nc ") saying that results file ``path`` was made from
    another spec than ``spec_text`` (the spec a command was given), or from its spec file as
    it was before an edit (`edited_note`); None when it holds this spec's numbers, or is no
    readable results file (whose readers say so)."""
    try:
        attrs = results_attributes(path, ("spec", "spec_file"))
    except OSError:
        return None
    kept = attrs.get("spec")
    if kept and str(kept) != spec_text and _data(str(kept)) != _data(spec_text):
        return (
            "was written from another spec than the one given: its numbers are not this "
            "spec's; `campaign run SPEC` writes this spec's"
        )
    return edited_note(attrs)


def _data(text: str) -> str:
    """The spec's data without its free text, as canonical text (a NaN equals a NaN), or the
    text itself if it is no longer a spec (an edit under way, broken YAML: not the same)."""
    try:
        data = read_yaml(text, "spec")
    except CampaignError:
        return text
    if isinstance(data, dict):
        data = {key: value for key, value in data.items() if key not in FREE_TEXT}
    return json.dumps(data, sort_keys=True, default=str)
