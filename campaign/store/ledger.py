"""The durable record of finished tasks: what makes a campaign resumable after any crash.

Layout of an output folder::

    OUTPUT/campaign.json      what the stored results mean: model, fixed params, base seed
    OUTPUT/ledger/*.jsonl     one file per finished batch, one JSON record per task
    OUTPUT/campaign.lock      held (flock) by the one run that may write the folder

A batch file is written under a temporary name, flushed to disk and renamed into place, so a
record exists on disk completely or not at all: a task counts as done only once its file is
there. Records are keyed by the task key; when a key appears twice, a success wins over a
failure and a later record over an earlier one.

Each line ends with a CRC-32 of the rest of it (a ``"crc"`` field), so a damaged record (a torn
line, stray bytes, a hand edit) is found without parsing every line's JSON. Lines without that
field (ledgers written before it existed) are parsed and checked instead. A damaged record is
skipped and reported, so its task counts as not done and runs again; `run` moves files holding
damaged records to ``OUTPUT/ledger.damaged/`` (their sound records stay in the ledger).

A compaction (merging many batch files into one) and the readers of the ledger never overlap:
each holds ``ledger/.compaction.lock`` (``flock``), readers shared, a compaction exclusive, so a
`status` or `query` during a run sees every record once. Where that lock cannot be taken (a
read-only copy), a reader that finds a listed file gone reads the ledger again: a compaction
writes its merged file before it removes the originals.
"""

from __future__ import annotations

import errno
import fcntl
import fnmatch
import hashlib
import json
import os
import platform
import re
import shutil
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from campaign.errors import CampaignError
from campaign.store.folder import (
    COMPACTION_LOCK,
    DAMAGED_FOLDER,
    IDENTITY_FILE,
    LEDGER_BATCHES,
    LEDGER_FOLDER,
    LOCK_FILE,
    WRITTEN_BESIDE_LEDGER,
    aside_folder_name,
)

