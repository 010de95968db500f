"""The ledger's record files: one file per finished batch, appended whole or not at all, read
back by task key (a success beats a failure, a later record an earlier one), and compacted.

A compaction (merging many batch files into one) and the readers of the ledger never overlap:
each holds ``ledger/.compaction.lock`` (``flock``), readers shared, a compaction exclusive, so a
`status` or `query` during a run sees every record once. Where that lock cannot be taken (a
read-only copy), a reader that finds a listed file gone reads the ledger again: a compaction
writes its merged file before it removes the originals.
"""

from __future__ import annotations

import fcntl
import gc
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from campaign.errors import CampaignError
from campaign.store import scan
from campaign.store.compaction import current_lines, current_text
from campaign.store.durable import fsync_dir, write_atomic, write_failure
from campaign.store.folder import (
    COMPACTION_LOCK,
    DAMAGED_FOLDER,
    LEDGER_BATCHES,
    LEDGER_FOLDER,
    OUTPUT_ARCHIVES,
    OUTPUTS_FOLDER,
)
from campaign.store.lines import head_of, is_sealed, parse_record, read_lines, sealed_line
from campaign.store.superseded import plan_pruning

READ_ATTEMPTS = 20
T = TypeVar("T")


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while records are read: a read makes a
    dict or two per record, none in a reference cycle (each freed as its chunk goes), and
    the collector's passes over them took a quarter of the time of reading a ledger."""
    if not gc.isenabled():  # held off already (by the caller, or a read in another thread)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class RecordFiles:
    """The batch files of one output folder's ledger, and the damaged records a read found."""

    def __init__(self, output: Path):
        self.output = Path(output)
        self.folder = self.output / LEDGER_FOLDER
        self.counter = 0  # batches this object appended: part of each new file's name
        self.damaged: Counter[Path] = Counter()  # damaged records per file, of the last read
        self.guarded = False  # this process holds the compaction lock

    def has_records(self) -> bool:
        return self.folder.exists() and any(self.folder.glob(LEDGER_BATCHES))

    def append(self, records: Iterable[dict[str, Any]]) -> Path:
        """Durably store a batch of task records; returns the file written."""
        return self._write("".join(sealed_line(record) for record in records))

    def _write(self, text: str | Iterable[bytes]) -> Path:
        """Durably store a new batch file of ``text`` (lines, or their parts as bytes)."""
        self.counter += 1
        name = f"{time.time_ns():020d}-{os.getpid()}-{self.counter:06d}.jsonl"
        path = self.folder / name
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
        except OSError as error:
            kept = "the results stored before are kept"
            again = "run the same command again to finish the rest"
            raise CampaignError(
                f"cannot store finished results in {self.folder}: "
                f"{write_failure(error, self.folder, kept, again)}"
            ) from None
        return path

    def rewrite(self, path: Path, records: Iterable[dict[str, Any]]) -> Path:
        """Durably store ``records`` (some of those in the batch file ``path``) in a new file
        that takes ``path``'s place in the order of files, so that every record later than
        them still beats them; the caller then moves ``path`` away (a crash in between
        leaves the records twice, which `load` resolves)."""
        place = path.with_name(f"{path.stem}~.jsonl")  # right after path, before any later file
        try:
            write_atomic(place, "".join(sealed_line(record) for record in records))
        except OSError as error:
            kept = "the results stored before are kept"
            raise CampaignError(
                f"cannot store results in {self.folder}: "
                f"{write_failure(error, self.folder, kept, 'run the same command again')}"
            ) from None
        return place

    def files(self) -> list[Path]:
        if not self.folder.exists():
            return []
        return sorted(self.folder.glob(LEDGER_BATCHES))

    def load(self, only: set[str] | None = None) -> dict[str, dict[str, Any]]:
        """Stored records by task key (success beats failure, later beats earlier).

        With ``only``, just the records of those keys are parsed. Damaged records are skipped
        and counted in ``damaged``.
        """
        return self.read(lambda: self._load_once(only))

    def _load_once(
        self, only: set[str] | None, superseded: list[dict[str, Any]] | None = None
    ) -> dict[str, dict[str, Any]]:
        """One read of every file (``superseded``: gets the records that do not count)."""
        if superseded is not None:
            superseded.clear()  # a read again starts over
        records: dict[str, dict[str, Any]] = {}
        for path in self.files():
            for line in read_lines(path):
                if only is not None:
                    head = head_of(line) if is_sealed(line) else None
                    if head is not None and head[0] not in only:
                        continue
                record = parse_record(line)
                if record is None:
                    self.damaged[path] += 1
                    continue
                if only is not None and record["key"] not in only:
                    continue
                previous = records.get(record["key"])
                wins = previous is None or not (
                    previous["status"] == "ok" and record["status"] != "ok"
                )
                if wins:
                    records[record["key"]] = record
                if superseded is not None and previous is not None:
                    superseded.append(previous if wins else record)
        return records

    def statuses(self) -> dict[str, bool]:
        """Task key -> True if it succeeded (at least once), False if it only failed.

        A line whose checksum holds gives its leading key and status without parsing its
        JSON: a million records take seconds and far less memory than `load`. Damaged
        records are skipped and counted in ``damaged``.
        """
        return self.read(self._statuses_once)

    def _statuses_once(self) -> dict[str, bool]:
        done: dict[str, bool] = {}
        for chunk in scan.heads(self.files(), self.damaged):
            for key, ok in zip(chunk.keys, chunk.ok.tolist()):
                if ok:
                    done[key] = True
                else:
                    done.setdefault(key, False)
        return done

    def damage_note(self) -> str | None:
        """One line on the damaged records the last read skipped, or None."""
        if not self.damaged:
            return None
        count = sum(self.damaged.values())
        names = sorted(path.name for path in self.damaged)
        listed = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        return (
            f"ledger: {count} damaged record{'s' if count > 1 else ''} skipped in "
            f"{self.folder}/ ({listed}); their tasks count as not done and run again"
        )

    def set_damaged_aside(self, keep_sound: bool = True) -> Path | None:
        """Move the files of the last read's damaged records out of the ledger, to
        ``ledger.damaged/``, after storing their sound records again (unless another file
        already holds them, as a compaction's merged file does); returns that folder."""
        paths = sorted(path for path in self.damaged if path.exists())
        if not paths:
            return None
        target = self.output / DAMAGED_FOLDER
        target.mkdir(exist_ok=True)
        with self.guard(exclusive=True):
            for path in paths:
                sound = [
                    record
                    for line in read_lines(path)
                    if (record := parse_record(line)) is not None
                ]
                if sound and keep_sound:  # in the file's place: later records still win
                    self.rewrite(path, sound)
                os.replace(path, target / path.name)
            fsync_dir(self.folder)
        return target

    def fold_heads(self, fold: Callable[[Iterator[scan.Heads]], T]) -> T:
        """``fold`` over the key and success of every sound line, a chunk of lines at a time
        in the order records are resolved (`campaign.store.scan.heads`), while no compaction
        runs: what a reader of millions of records needs instead of `statuses`."""
        return self.read(lambda: fold(scan.heads(self.files(), self.damaged)))

    def fold_records(self, fold: Callable[[Iterator[list[dict[str, Any]]]], T]) -> T:
        """``fold`` over every sound record, a chunk at a time in the order records are
        resolved (a later one of a key wins unless it failed where an earlier one succeeded):
        what a reader of millions of records needs instead of `load`."""
        return self.read(lambda: fold(scan.records(self.files(), self.damaged)))

    def read(self, read: Callable[[], T]) -> T:
        """Run a read of every file while no compaction runs (again if, without the lock, a
        compaction removed a file while it ran)."""
        with self.guard(exclusive=False), collector_paused():
            for _ in range(READ_ATTEMPTS):
                self.damaged = Counter()
                try:
                    return read()
                except FileNotFoundError:
                    continue  # the merged file holds its records: read again
        raise CampaignError(f"the ledger {self.folder} kept changing while read; try again")

    @contextmanager
    def guard(self, exclusive: bool) -> Iterator[None]:
        """Keep readers (shared) and a compaction (exclusive) apart; a reader that cannot
        open the lock file reads without it."""
        if self.guarded or not self.folder.exists():
            yield
            return
        path = self.folder / COMPACTION_LOCK
        fd = None
        for flags in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):
            try:
                fd = os.open(path, flags, 0o644)
                break
            except OSError:
                continue
        if fd is None:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            self.guarded = True
            try:
                yield
            finally:
                self.guarded = False
        finally:
            os.close(fd)  # releases the lock

    def compact(self, min_files: int = 64) -> None:
        """Merge many batch files into one, so later loads open few files; and drop the kept
        outputs no current record names (`campaign.store.superseded`), however few the files.

        The merged file is in place before the originals are removed; a crash in between
        leaves duplicates, which `load` resolves. Files with damaged records are moved to
        ``ledger.damaged/`` rather than removed. An archive written again is on disk before
        the merged records that name it, and an archive is removed only once no record on
        disk names it.
        """
        files = self.files()
        archives = any((self.output / OUTPUTS_FOLDER).glob(OUTPUT_ARCHIVES))
        if len(files) < min_files and not archives:
            return
        if not archives:  # no kept outputs to prune: the lines are copied, not parsed
            with self.guard(exclusive=True):
                self._compact_lines()
            return
        with self.guard(exclusive=True):
            superseded: list[dict[str, Any]] = []
            records = self.read(lambda: self._load_once(None, superseded))
            pruning = plan_pruning(self.output, records, superseded)
            if len(files) < min_files and not pruning.needed:
                return
            pruning.rewrite_archives(records)
            self.append(records.values())
            self.set_damaged_aside(keep_sound=False)
            for path in files:
                path.unlink(missing_ok=True)
            fsync_dir(self.folder)
            pruning.remove_unnamed(records.values())

    def _compact_lines(self) -> None:
        """`compact` without kept outputs: the current lines copied into one file, a chunk at
        a time (`campaign.store.compaction`), so no record is held whole."""
        files = self.files()
        current = self.read(lambda: current_lines(files, self.damaged))
        self._write(current_text(files, current))
        self.set_damaged_aside(keep_sound=False)
        for path in files:
            path.unlink(missing_ok=True)
        fsync_dir(self.folder)
