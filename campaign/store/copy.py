"""Copying the sound records of one output folder's ledger into another's (a merge of
shards), each record stored once, with the kept outputs it names.

Which lines to copy is decided first, from every line's digest, key and success held in
arrays (a few tens of bytes a line: a shard of millions of records is never held as
records), then the chosen lines are copied a chunk at a time, as they are."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from campaign.errors import CampaignError
from campaign.store.durable import write_atomic, write_failure
from campaign.store.line_index import LineIndex
from campaign.store.lines import parse_record
from campaign.store.outputs import copy_archives
from campaign.store.records import RecordFiles
from campaign.store.scan import chunked_lines


def copy_records(
    target: RecordFiles, sources: list[RecordFiles], notes: list[list[str]] | None = None
) -> list[int]:
    """Store the sound records of other output folders' ledgers in ``target`` (a merge),
    file by file under the files' own names, so that the time in a name orders them with
    this ledger's as if one machine had stored them all: `load` then resolves a task
    stored twice as it would there. Only records new to this ledger are stored: not one
    it holds already or another source gave before (the same line, even after a compaction
    moved it into another file), nor a failure of a task held as a success (which would
    never count). Damaged records are skipped (counted in each source's ``damaged``). The
    kept outputs the records name are copied before them; an archive missing in a source is
    said in its ``notes`` (its records are copied all the same: their metrics stand).
    Returns the records stored from each source."""
    index = LineIndex()
    target.read(lambda: index.add(target.files(), Counter()))
    with ExitStack() as held:
        read = []
        for source in sources:
            held.enter_context(source.guard(exclusive=False))  # no compaction until copied
            read.append((source, index.count, source.read(_reader(index, source))))
        taken = index.new_lines()
        return [
            _copy_new(target, source, files, index, taken[first:], notes[n] if notes else None)
            for n, (source, first, files) in enumerate(read)
        ]


def _reader(index: LineIndex, source: RecordFiles) -> Callable[[], list[Path]]:
    """A read of the source's files into ``index`` (from where it stands: again if need be)."""
    first = index.count

    def read() -> list[Path]:
        index.truncate(first)
        files = source.files()
        index.add(files, source.damaged)
        return files

    return read


def _copy_new(
    target: RecordFiles,
    source: RecordFiles,
    files: list[Path],
    index: LineIndex,
    taken: np.ndarray,
    notes: list[str] | None,
) -> int:
    """Copy the ``taken`` lines of the source's ``files`` (per non-blank line, in order)."""
    copied, position = 0, 0
    for path in files:
        count = index.counts[path]
        mine = taken[position : position + count]
        position += count
        if not mine.any():
            continue
        place, number = target.folder / path.name, 1
        while place.exists():
            number += 1
            place = target.folder / f"{path.stem}-{number}.jsonl"
        try:
            target.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(place, _copied_text(path, mine, source.output, target.output, notes))
        except OSError as error:
            kept = "the records copied before are kept"
            raise CampaignError(
                f"cannot store records in {target.folder}: "
                f"{write_failure(error, target.folder, kept, 'merge again')}"
            ) from None
        copied += int(np.count_nonzero(mine))
    return copied


def _copied_text(
    path: Path, taken: np.ndarray, source: Path, target: Path, notes: list[str] | None
) -> Iterator[bytes]:
    """The taken lines of a source file, a chunk at a time, the kept outputs they name
    copied before (the chunk is written only after)."""
    position = 0
    for lines in chunked_lines(path):
        chosen = [lines[i] for i in np.flatnonzero(taken[position : position + len(lines)])]
        position += len(lines)
        named = [parse_record(line) for line in chosen if b'"archive"' in line]
        missing = copy_archives(source, target, [record for record in named if record])
        if notes is not None:
            notes.extend(f"kept outputs: {line}" for line in missing)
        if chosen:
            yield b"".join(line + b"\n" for line in chosen)
