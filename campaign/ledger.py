"""The durable record of finished tasks: what makes a campaign resumable after any crash.

Layout of an output folder::

    OUTPUT/campaign.json      what the stored results mean: model, fixed params, base seed
    OUTPUT/ledger/*.jsonl     one file per finished batch, one JSON record per task

A batch file is written under a temporary name, flushed to disk and renamed into place, so a
record exists on disk completely or not at all: a task counts as done only once its file is
there. Records are keyed by the task key; when a key appears twice, a success wins over a
failure and a later record over an earlier one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError

IDENTITY_FIELDS = ("model", "params", "seed")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that readers see the old content or the whole new one, never a part."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class Ledger:
    """Finished and failed task records of one output folder."""

    def __init__(self, output: Path):
        self.output = Path(output)
        self.folder = self.output / "ledger"
        self.manifest_path = self.output / "campaign.json"
        self._counter = 0

    # -- identity -------------------------------------------------------------------------
    def read_identity(self) -> dict[str, Any] | None:
        if not self.manifest_path.exists():
            return None
        return json.loads(self.manifest_path.read_text())

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
                f"(kept in {self.folder.name}.old-*) or choose another output folder"
            )

    def write_identity(self, identity: dict[str, Any]) -> None:
        self.output.mkdir(parents=True, exist_ok=True)
        write_atomic(self.manifest_path, json.dumps(identity, indent=2, sort_keys=True) + "\n")

    def set_aside(self) -> Path | None:
        """Move the current records aside (never delete them) so a new campaign can start."""
        if not self.folder.exists():
            return None
        target = self.output / f"{self.folder.name}.old-{time.strftime('%Y%m%d-%H%M%S')}"
        os.replace(self.folder, target)
        if self.manifest_path.exists():
            os.replace(self.manifest_path, target / "campaign.json")
        return target

    # -- records --------------------------------------------------------------------------
    def has_records(self) -> bool:
        return self.folder.exists() and any(self.folder.glob("*.jsonl"))

    def append(self, records: Iterable[dict[str, Any]]) -> Path:
        """Durably store a batch of task records; returns the file written."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._counter += 1
        name = f"{time.time_ns():020d}-{os.getpid()}-{self._counter:06d}.jsonl"
        # key and status lead each line, so `statuses` can read them without parsing JSON
        text = "".join(
            json.dumps({"key": r["key"], "status": r["status"], **r}, allow_nan=True) + "\n"
            for r in records
        )
        path = self.folder / name
        write_atomic(path, text)
        return path

    def files(self) -> list[Path]:
        if not self.folder.exists():
            return []
        return sorted(self.folder.glob("*.jsonl"))

    def load(self, only: set[str] | None = None) -> dict[str, dict[str, Any]]:
        """Stored records by task key (success beats failure, later beats earlier).

        With ``only``, just the records of those keys are parsed.
        """
        records: dict[str, dict[str, Any]] = {}
        for path in self.files():
            with open(path) as handle:
                for line in handle:
                    if only is not None and _key_and_status(line)[0] not in only:
                        continue
                    if not line.strip():
                        continue
                    record = json.loads(line)
                    previous = records.get(record["key"])
                    if previous is None or not (
                        previous["status"] == "ok" and record["status"] != "ok"
                    ):
                        records[record["key"]] = record
        return records

    def statuses(self) -> dict[str, bool]:
        """Task key -> True if it succeeded (at least once), False if it only failed.

        Reads only the leading key and status of each line, without parsing the JSON: a
        million records take seconds and far less memory than `load`.
        """
        done: dict[str, bool] = {}
        for path in self.files():
            for line in path.read_text().splitlines():
                if line[KEY_END:STATUS_AT] == STATUS_INFIX and line.startswith(KEY_PREFIX):
                    key, ok = line[len(KEY_PREFIX) : KEY_END], line[STATUS_AT] == "o"
                else:  # not a standard-width key: take the slow, general path
                    key, ok = _key_and_status(line)
                    if key is None:
                        continue
                if ok:
                    done[key] = True
                else:
                    done.setdefault(key, False)
        return done

    def compact(self, min_files: int = 64) -> None:
        """Merge many batch files into one, so later loads open few files.

        The merged file is in place before the originals are removed; a crash in between
        leaves duplicates, which `load` resolves.
        """
        files = self.files()
        if len(files) < min_files:
            return
        records = self.load()
        self.append(records.values())
        for path in files:
            path.unlink()
        _fsync_dir(self.folder)


KEY_PREFIX = '{"key": "'
STATUS_INFIX = '", "status": "'
KEY_END = len(KEY_PREFIX) + 32  # task keys are 32 hex digits
STATUS_AT = KEY_END + len(STATUS_INFIX)


def _key_and_status(line: str) -> tuple[str | None, bool]:
    if line.startswith(KEY_PREFIX):
        end = line.find('"', len(KEY_PREFIX))
        if end > 0 and line.startswith(STATUS_INFIX, end):
            start = end + len(STATUS_INFIX)
            return line[len(KEY_PREFIX) : end], line.startswith('ok"', start)
    if not line.strip():
        return None, False
    record = json.loads(line)
    return record["key"], record["status"] == "ok"


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
