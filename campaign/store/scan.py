"""Reading a ledger's files in chunks of lines, in the order records are resolved (file by
file, line by line), so that a reader holds one chunk at a time however large the ledger:
each sound line's key and success (`heads`: the JSON of a line whose checksum holds is not
parsed), or its whole record (`records`). Damaged lines are skipped and counted per file."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from campaign.store.lines import line_heads, parse_records

# read at a time (a compacted ledger file may hold millions of lines); records are parsed
# from a quarter of that: a record parsed takes several times its line's bytes
CHUNK_BYTES = 8 * 2**20


def chunked_lines(path: Path, size: int | None = None) -> Iterator[list[bytes]]:
    """The non-blank lines of a ledger file (as `campaign.store.lines.read_lines` gives them),
    in lists of about ``size`` bytes (default `CHUNK_BYTES`)."""
    with open(path, "rb") as handle:
        rest = b""
        while True:
            block = handle.read(size or CHUNK_BYTES)
            if not block:
                break
            data = rest + block
            lines = data.split(b"\n")
            rest = lines.pop()
            yield lines if _clean(data, lines, len(data) - len(rest)) else _cleaned(lines)
        if rest:
            yield _cleaned([rest])


def _cleaned(lines: list[bytes]) -> list[bytes]:
    stripped = (line.rstrip(b"\r") for line in lines)
    return [line for line in stripped if line.strip()]


def _clean(data: bytes, lines: list[bytes], end: int) -> bool:
    """Whether ``lines`` (``data`` split up to ``end``) hold no carriage return and no blank
    line, as a ledger file is written: then `_cleaned` would change nothing."""
    if b"\r" in data or (lines and not lines[0].strip()):
        return False
    return _BLANK.search(data, 0, end) is None


_BLANK = re.compile(rb"\n[ \t\x0b\x0c]*\n")  # a line within that `bytes.strip` empties


@dataclass
class Heads:
    """The sound lines of one chunk of a ledger file, with each one's key and success."""

    path: Path
    lines: list[bytes]
    keys: list[str]
    ok: np.ndarray  # bool per line


def heads(files: Iterable[Path], damaged: Counter[Path]) -> Iterator[Heads]:
    """Key and success of every sound line, a chunk at a time (damaged lines counted in
    ``damaged``)."""
    for path in files:
        for lines in chunked_lines(path):
            sound, keys, ok = [], [], []
            for line, head in zip(lines, line_heads(lines)):
                if head is None:
                    damaged[path] += 1
                    continue
                sound.append(line)
                keys.append(head[0])
                ok.append(head[1])
            yield Heads(path, sound, keys, np.array(ok, dtype=bool))


def records(files: Iterable[Path], damaged: Counter[Path]) -> Iterator[list[dict[str, Any]]]:
    """Every sound record, parsed, a chunk at a time (damaged lines counted in ``damaged``)."""
    for path in files:
        for lines in chunked_lines(path, CHUNK_BYTES // 4):
            parsed = [record for record in parse_records(lines) if record is not None]
            if len(parsed) < len(lines):
                damaged[path] += len(lines) - len(parsed)
            yield parsed
