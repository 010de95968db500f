"""Kept outputs: what a task's program printed and the files it was told to keep, stored in the
output folder with the task's record, so that they can be read, extracted and parsed again
long after the run (metrics added later without running anything again).

A finished batch's outputs (``{"stdout": bytes, "stderr": bytes, "files/NAME": bytes}`` per
task, as the workers send them) go into one zip archive (deflate, the standard library's),
``OUTPUT/outputs/DIGEST.zip``, named by the SHA-256 of its bytes. It is written under a
temporary name, fsynced and renamed into place before the ledger file of the batch, and each
record then holds only a small reference: the archive's name and, per output, its size and
SHA-256. A task is done only when its record is on disk, and its record is written only once
its outputs are: a crash in between leaves an archive no record names (never read), and the
task runs again.

An archive's name does not depend on which ledger file holds its records, so a compaction
(records moving between files) leaves every archive findable; a merge copies the archives its
records name under the same names (the same bytes, so a name never means two things).
The outputs of a superseded attempt (a failed task run again) are never read; a compaction
drops them (`campaign.store.superseded`).
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.store.durable import write_atomic, write_failure
from campaign.store.folder import OUTPUTS_FOLDER

OUTPUTS = "outputs"  # the field of a result (bytes) and of a record (the reference)
STREAMS = ("stdout", "stderr")
FILES_PREFIX = "files/"
ARCHIVE_TIME = (1980, 1, 1, 0, 0, 0)  # a fixed member time: the same outputs, the same bytes
COMPRESS_LEVEL = 6
STORED_BELOW = 512  # bytes: a smaller output is stored as it is


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def carries_bytes(record: Mapping[str, Any]) -> bool:
    """Whether a finished task's record still carries its outputs' bytes (not yet stored)."""
    outputs = record.get(OUTPUTS)
    return isinstance(outputs, Mapping) and all(
        isinstance(value, bytes | bytearray) for value in outputs.values()
    )


def check_name(name: str) -> str:
    """An output's name as the workers give it ("stdout", "stderr", "files/PATH" relative to
    the task's folder, in UTF-8: `campaign.execute.keep.stored_name`), or one line on why it
    cannot be stored or extracted safely."""
    problem = name_problem(name)
    if problem is not None:
        raise CampaignError(problem)
    return name


def name_problem(name: str) -> str | None:
    """Why an output's name cannot be stored or extracted safely (None: it can)."""
    if name in STREAMS:
        return None
    parts = name.removeprefix(FILES_PREFIX).split("/")
    if (
        not name.startswith(FILES_PREFIX)
        or any(part in ("", ".", "..") for part in parts)
        or "\\" in name
        or "\0" in name
        or not is_utf8(name)
    ):
        return (
            f"kept output {name!r}: not an output name (stdout, stderr or files/PATH, a path "
            "inside the task's folder, in UTF-8)"
        )
    return None


def is_utf8(name: str) -> bool:
    """Whether a name can be written as UTF-8 (a file name read from a folder that is not
    holds lone surrogates, which a zip archive cannot store)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def keep_outputs(output: Path, records: Iterable[dict[str, Any]]) -> Path | None:
    """Store the outputs the records carry in one archive of ``output``'s outputs folder,
    durably, and replace each record's bytes with a reference to them (in place). Call it
    before the records are stored. Returns the archive written (None: no outputs)."""
    carrying = [record for record in records if carries_bytes(record)]
    for record in carrying:
        drop_unstorable(record)
    carrying = sorted(
        (record for record in carrying if OUTPUTS in record), key=lambda record: record["key"]
    )
    if not carrying:
        return None
    members = [
        (record["key"], check_name(name), bytes(data))
        for record in carrying
        for name, data in sorted(record[OUTPUTS].items())
    ]
    path = write_archive(output, members)
    for record in carrying:
        stored = {name: bytes(data) for name, data in record[OUTPUTS].items()}
        record[OUTPUTS] = {
            "archive": path.name,
            "members": {
                name: {"size": len(data), "sha256": digest(data)}
                for name, data in sorted(stored.items())
            },
        }
    return path


def write_archive(output: Path, members: Iterable[tuple[str, str, bytes]]) -> Path:
    """Write one archive of ``(task key, output name, bytes)`` members, in that order, into
    ``output``'s outputs folder, durably, named by the digest of its bytes (the same members
    give the same bytes); returns its path."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL) as zf:
        for key, name, data in members:
            info = zipfile.ZipInfo(f"{key}/{name}", ARCHIVE_TIME)
            # deflate pays from a few hundred bytes on; below, its set-up costs more
            small = len(data) < STORED_BELOW
            info.compress_type = zipfile.ZIP_STORED if small else zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data, compresslevel=COMPRESS_LEVEL)
    data = buffer.getvalue()
    folder = output / OUTPUTS_FOLDER
    path = folder / f"{digest(data)[:32]}.zip"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    except OSError as error:
        kept = "the results stored before are kept"
        again = "run the same command again to finish the rest"
        raise CampaignError(
            f"cannot store kept outputs in {folder}: {write_failure(error, folder, kept, again)}"
        ) from None
    return path


