"""The names and labels a spec may use: campaign and factor names, level labels.

Metric names and what a results file can store are `campaign.results.names`' rules; the
names here add what a spec itself allows.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from campaign.results.names import LAYOUT_NAMES

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
FACTOR_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED_NAMES = {*LAYOUT_NAMES, "cell"}


def campaign_name_problem(name: Any) -> str | None:
    """Why ``name`` cannot name a campaign (its output folder and dataset); None when it can."""
    if isinstance(name, str) and NAME_PATTERN.match(name):
        return None
    return f"{name!r} is not allowed; use letters, digits, '-', '_' and '.'"


def factor_name_problem(name: Any) -> str | None:
    """Why ``name`` cannot name a factor (a dimension of the results); None when it can."""
    if not isinstance(name, str) or not FACTOR_PATTERN.match(name):
        return f"{name!r} is not a valid factor name; use letters, digits and _"
    if name in RESERVED_NAMES:
        return f"{name!r} is reserved; reserved names: {', '.join(sorted(RESERVED_NAMES))}"
    return None


def label_problem(label: str) -> str | None:
    """Why a level label cannot stand in a table row, or None: a control character."""
    character = next((c for c in label if unicodedata.category(c) == "Cc"), None)
    if character is None:
        return None
    return (
        f"holds a control character ({character!r}); a label is one line of text: "
        "write it without line breaks, tabs or other control characters"
    )


def scalar_kind(value: Any) -> str | None:
    """A level's kind (levels of one factor share it), or None for what is no level."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        if isinstance(value, float) and math.isnan(value):
            return None
        return "number"
    if isinstance(value, str):
        return "string"
    return None
