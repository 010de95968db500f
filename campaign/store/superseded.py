"""Kept outputs that no current record names, dropped when the ledger is compacted.

A task run again (a failure retried by a later run, a rerun after its sources changed) leaves
the outputs of its earlier attempt in the archive of that attempt's batch. Only a task's
current record is ever read (`campaign.store.records`: a success beats a failure, a later
record an earlier one), so they are never returned; but they fill the folder, and whoever
reads the archives with ``unzip`` would count them. So a compaction, which keeps only the
current records, also:

- writes an archive that holds outputs of superseded attempts beside current ones again
  without them (under the digest of its new bytes), before the merged records that name the
  new archive are stored;
- removes every archive that no record names, once the merged ledger file is on disk and the
  files it replaces are gone.

A crash at any point leaves every archive a record names in place (at worst an archive no
record names, removed by the next compaction). Records set aside (``ledger.changed-*``,
``ledger.unkept-*``, ``ledger.damaged/``, a campaign's ``ledger.old-*``) name archives too:
those are kept whole, and so is every archive whose name a damaged line still holds.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from campaign.store.durable import fsync_dir
from campaign.store.folder import LEDGER_BATCHES, LEDGER_FOLDER, OUTPUT_ARCHIVES, OUTPUTS_FOLDER
from campaign.store.lines import parse_record, read_lines
from campaign.store.outputs import OUTPUTS, reference, write_archive

Records = Iterable[Mapping[str, Any]]
ARCHIVE_NAME = re.compile(rb'"archive": *"([0-9a-f]{32}\.zip)"')


@dataclass
class Pruning:
    """What a compaction drops of an output folder's kept outputs (see the module's doc)."""

    output: Path
    rewrite: dict[str, set[str]] = field(default_factory=dict)  # archive -> keys it keeps
    unnamed: list[str] = field(default_factory=list)  # archives no record names now

    @property
    def needed(self) -> bool:
        return bool(self.rewrite or self.unnamed)

    def rewrite_archives(self, current: Mapping[str, dict[str, Any]]) -> None:
        """Write each archive holding superseded outputs again without them, durably, and make
        the current records (in place) name the new archive."""
        for name, keys in sorted(self.rewrite.items()):
            records = [current[key] for key in sorted(keys)]
            members = kept_members(self.output / OUTPUTS_FOLDER / name, records)
            if members is None:
                continue  # missing or damaged: left as it is (`verify` says so)
            path = write_archive(self.output, members)
            for record in records:
                record[OUTPUTS] = {**record[OUTPUTS], "archive": path.name}

    def remove_unnamed(self, current: Records) -> list[Path]:
        """Remove the archives that neither the current records nor those set aside name
        (call it once the records naming the new archives are on disk); returns them."""
        named = archive_names(current) | named_aside(self.output)
        folder = self.output / OUTPUTS_FOLDER
        removed = []
        for path in sorted(folder.glob(OUTPUT_ARCHIVES)):
            if path.name not in named:
                path.unlink(missing_ok=True)
                removed.append(path)
        if removed:
            fsync_dir(folder)
        return removed


def plan_pruning(
    output: Path, current: Mapping[str, Mapping[str, Any]], superseded: Records
) -> Pruning:
    """What to drop, from the current records (by key) and the superseded ones."""
    aside = named_aside(output)
    pruning = Pruning(output)
    keys: dict[str, set[str]] = {}  # archive -> current keys naming it
    for key, record in current.items():
        stored = reference(record)
        if stored is not None:
            keys.setdefault(str(stored["archive"]), set()).add(key)
    for record in superseded:
        stored = reference(record)
        name = str(stored["archive"]) if stored is not None else None
        if name in keys and name not in aside and record["key"] not in keys[name]:
            pruning.rewrite[name] = keys[name]
    named = set(keys) | aside
    folder = output / OUTPUTS_FOLDER
    pruning.unnamed = sorted(p.name for p in folder.glob(OUTPUT_ARCHIVES) if p.name not in named)
    return pruning


def kept_members(path: Path, records: list[dict[str, Any]]) -> list[tuple[str, str, bytes]] | None:
    """The members of archive ``path`` that ``records`` name, in archive order, or None when
    it cannot be read whole."""
    members = []
    try:
        with zipfile.ZipFile(path) as archive:
            for record in records:
                for name in sorted(record[OUTPUTS]["members"]):
                    members.append((record["key"], name, archive.read(f"{record['key']}/{name}")))
    except (OSError, KeyError, zipfile.BadZipFile, EOFError, ValueError):
        return None
    return members


def archive_names(records: Records) -> set[str]:
    return {str(stored["archive"]) for r in records if (stored := reference(r)) is not None}


def named_aside(output: Path) -> set[str]:
    """The archives the records set aside name (a damaged line: the names it still holds)."""
    names: set[str] = set()
    for folder in sorted(output.glob(f"{LEDGER_FOLDER}.*")):
        for path in sorted(folder.glob(LEDGER_BATCHES)) if folder.is_dir() else ():
            names |= names_in_file(path)
    return names


def names_in_file(path: Path) -> set[str]:
    """The archives a ledger file's records name, a damaged line's by the text it holds."""
    names: set[str] = set()
    for line in read_lines(path):
        record = parse_record(line)
        if record is not None:
            names |= archive_names([record])
        else:
            names.update(match.decode() for match in ARCHIVE_NAME.findall(line))
    return names
