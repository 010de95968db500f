"""The durable record of finished tasks: what makes a campaign resumable after any crash.

An output folder (its files are named in `campaign.store.folder`) holds campaign.json (what
the stored results mean: model, fixed params, base seed), the ledger (one file per finished
batch, one JSON record per task) and campaign.lock (held by the one run that may write it).

A batch file is written under a temporary name, flushed to disk and renamed into place, so a
record exists on disk completely or not at all: a task counts as done only once its file is
there. Records are keyed by the task key; when a key appears twice, a success wins over a
failure and a later record over an earlier one.

Each line ends with a CRC-32 of the rest of it (`campaign.store.lines`), so a damaged record
is found without parsing every line's JSON. A damaged record is skipped and reported, so its
task counts as not done and runs again; `run` moves files holding damaged records to
``OUTPUT/ledger.damaged/`` (their sound records stay in the ledger).

`Ledger` holds the pieces of one output folder: identity (`campaign.store.identity`), lock
(`campaign.store.lock`), records (`campaign.store.records`, which sets damaged records aside),
records set aside (`campaign.store.aside`) and the copy of a merge (`campaign.store.copy`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

from campaign.store import aside, identity, lock
from campaign.store.copy import copy_records
from campaign.store.folder import IDENTITY_FILE
from campaign.store.records import RecordFiles
from campaign.store.scan import Heads

T = TypeVar("T")


class Ledger:
    """Finished and failed task records of one output folder, and what they mean."""

    def __init__(self, output: Path):
        self.output = Path(output)
        self.records = RecordFiles(self.output)
        self.folder = self.records.folder
        self.manifest_path = self.output / IDENTITY_FILE

    @property
    def damaged(self) -> Counter[Path]:
        """Damaged records per file, of the last read."""
        return self.records.damaged

    # -- identity -------------------------------------------------------------------------
    def read_identity(self) -> dict[str, Any] | None:
        return identity.read_identity(self.output)

    def check_identity(self, wanted: dict[str, Any]) -> None:
        """Refuse to mix results of campaigns whose stored results mean different things."""
        stored = self.read_identity()
        if not self.has_records():
            return
        if stored is None:
            raise identity.missing_identity(self.output)
        identity.refuse_other_campaign(self.output, stored, wanted)

    def same_campaign(self, wanted: dict[str, Any]) -> bool:
        """Whether campaign.json describes the campaign ``wanted`` describes."""
        stored = self.read_identity()
        return stored is not None and identity.identity_difference(stored, wanted) is None

    def write_identity(self, wanted: dict[str, Any]) -> None:
        identity.write_identity(self.output, wanted)

    # -- lock -----------------------------------------------------------------------------
    def lock(self) -> AbstractContextManager[None]:
        """Hold the output folder for one run (see `campaign.store.lock.hold`)."""
        return lock.hold(self.output)

    def remove_leftovers(self) -> list[Path]:
        return lock.remove_leftovers(self.output)

    # -- records --------------------------------------------------------------------------
    def has_records(self) -> bool:
        return self.records.has_records()

    def append(self, records: Iterable[dict[str, Any]]) -> Path:
        """Durably store a batch of task records; returns the file written."""
        return self.records.append(records)

    def files(self) -> list[Path]:
        return self.records.files()

    def load(self, only: set[str] | None = None) -> dict[str, dict[str, Any]]:
        """Stored records by task key (see `RecordFiles.load`)."""
        return self.records.load(only)

    def statuses(self) -> dict[str, bool]:
        """Task key -> True if it succeeded (at least once), False if it only failed."""
        return self.records.statuses()

    def fold_heads(self, fold: Callable[[Iterator[Heads]], T]) -> T:
        """``fold`` over the key and success of every sound line, a chunk at a time (see
        `RecordFiles.fold_heads`)."""
        return self.records.fold_heads(fold)

    def fold_records(self, fold: Callable[[Iterator[list[dict[str, Any]]]], T]) -> T:
        """``fold`` over every sound record, a chunk at a time (see
        `RecordFiles.fold_records`)."""
        return self.records.fold_records(fold)

    def compact(self, min_files: int = 64) -> None:
        self.records.compact(min_files)

    def copy_from(self, source: Ledger, notes: list[str] | None = None) -> int:
        """Store the sound records of another output folder's ledger here, with the kept
        outputs they name (a merge of shards); see `campaign.store.copy.copy_records`."""
        return self.copy_from_all([source], None if notes is None else [notes])[0]

    def copy_from_all(
        self, sources: list[Ledger], notes: list[list[str]] | None = None
    ) -> list[int]:
        """`copy_from` of several ledgers in turn, in one reading of this one: the records
        stored from each (``notes``: one list per source)."""
        return copy_records(self.records, [source.records for source in sources], notes)

    # -- set aside ------------------------------------------------------------------------
    def set_aside(self, also: Iterable[str] = ()) -> Path | None:
        return aside.set_aside(self.records, also)

    def set_records_aside(
        self, affected: Callable[[str], bool], kind: str = "changed"
    ) -> tuple[int, Path | None]:
        return aside.set_records_aside(self.records, affected, kind)

    def set_keys_aside(self, keys: list[str], kind: str) -> Path | None:
        """The records of ``keys`` moved to a ``ledger.<kind>-*`` folder (None: no key)."""
        if not keys:
            return None
        return self.set_records_aside(set(keys).__contains__, kind)[1]

    def damage_note(self) -> str | None:
        return self.records.damage_note()

    def set_damaged_aside(self, keep_sound: bool = True) -> Path | None:
        return self.records.set_damaged_aside(keep_sound)
