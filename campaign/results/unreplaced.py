"""Work on one results file that sees one file from start to end.

A run that ends (in another process) replaces results.nc whole: a new file renamed over the
old one. What reads the path twice (a root and its failures, a root and a group) and writes
something from the two reads could show the numbers of two files side by side, under the
digest of one. `unreplaced` does the work again until the path held the same file all along.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from campaign.errors import CampaignError
from campaign.results.netcdf import results_file

Made = TypeVar("Made")
TRIES = 5  # a file replaced this many times during the work: one line, nothing mixed


def file_identity(path: Path) -> tuple[int, int, int, int]:
    """What tells one file at ``path`` from the next one renamed there."""
    found = os.stat(path)
    return found.st_dev, found.st_ino, found.st_mtime_ns, found.st_size


def unreplaced(results: str | Path, work: Callable[[], Made]) -> Made:
    """``work()`` (reads of the results file ``results``, or its folder, and what it writes
    from them), done again while the file was replaced during it; what it made from the last
    file it saw whole."""
    path = results_file(results)
    for _ in range(TRIES):
        before = file_identity(path)
        made = work()
        if file_identity(path) == before:
            return made
    raise CampaignError(
        f"{path} was replaced {TRIES} times while it was read (a run writing it in another "
        "process); run this command again once that run has ended"
    )
