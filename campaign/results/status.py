"""A task's status: the one vocabulary of the results file, the plan, the export and the
tables. The file stores the integer (``flag_values``); readers show the name."""

from __future__ import annotations

STATUS_MISSING, STATUS_OK, STATUS_FAILED = 0, 1, 2
STATUS_NAMES = {STATUS_MISSING: "missing", STATUS_OK: "ok", STATUS_FAILED: "failed"}
