"""Labels as table cells that say what they hold and nothing more, whatever the labels are.

A level label is free text: it may start like a spreadsheet formula (``=HYPERLINK(...)``,
``+1+1``, ``-2+3``), hold markup (``<b>``, ``&``, ``|``) or a line break. Each output escapes
what its reader would otherwise act on: CSV cells that a spreadsheet would evaluate get a
leading ``'`` (OWASP's advice against formula injection; numbers stay numbers), text tables
show control characters as escapes so a row stays one line, and Markdown cells carry ``<``,
``>``, ``&`` and ``|`` as entities.
"""

from __future__ import annotations

import unicodedata

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CONTROL_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
MARKDOWN_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;"}


def spreadsheet_text(value: object) -> object:
    """A string a spreadsheet would read as a formula, with a leading ``'``; anything else
    (numbers, other strings) as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def to_csv(frame: pd.DataFrame) -> str:
    """``frame`` as CSV (no index) whose text cells no spreadsheet evaluates. The text
    columns are found from the dtypes: taking each column out would copy the frame's attrs
    once a column (seconds for a table of thousands of columns)."""
    safe = frame.copy()
    for column, dtype in safe.dtypes.items():
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            cells = [spreadsheet_text(value) for value in safe[column]]  # no 1 made 1.0
            safe[column] = pd.Series(cells, index=safe.index, dtype=object)
    return safe.to_csv(index=False)


def one_line(text: object) -> str:
    """Text on one line: a control character (a line break, a tab) shown as an escape."""
    text = str(text)
    if not any(unicodedata.category(c) == "Cc" for c in text):
        return text
    return "".join(
        CONTROL_ESCAPES.get(c, f"\\x{ord(c):02x}") if unicodedata.category(c) == "Cc" else c
        for c in text
    )


def markdown_cell(text: object) -> str:
    """A Markdown table cell that shows ``text`` as written: on one line, with no HTML and no
    column break of its own."""
    return "".join(MARKDOWN_ENTITIES.get(c, c) for c in one_line(text))
