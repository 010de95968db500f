"""Records moved out of the ledger, never deleted: a whole campaign set aside for a new one
(``ledger.old-*``) and the records of tasks whose sources changed (``ledger.changed-*``). The
files holding damaged records are the records' own to set aside (`RecordFiles.set_damaged_aside`,
to ``ledger.damaged/``), since a compaction does it too."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from campaign.store.durable import fsync_dir, write_atomic
from campaign.store.folder import DAMAGED_FOLDER, IDENTITY_FILE, OUTPUTS_FOLDER, aside_folder_name
from campaign.store.lines import line_key, parse_record, read_lines

if TYPE_CHECKING:
    from campaign.store.records import RecordFiles


def set_aside(records: RecordFiles, also: Iterable[str] = ()) -> Path | None:
    """Move the records, campaign.json, the kept outputs and the named files of the output
    folder (its results) into a new ``ledger.old-*`` folder, never deleting them, so that a
    new campaign starts from nothing; returns that folder (None if there was nothing)."""
    output, folder = records.output, records.folder
    others = [output / IDENTITY_FILE, output / DAMAGED_FOLDER, output / OUTPUTS_FOLDER]
    others += [output / name for name in also]
    others = [path for path in others if path.exists()]
    if not folder.exists() and not others:
        return None
    target = aside_folder(output)
    if folder.exists():
        os.rename(folder, target)
    else:
        target.mkdir()
    for path in others:
        os.replace(path, target / path.name)
    fsync_dir(output)
    return target


def set_records_aside(
    records: RecordFiles, affected: Callable[[str], bool], kind: str = "changed"
) -> tuple[int, Path | None]:
    """Move the records of the tasks ``affected`` names (by key) out of the ledger, into a
    new ``ledger.KIND-*`` folder (``changed``; never deleting them), so that those tasks
    count as not done; returns how many records moved and where.

    A file holding such records is split: the records set aside (and any damaged line,
    never deleted) are written into the new folder, the others stored again in the file's
    place in the ledger's order, then the file is removed. A crash in between leaves records
    twice, which `load` resolves (and a later set-aside sets them aside again).
    """
    moved, target = 0, None
    with records.guard(exclusive=True):
        for path in records.files():
            hits = sum(key is not None and affected(key) for key in map(line_key, read_lines(path)))
            if not hits:
                continue
            kept, aside = [], []
            for line in read_lines(path):
                key = line_key(line)
                record = parse_record(line) if key is not None and not affected(key) else None
                if record is not None:
                    kept.append(record)
                else:
                    aside.append(line + b"\n")
            if target is None:
                target = aside_folder(records.output, kind)
                target.mkdir()
            write_atomic(target / path.name, aside)
            if kept:  # in the file's place: a later record of theirs still wins
                records.rewrite(path, kept)
            path.unlink()
            moved += hits
        fsync_dir(records.folder)
    return moved, target


def aside_folder(output: Path, kind: str = "old") -> Path:
    """A new folder name for records set aside: the time, and a count if that is taken."""
    first = output / aside_folder_name(kind, time.strftime("%Y%m%d-%H%M%S"))
    target, count = first, 1
    while target.exists():
        count += 1
        target = first.with_name(f"{first.name}-{count}")
    return target
