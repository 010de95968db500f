"""Stopping a run whose first results all failed the same way.

A model that cannot start (a missing file, a misspelt metric in the spec's ``metrics:``, a
program that is not there) fails every task with the same error, and a run that goes on
spends the whole campaign learning nothing more. `SameFailure` watches the results a run
stores, in the order it stores them: once the first `FIRST_RESULTS` of them (at least) all
failed with the same error and span at least two cells (or every cell the run has, when it
has one), the run stops, with what finished stored. One success or one other error and it
watches no more: a campaign whose one cell fails goes on. ``keep_going`` runs on regardless.

Errors are the same when they differ at most in their numbers and hexadecimal names (a task's
seed, its folder's name): `error_shape`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from campaign.errors import ParameterError

FIRST_RESULTS = 8  # finished tasks the decision waits for
CELLS = 2  # cells they must span (fewer when the run has fewer)

_VARYING = re.compile(r"\b[0-9a-f]*\d[0-9a-f]*\b|\d+", re.IGNORECASE)


def error_shape(error: str) -> str:
    """An error text with its numbers and hexadecimal words masked: what the same failure of
    two tasks has in common."""
    return _VARYING.sub("#", error)


class StoppedEarly(ParameterError):
    """A run stopped because its first results all failed the same way (one line)."""


@dataclass
class SameFailure:
    """Watches a run's stored results for a failure that every one of the first shares.

    ``cells``: how many cells the run's tasks span (the decision asks for `CELLS`, or all of
    them when fewer).
    """

    cells: int
    first: int = FIRST_RESULTS
    failed: int = 0
    error: str | None = None
    shape: str | None = None
    seen_cells: set[str] = field(default_factory=set)
    done: bool = False  # decided: no more watching

    def stop(self, records: Iterable[Mapping[str, Any]]) -> bool:
        """Enter a stored batch's records; True when the run should stop now."""
        if self.done:
            return False
        for record in records:
            if record.get("status") != "failed":
                self.done = True
                return False
            error = str(record.get("error") or "")
            if self.shape is None:
                self.error, self.shape = error, error_shape(error)
            elif error_shape(error) != self.shape:
                self.done = True
                return False
            self.failed += 1
            self.seen_cells.add(json.dumps(record.get("cell"), sort_keys=True, default=str))
        if self.failed >= self.first and len(self.seen_cells) >= min(CELLS, self.cells):
            self.done = True
            return True
        return False

    def stopped(self, where: object) -> StoppedEarly:
        """The line a run stopped by this watch ends with (``where``: the spec)."""
        cells = len(self.seen_cells)
        return StoppedEarly(
            f"{where}: stopped: the first {self.failed} finished tasks "
            f"({cells} {'cell' if cells == 1 else 'cells'}) all failed with the same error: "
            f"{self.error}; they are stored, the rest did not run: fix it and run again (failed "
            "tasks are tried again), or run with {keep_going=True} to run every task regardless",
            "keep_going=True",
        )