def drop_unstorable(record: dict[str, Any]) -> None:
    """Leave out of a record the outputs whose names cannot be stored (`name_problem`), and
    fail its task saying which, in place: one task fails, the run goes on. (The workers store
    a name that is not UTF-8 by `campaign.execute.keep.stored_name`; this is the last guard.)"""
    problems = [problem for name in record[OUTPUTS] if (problem := name_problem(name))]
    if not problems:
        return
    outputs = {name: data for name, data in record.pop(OUTPUTS).items() if not name_problem(name)}
    if outputs:
        record[OUTPUTS] = outputs
    if record.get("status") == "ok":
        record.pop("metrics", None)
        record.update(status="failed", error=f"ValueError: {problems[0]}", traceback="")


def reference(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """A stored record's reference to its kept outputs (None: it kept none)."""
    stored = record.get(OUTPUTS)
    if not isinstance(stored, Mapping) or not isinstance(stored.get("members"), Mapping):
        return None
    return dict(stored)


def sizes(record: Mapping[str, Any]) -> dict[str, int]:
    """A stored record's kept outputs: name -> size in bytes (read from the record alone)."""
    stored = reference(record)
    if stored is None:
        return {}
    return {name: int(member["size"]) for name, member in stored["members"].items()}


class KeepNotes:
    """What the model's ``keep:`` patterns left out of finished tasks, counted: each pattern
    that matched nothing, each file not kept and why (the fields ``keep_unmatched`` and
    ``keep_refused`` of the records, from `campaign.execute.keep`)."""

    SHOWN = 3  # names shown per reason

    def __init__(self, records: Iterable[Mapping[str, Any]] = ()) -> None:
        self.finished = 0
        self.unmatched: Counter[str] = Counter()  # pattern -> tasks
        self.refused: dict[str, tuple[set[str], set[str]]] = {}  # why -> tasks, names
        self.add(records)

    def add(self, records: Iterable[Mapping[str, Any]]) -> None:
        for record in records:
            if record.get("status") != "ok":
                continue  # a failed task may well leave out what a pattern names
            self.finished += 1
            self.unmatched.update(record.get("keep_unmatched") or ())
            for name, why in (record.get("keep_refused") or {}).items():
                tasks, names = self.refused.setdefault(why, (set(), set()))
                tasks.add(str(record.get("key")))
                names.add(name.removeprefix(FILES_PREFIX))

    def lines(self) -> list[str]:
        """One line per pattern that matched nothing and per reason files were not kept."""
        of = f"of {self.finished} finished task{'s' if self.finished != 1 else ''}"
        lines = [
            f"keep: {pattern!r} matched nothing in {count} {of}"
            for pattern, count in sorted(self.unmatched.items())
        ]
        for why, (tasks, names) in sorted(self.refused.items()):
            shown = ", ".join(sorted(names)[: self.SHOWN])
            more = f" and {len(names) - self.SHOWN} more" if len(names) > self.SHOWN else ""
            lines.append(f"keep: {shown}{more} not kept in {len(tasks)} {of}: {why}")
        return lines


OPEN_ARCHIVES = 32  # archives held open at once (a million tasks' are thousands of files)


class Archives:
    """The archives of one output folder, read member by member: the last few used held open
    (read records in the order of `by_archive` to open each archive once)."""

    def __init__(self, output: Path):
        self.folder = Path(output) / OUTPUTS_FOLDER
        self.open: OrderedDict[str, zipfile.ZipFile] = OrderedDict()
        self.unreadable: dict[str, str] = {}  # name -> why it cannot be read

    def close(self) -> None:
        for archive in self.open.values():
            archive.close()
        self.open.clear()

    def __enter__(self) -> Archives:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def archive(self, name: str) -> zipfile.ZipFile | str:
        """The archive ``name``, open, or why it cannot be read."""
        if name in self.unreadable:
            return self.unreadable[name]
        if name in self.open:
            self.open.move_to_end(name)
            return self.open[name]
        path = self.folder / name
        try:
            archive = zipfile.ZipFile(path)
        except FileNotFoundError:
            self.unreadable[name] = f"its archive {path} is missing"
            return self.unreadable[name]
        except (OSError, zipfile.BadZipFile) as error:
            self.unreadable[name] = f"its archive {path} is damaged ({error})"
            return self.unreadable[name]
        self.open[name] = archive
        if len(self.open) > OPEN_ARCHIVES:
            self.open.popitem(last=False)[1].close()
        return archive

    def read(self, record: Mapping[str, Any], names: Iterable[str] | None = None) -> dict:
        """The kept outputs of a stored record (``names``: only those), each checked against
        the size and SHA-256 its record holds; one line (`CampaignError`) when one is missing
        or damaged."""
        stored = reference(record)
        key = record["key"]
        if stored is None:
            raise CampaignError(f"task {key} kept no outputs")
        members = stored["members"]
        wanted = list(members) if names is None else list(names)
        archive = self.archive(str(stored.get("archive")))
        if isinstance(archive, str):
            raise CampaignError(f"task {key}: its kept outputs cannot be read: {archive}")
        found = {}
        for name in wanted:
            if name not in members:
                kept = ", ".join(members) or "none"
                raise CampaignError(f"task {key} kept no output {name!r} (it kept: {kept})")
            try:
                data = archive.read(f"{key}/{name}")
            except KeyError:
                data = None
            except (OSError, zipfile.BadZipFile, EOFError, ValueError) as error:
                raise CampaignError(
                    f"task {key}: kept output {name!r} is damaged in {archive.filename} ({error})"
                ) from None
            if data is None:
                raise CampaignError(
                    f"task {key}: kept output {name!r} is missing from {archive.filename}"
                )
            if len(data) != members[name]["size"] or digest(data) != members[name]["sha256"]:
                raise CampaignError(
                    f"task {key}: kept output {name!r} in {archive.filename} is not what was "
                    "stored (its SHA-256 differs)"
                )
            found[name] = data
        return found

    def problem(self, record: Mapping[str, Any]) -> str | None:
        """Why a stored record's kept outputs cannot be read whole (None: they can)."""
        try:
            self.read(record)
        except CampaignError as error:
            return str(error)
        return None


def by_archive(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Records in the order that reads each archive once: by archive, then task key."""
    return sorted(
        records, key=lambda r: (str((reference(r) or {}).get("archive", "")), str(r["key"]))
    )


def folder_files(outputs: Mapping[str, bytes]) -> dict[str, bytes]:
    """Kept outputs as files of a folder, as a metrics parser sees them: stdout and stderr
    as the files ``stdout`` and ``stderr``, ``files/PATH`` as ``PATH``."""
    files: dict[str, bytes] = {}
    for name, data in outputs.items():
        path = check_name(name).removeprefix(FILES_PREFIX)
        if path in files and files[path] == data:
            continue  # a stream kept twice, as stored before ``keep: [stdout]`` meant it alone
        if path in files:
            raise CampaignError(
                f"kept output {name!r} and the task's {path} would be one file; rename it in keep:"
            )
        files[path] = data
    return files


def write_folder(folder: Path, outputs: Mapping[str, bytes]) -> list[Path]:
    """Write kept outputs under ``folder`` as `folder_files` lays them out; returns the files."""
    written = []
    for path, data in folder_files(outputs).items():
        place = folder / path
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_bytes(data)
        written.append(place)
    return written


def copy_archives(source: Path, target: Path, records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Copy the archives the records name from output folder ``source`` to ``target`` (a
    merge), before the records are stored there; an archive already there (the same name, so
    the same bytes) is left as it is. Returns one line per archive missing in ``source``."""
    names = sorted({str(ref["archive"]) for r in records if (ref := reference(r)) is not None})
    missing = []
    into = target / OUTPUTS_FOLDER
    for name in names:
        place = into / name
        if place.is_file():
            continue
        try:
            data = (source / OUTPUTS_FOLDER / name).read_bytes()
        except FileNotFoundError:
            missing.append(f"{source / OUTPUTS_FOLDER / name} is missing")
            continue
        try:
            into.mkdir(parents=True, exist_ok=True)
            write_atomic(place, data)
        except OSError as error:
            kept = "the records copied before are kept"
            raise CampaignError(
                f"cannot store kept outputs in {into}: "
                f"{write_failure(error, into, kept, 'merge again')}"
            ) from None
    return missing
