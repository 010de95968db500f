"""Which lines of a ledger hold current records, decided without holding the records: what
lets a ledger of millions of records be compacted in memory of a few tens of bytes a line.

Each sound line's key and success are read from its head (`campaign.store.lines`); a task
key of the usual form (32 hex digits) is held as two 64-bit numbers, any other in a
dictionary. A key's current line is its last successful one, else its last one: the record
`RecordFiles.load` returns for it. The lines are then copied as they are, not written anew.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterator
from pathlib import Path

import numpy as np

from campaign.design.lookup import key_numbers
from campaign.store.lines import line_head
from campaign.store.scan import chunked_lines


def current_lines(files: list[Path], damaged: Counter[Path]) -> np.ndarray:
    """Per non-blank line of ``files`` (in order), whether it holds its key's current record
    (a damaged line does not; they are counted in ``damaged``)."""
    numbers: list[tuple[np.ndarray, ...]] = []
    others: dict[Hashable, tuple[bool, int]] = {}  # a key of another form -> its current line
    position = 0
    for path in files:
        for lines in chunked_lines(path):
            keys, ok, rows = [], [], []
            for row, line in enumerate(lines, start=position):
                head = line_head(line)
                if head is None:
                    damaged[path] += 1
                    continue
                keys.append(head[0])
                ok.append(head[1])
                rows.append(row)
            position += len(lines)
            cells, seeds, usual = key_numbers(keys)
            ok_array, rows_array = np.array(ok, dtype=bool), np.array(rows, dtype=np.int64)
            numbers.append((cells[usual], seeds[usual], ok_array[usual], rows_array[usual]))
            for index in np.flatnonzero(~usual).tolist():
                _keep(others, keys[index], ok[index], rows[index])
    current = np.zeros(position, dtype=bool)
    current[[row for _, row in others.values()]] = True
    if numbers:
        cells, seeds, ok_array, rows_array = (np.concatenate(part) for part in zip(*numbers))
        current[rows_array[_winners(cells, seeds, ok_array, rows_array)]] = True
    return current


def _keep(current: dict[Hashable, tuple[bool, int]], key: Hashable, ok: bool, row: int) -> None:
    """Enter a line as the records are resolved: a later line wins unless it failed where an
    earlier one succeeded."""
    held = current.get(key)
    if held is None or not (held[0] and not ok):
        current[key] = (ok, row)


def _winners(cells: np.ndarray, seeds: np.ndarray, ok: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Of lines given by their keys' numbers, success and row, the places of current ones."""
    mixed = cells ^ seeds
    order = np.argsort(mixed, kind="stable")
    mixed = mixed[order]
    starts = np.flatnonzero(np.concatenate([[True], mixed[1:] != mixed[:-1]]))
    ends = np.append(starts[1:], mixed.size)
    alone = starts[ends - starts == 1]
    found = [order[alone]]
    for start, end in zip(starts[ends - starts > 1].tolist(), ends[ends - starts > 1].tolist()):
        current: dict[Hashable, tuple[bool, int]] = {}
        for place in sorted(order[start:end].tolist(), key=lambda place: rows[place]):
            _keep(current, (int(cells[place]), int(seeds[place])), bool(ok[place]), place)
        found.append(np.array([place for _, place in current.values()], dtype=np.int64))
    return np.concatenate(found)


def current_text(files: list[Path], current: np.ndarray) -> Iterator[bytes]:
    """The current lines of ``files`` (`current_lines`), in order, a chunk at a time."""
    position = 0
    for path in files:
        for lines in chunked_lines(path):
            kept = [lines[i] for i in np.flatnonzero(current[position : position + len(lines)])]
            position += len(lines)
            if kept:
                yield b"\n".join(kept) + b"\n"