IDENTITY_FIELDS = ("model", "params", "seed")
READ_ATTEMPTS = 20
T = TypeVar("T")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def room_left(folder: Path) -> str:
    """How much room is left where a write failed (a full disk is the usual cause)."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return ""
    return f" ({free / 2**20:.1f} MiB free on its disk)"


NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


def write_failure(error: OSError, folder: Path, kept: str, again: str) -> str:
    """The end of a one-line error for a failed write: why, what is ``kept``, what to do.

    A folder that may not be written (a read-only file system, permissions) needs another
    remedy than a full disk or quota: making room would not help.
    """
    reason = error.strerror or str(error)
    if error.errno in NOT_WRITABLE:
        return (
            f"{reason}: {folder} is not writable; {kept}: make it writable (or give another "
            f"output folder) and {again}"
        )
    return f"{reason}{room_left(folder)}; {kept}: make room and {again}"


def writer_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (one of another user's counts too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False
    return True


TEMPORARY = re.compile(r"^\.(?P<name>.+?)\.(?P<pid>\d+)(?:\.[0-9a-f]{8})?\.tmp$")


def remove_stale_temporaries(folder: Path, name: str) -> list[Path]:
    """Remove the temporary files (``.NAME.PID[.TAG].tmp``) of files named like ``name`` (a
    glob pattern) that a writer killed mid-write (SIGTERM, SIGKILL, a lost node) left in
    ``folder``: those whose writer process is gone. Returns the files removed."""
    removed: list[Path] = []
    try:
        candidates = list(folder.glob(f".{name}.*.tmp"))
    except OSError:
        return removed
    for path in candidates:
        match = TEMPORARY.match(path.name)
        if match is None or not fnmatch.fnmatchcase(match["name"], name):
            continue
        if writer_alive(int(match["pid"])):
            continue
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that readers see the old content or the whole new one, never a part."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a part written before a full disk is nobody's file
        raise
    _fsync_dir(path.parent)


class Ledger:
    """Finished and failed task records of one output folder."""

    def __init__(self, output: Path):
        self.output = Path(output)
        self.folder = self.output / LEDGER_FOLDER
        self.manifest_path = self.output / IDENTITY_FILE
        self._counter = 0
        self.damaged: Counter[Path] = Counter()  # damaged records per file, of the last read
        self._guarded = False  # this process holds the compaction lock

    # -- identity -------------------------------------------------------------------------
    def read_identity(self) -> dict[str, Any] | None:
        if not self.manifest_path.exists():
            return None
        try:
            identity = json.loads(self.manifest_path.read_bytes())
            if not isinstance(identity, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            raise CampaignError(
                f"{self.manifest_path} is damaged ({error}); it says what the results stored "
                f"in {self.folder} mean: restore it, or rerun with --new to set those results "
                f"aside and start afresh"
            ) from None
        return identity

    def check_identity(self, identity: dict[str, Any]) -> None:
        """Refuse to mix results of campaigns whose stored results mean different things."""
        stored = self.read_identity()
        if stored is None or not self.has_records():
            return
        for field in IDENTITY_FIELDS:
            old, new = stored.get(field), identity.get(field)
            if _canonical(old) == _canonical(new):
                continue
            if field == "params":
                detail = _dict_difference(old or {}, new or {})
            else:
                detail = f"{field} was {old!r}, now {new!r}"
            raise CampaignError(
                f"{self.output} holds results of a different campaign ({detail}): its stored "
                f"results would not mean the same; rerun with --new to set them aside "
                f"(kept in {aside_folder_name('old', '*')}) or choose another output folder"
            )

    def same_campaign(self, identity: dict[str, Any]) -> bool:
        """Whether campaign.json describes the campaign ``identity`` describes."""
        stored = self.read_identity()
        return stored is not None and all(
            _canonical(stored.get(field)) == _canonical(identity.get(field))
            for field in IDENTITY_FIELDS
        )

    def write_identity(self, identity: dict[str, Any]) -> None:
        self.output.mkdir(parents=True, exist_ok=True)
        text = json.dumps(identity, indent=2, sort_keys=True) + "\n"
        try:
            write_atomic(self.manifest_path, text)
        except OSError as error:
            raise CampaignError(
                f"cannot write {self.manifest_path}: "
                f"{write_failure(error, self.output, 'nothing has run', 'run again')}"
            ) from None

    def set_aside(self, also: Iterable[str] = ()) -> Path | None:
        """Move the records, campaign.json and the named files of the output folder (its
        results) into a new ``ledger.old-*`` folder, never deleting them, so that a new
        campaign starts from nothing; returns that folder (None if there was nothing)."""
        others = [self.manifest_path, self.output / DAMAGED_FOLDER]
        others += [self.output / name for name in also]
        others = [path for path in others if path.exists()]
        if not self.folder.exists() and not others:
            return None
        target = self._aside_folder()
        if self.folder.exists():
            os.rename(self.folder, target)
        else:
            target.mkdir()
        for path in others:
            os.replace(path, target / path.name)
        _fsync_dir(self.output)
        return target

    def set_records_aside(self, affected: Callable[[str], bool]) -> tuple[int, Path | None]:
        """Move the records of the tasks ``affected`` names (by key) out of the ledger, into a
        new ``ledger.changed-*`` folder (never deleting them), so that those tasks count as
        not done; returns how many records moved and where.

        A file holding such records moves whole, after its other records are stored again:
        a crash in between leaves those records twice, which `load` resolves.
        """
        moved, target = 0, None
        with self._compaction_guard(exclusive=True):
            for path in self.files():
                keys = [_key(line) for line in _lines(path)]
                hits = sum(key is not None and affected(key) for key in keys)
                if not hits:
                    continue
                kept = [
                    record
                    for line in _lines(path)
                    if (record := _record(line)) is not None and not affected(record["key"])
                ]
                if kept:
                    self.append(kept)
                if target is None:
                    target = self._aside_folder("changed")
                    target.mkdir()
                os.replace(path, target / path.name)
                moved += hits
            _fsync_dir(self.folder)
        return moved, target

    def _aside_folder(self, kind: str = "old") -> Path:
        """A new folder name for records set aside: the time, and a count if that is taken."""
        first = self.output / aside_folder_name(kind, time.strftime("%Y%m%d-%H%M%S"))
        target, count = first, 1
        while target.exists():
            count += 1
            target = first.with_name(f"{first.name}-{count}")
        return target

    # -- lock -----------------------------------------------------------------------------
    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the output folder for one run: a second run on it stops with one line saying
        who holds it. An advisory lock (``flock``) on ``OUTPUT/campaign.lock``: the system
        releases it when the holder ends, however it ends."""
        path = self.output / LOCK_FILE
        try:
            self.output.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise CampaignError(
                f"cannot use the output folder {self.output}: {error.strerror}"
            ) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 1024, 0).decode(errors="replace").strip()
                raise CampaignError(
                    f"{self.output} is in use by another campaign run "
                    f"({holder or 'holder unknown'}); wait for it to end, or use another "
                    f"output folder"
                ) from None
            started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
            os.ftruncate(fd, 0)
            os.pwrite(
                fd, f"host {platform.node()}, pid {os.getpid()}, since {started}\n".encode(), 0
            )
            self.remove_leftovers()
            try:
                yield
            finally:
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # releases the lock

    def remove_leftovers(self) -> list[Path]:
        """Remove what writers killed mid-write left in the folder (temporary files of
        results.nc, campaign.json and ledger batches whose writer is gone): run by the holder
        of the lock, so no writer of this folder is at work."""
        removed = []
        for name in WRITTEN_BESIDE_LEDGER:
            removed += remove_stale_temporaries(self.output, name)
        removed += remove_stale_temporaries(self.folder, LEDGER_BATCHES)
        return removed

    # -- records --------------------------------------------------------------------------
    def has_records(self) -> bool:
        return self.folder.exists() and any(self.folder.glob(LEDGER_BATCHES))

    def append(self, records: Iterable[dict[str, Any]]) -> Path:
        """Durably store a batch of task records; returns the file written."""
        self._counter += 1
        name = f"{time.time_ns():020d}-{os.getpid()}-{self._counter:06d}.jsonl"
        path = self.folder / name
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(path, "".join(_sealed_line(record) for record in records))
        except OSError as error:
            kept = "the results stored before are kept"
            again = "run the same command again to finish the rest"
            raise CampaignError(
                f"cannot store finished results in {self.folder}: "
                f"{write_failure(error, self.folder, kept, again)}"
            ) from None
        return path

    def copy_from(self, source: Ledger) -> int:
        """Store the sound records of another output folder's ledger here (a merge of shards),
        file by file under the files' own names, so that the time in a name orders them with
        this ledger's as if one machine had stored them all: `load` then resolves a task
        stored twice as it would there. Only records new to this ledger are stored: not one
        it holds already (the same line, even after a compaction moved it into another file),
        nor a failure of a task it holds a success for (which would never count). Damaged
        records are skipped (counted in ``source.damaged``). Returns the records stored."""

        def sound_files() -> list[tuple[str, list[bytes]]]:
            found = []
            for path in source.files():
                sound = []
                for line in _lines(path):
                    if _record(line) is None:
                        source.damaged[path] += 1
                    else:
                        sound.append(line)
                if sound:
                    found.append((path.name, sound))
            return found

        held, succeeded = self._read(self._held_lines)
        copied = 0
        for name, lines in source._read(sound_files):
            new = []
            for line in lines:
                digest = _line_digest(line)
                key, ok = _key_status(line)
                if digest in held or (not ok and key in succeeded):
                    continue
                held.add(digest)
                if ok:
                    succeeded.add(key)
                new.append(line)
            if not new:
                continue
            text = b"".join(line + b"\n" for line in new)
            target, count = self.folder / name, 1
            while target.exists():
                count += 1
                target = self.folder / f"{Path(name).stem}-{count}.jsonl"
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                write_atomic(target, text.decode())
            except OSError as error:
                kept = "the records copied before are kept"
                raise CampaignError(
                    f"cannot store records in {self.folder}: "
                    f"{write_failure(error, self.folder, kept, 'merge again')}"
                ) from None
            copied += len(new)
        return copied

    def _held_lines(self) -> tuple[set[bytes], set[str]]:
        """Fingerprints of the sound lines stored here, and the keys of tasks that succeeded."""
        held, succeeded = set(), set()
        for path in self.files():
            for line in _lines(path):
                if _record(line) is None:
                    continue
                held.add(_line_digest(line))
                key, ok = _key_status(line)
                if ok:
                    succeeded.add(key)
        return held, succeeded

    def files(self) -> list[Path]:
        if not self.folder.exists():
            return []
        return sorted(self.folder.glob(LEDGER_BATCHES))

    def load(self, only: set[str] | None = None) -> dict[str, dict[str, Any]]:
        """Stored records by task key (success beats failure, later beats earlier).

        With ``only``, just the records of those keys are parsed. Damaged records are skipped
        and counted in ``damaged``.
        """
        return self._read(lambda: self._load_once(only))

    def _load_once(self, only: set[str] | None) -> dict[str, dict[str, Any]]:
        records: dict[str, dict[str, Any]] = {}
        for path in self.files():
            for line in _lines(path):
                if only is not None:
                    head = _head(line) if _is_sealed(line) else None
                    if head is not None and head[0] not in only:
                        continue
                record = _record(line)
                if record is None:
                    self.damaged[path] += 1
                    continue
                if only is not None and record["key"] not in only:
                    continue
                previous = records.get(record["key"])
                if previous is None or not (
                    previous["status"] == "ok" and record["status"] != "ok"
                ):
                    records[record["key"]] = record
        return records

    def statuses(self) -> dict[str, bool]:
        """Task key -> True if it succeeded (at least once), False if it only failed.

        A line whose checksum holds gives its leading key and status without parsing its
        JSON: a million records take seconds and far less memory than `load`. Damaged
        records are skipped and counted in ``damaged``.
        """
        return self._read(self._statuses_once)

    def _statuses_once(self) -> dict[str, bool]:
        done: dict[str, bool] = {}
        for path in self.files():
            for line in _lines(path):
                head = _head(line) if _is_sealed(line) else None
                if head is None:
                    record = _record(line)
                    if record is None:
                        self.damaged[path] += 1
                        continue
                    head = record["key"], record["status"] == "ok"
                key, ok = head
                if ok:
                    done[key] = True
                else:
                    done.setdefault(key, False)
        return done

    def _read(self, read: Callable[[], T]) -> T:
        """Run a read of every file while no compaction runs (again if, without the lock, a
        compaction removed a file while it ran)."""
        with self._compaction_guard(exclusive=False):
            for _ in range(READ_ATTEMPTS):
                self.damaged = Counter()
                try:
                    return read()
                except FileNotFoundError:
                    continue  # the merged file holds its records: read again
        raise CampaignError(f"the ledger {self.folder} kept changing while read; try again")

    @contextmanager
    def _compaction_guard(self, exclusive: bool) -> Iterator[None]:
        """Keep readers (shared) and a compaction (exclusive) apart; a reader that cannot
        open the lock file reads without it."""
        if self._guarded or not self.folder.exists():
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
            self._guarded = True
            try:
                yield
            finally:
                self._guarded = False
        finally:
            os.close(fd)  # releases the lock

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
        already holds them); returns that folder."""
        paths = sorted(path for path in self.damaged if path.exists())
        if not paths:
            return None
        target = self.output / DAMAGED_FOLDER
        target.mkdir(exist_ok=True)
        with self._compaction_guard(exclusive=True):
            for path in paths:
                sound = [record for line in _lines(path) if (record := _record(line)) is not None]
                if sound and keep_sound:
                    self.append(sound)
                os.replace(path, target / path.name)
            _fsync_dir(self.folder)
        return target

    def compact(self, min_files: int = 64) -> None:
        """Merge many batch files into one, so later loads open few files.

        The merged file is in place before the originals are removed; a crash in between
        leaves duplicates, which `load` resolves. Files with damaged records are moved to
        ``ledger.damaged/`` rather than removed.
        """
        files = self.files()
        if len(files) < min_files:
            return
        with self._compaction_guard(exclusive=True):
            records = self.load()
            self.append(records.values())
            self.set_damaged_aside(keep_sound=False)
            for path in files:
                path.unlink(missing_ok=True)
            _fsync_dir(self.folder)


CRC_FIELD = b', "crc": "'
CRC_END = b'"}'
SEAL_LENGTH = len(CRC_FIELD) + 8 + len(CRC_END)
KEY_PREFIX = b'{"key": "'
STATUS_INFIX = b'", "status": "'
METRICS_FIELD = b', "metrics": {'


def _sealed_line(record: dict[str, Any]) -> str:
    """A record as one JSON line, key and status first, ending with a CRC-32 of the rest."""
    fields = {"key": record["key"], "status": record["status"], **record}
    fields.pop("crc", None)
    body = json.dumps(fields, allow_nan=True)[:-1]  # ASCII: json.dumps escapes the rest
    return f'{body}, "crc": "{zlib.crc32(body.encode()):08x}"}}\n'


def _line_digest(line: bytes) -> bytes:
    """A short fingerprint of a ledger line: which records a ledger already holds, in far
    less memory than the lines."""
    return hashlib.blake2b(line, digest_size=16).digest()


def _key_status(line: bytes) -> tuple[str, bool]:
    """Key and success of a sound line."""
    head = _head(line) if _is_sealed(line) else None
    if head is None:
        record = _record(line)
        head = record["key"], record["status"] == "ok"
    return head


def _lines(path: Path) -> Iterator[bytes]:
    """The non-blank lines of a ledger file, as bytes (stray bytes must not stop a read)."""
    with open(path, "rb") as handle:
        for line in handle:
            line = line.rstrip(b"\r\n")
            if line.strip():
                yield line


def _claims_seal(line: bytes) -> bool:
    """Whether a line ends the way a checksummed line does."""
    return line.endswith(CRC_END) and line[-SEAL_LENGTH : -8 - len(CRC_END)] == CRC_FIELD


def _is_sealed(line: bytes) -> bool:
    """Whether a line ends with a CRC-32 of the rest of it that holds."""
    if not _claims_seal(line):
        return False
    try:
        crc = int(line[-8 - len(CRC_END) : -len(CRC_END)], 16)
    except ValueError:
        return False
    return crc == zlib.crc32(line[:-SEAL_LENGTH])


def _head(line: bytes) -> tuple[str, bool] | None:
    """Key and success read from the start of a sealed line, without parsing its JSON."""
    if not line.startswith(KEY_PREFIX):
        return None
    end = line.find(b'"', len(KEY_PREFIX))
    if end < 0 or not line.startswith(STATUS_INFIX, end):
        return None
    start = end + len(STATUS_INFIX)
    key = line[len(KEY_PREFIX) : end]
    if b"\\" in key:
        return None  # an escaped key: leave it to the JSON parser
    ok = line.startswith(b'ok"', start)
    if ok and METRICS_FIELD not in line:
        return None  # a success without its metrics: the JSON parser refuses it, as `load` does
    return key.decode("ascii"), ok


def _key(line: bytes) -> str | None:
    """The task key of a line (None if the line is damaged)."""
    head = _head(line) if _is_sealed(line) else None
    if head is not None:
        return head[0]
    record = _record(line)
    return None if record is None else record["key"]


def _record(line: bytes) -> dict[str, Any] | None:
    """The record of a line, or None if it is damaged.

    A line without a checksum (written before checksums existed) is checked for the fields
    every record has instead.
    """
    if _claims_seal(line) and not _is_sealed(line):
        return None  # a checksum that does not hold
    try:
        record = json.loads(line)
    except ValueError:  # not JSON, torn, or not UTF-8
        return None
    if not _is_sound(record):
        return None
    record.pop("crc", None)
    return record


def _is_sound(record: Any) -> bool:
    """Whether a parsed record has a key, a status and, if it succeeded, its metrics."""
    if not isinstance(record, dict):
        return False
    if not isinstance(record.get("key"), str) or not isinstance(record.get("status"), str):
        return False
    if record["status"] != "ok":
        return True
    metrics = record.get("metrics")
    return isinstance(metrics, dict) and all(
        isinstance(value, int | float) and not isinstance(value, bool) for value in metrics.values()
    )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _dict_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    for key in sorted(set(old) | set(new)):
        if key not in new:
            return f"param {key!r} was {old[key]!r}, now removed"
        if key not in old:
            return f"param {key!r} is new ({new[key]!r})"
        if _canonical(old[key]) != _canonical(new[key]):
            return f"param {key!r} was {old[key]!r}, now {new[key]!r}"
    return "params differ"
