"""Copying the sound records of one output folder's ledger into another's (a merge of
shards), each record stored once, with the kept outputs it names."""

from __future__ import annotations

from pathlib import Path

from campaign.errors import CampaignError
from campaign.store.durable import write_atomic, write_failure
from campaign.store.lines import key_status, line_digest, parse_record, read_lines
from campaign.store.outputs import copy_archives
from campaign.store.records import RecordFiles


def copy_records(target: RecordFiles, source: RecordFiles, notes: list[str] | None = None) -> int:
    """Store the sound records of another output folder's ledger in ``target`` (a merge),
    file by file under the files' own names, so that the time in a name orders them with
    this ledger's as if one machine had stored them all: `load` then resolves a task
    stored twice as it would there. Only records new to this ledger are stored: not one
    it holds already (the same line, even after a compaction moved it into another file),
    nor a failure of a task it holds a success for (which would never count). Damaged
    records are skipped (counted in ``source.damaged``). The kept outputs the records name
    are copied before them; an archive missing in ``source`` is said in ``notes`` (its
    records are copied all the same: their metrics stand). Returns the records stored."""

    def sound_files() -> list[tuple[str, list[bytes]]]:
        found = []
        for path in source.files():
            sound = []
            for line in read_lines(path):
                if parse_record(line) is None:
                    source.damaged[path] += 1
                else:
                    sound.append(line)
            if sound:
                found.append((path.name, sound))
        return found

    held, succeeded = target.read(lambda: held_lines(target))
    copied = 0
    for name, lines in source.read(sound_files):
        new = new_lines(lines, held, succeeded)
        if not new:
            continue
        records = [parse_record(line) for line in new]
        missing = copy_archives(source.output, target.output, records)
        if notes is not None:
            notes.extend(f"kept outputs: {line}" for line in missing)
        text = b"".join(line + b"\n" for line in new)
        place, count = target.folder / name, 1
        while place.exists():
            count += 1
            place = target.folder / f"{Path(name).stem}-{count}.jsonl"
        try:
            target.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(place, text.decode())
        except OSError as error:
            kept = "the records copied before are kept"
            raise CampaignError(
                f"cannot store records in {target.folder}: "
                f"{write_failure(error, target.folder, kept, 'merge again')}"
            ) from None
        copied += len(new)
    return copied


def held_lines(records: RecordFiles) -> tuple[set[bytes], set[str]]:
    """Fingerprints of the sound lines stored here, and the keys of tasks that succeeded."""
    held, succeeded = set(), set()
    for path in records.files():
        for line in read_lines(path):
            if parse_record(line) is None:
                continue
            held.add(line_digest(line))
            key, ok = key_status(line)
            if ok:
                succeeded.add(key)
    return held, succeeded


def new_lines(lines: list[bytes], held: set[str], succeeded: set[str]) -> list[bytes]:
    """The lines of a source file a merge stores: neither a line held already nor a failure
    of a task held as a success; ``held`` and ``succeeded`` follow what is taken."""
    new = []
    for line in lines:
        digest = line_digest(line)
        key, ok = key_status(line)
        if digest in held or (not ok and key in succeeded):
            continue
        held.add(digest)
        if ok:
            succeeded.add(key)
        new.append(line)
    return new
