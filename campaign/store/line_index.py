"""The lines of ledger files read in turn, each one's digest, key and success held in arrays
(a few tens of bytes a line), and which of them a merge stores: what lets shards of millions
of records be merged without holding them as records.

A line is new unless an earlier line is the same (its digest) or it is a failure of a task
an earlier line holds a success for: what `campaign.store.copy` decided line by line with
sets of every line, decided here by sorting. A task key of the usual form (32 hex digits)
is held as two 64-bit numbers, any other in a dictionary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from pathlib import Path

import numpy as np

from campaign.design.lookup import key_numbers
from campaign.store.lines import line_digest, line_head
from campaign.store.scan import chunked_lines


class LineIndex:
    """Every non-blank line of the files added, in order (damaged ones as not sound)."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, ...]] = []  # digest words, key numbers, ok, sound
        self.other_keys: dict[int, str] = {}  # line -> a key not of the usual form
        self.counts: dict[Path, int] = {}  # non-blank lines per file added
        self.count = 0

    def truncate(self, count: int) -> None:
        """Forget the lines from ``count`` on (a read to start again)."""
        while self.count > count:
            last = self.parts.pop()
            self.count -= len(last[0])
        self.other_keys = {row: key for row, key in self.other_keys.items() if row < count}

    def add(self, files: Iterable[Path], damaged: Counter[Path]) -> None:
        """Add the lines of ``files`` (damaged ones counted in ``damaged``)."""
        for path in files:
            self.counts[path] = 0
            for lines in chunked_lines(path):
                self.counts[path] += len(lines)
                self._add(path, lines, damaged)

    def _add(self, path: Path, lines: list[bytes], damaged: Counter[Path]) -> None:
        digests, keys, ok, sound = [], [], [], []
        for line in lines:
            head = line_head(line)
            if head is None:
                damaged[path] += 1
            digests.append(line_digest(line))
            keys.append("" if head is None else head[0])
            ok.append(head is not None and head[1])
            sound.append(head is not None)
        words = np.frombuffer(b"".join(digests), dtype=">u8").reshape(-1, 2).astype(np.uint64)
        cells, seeds, usual = key_numbers(keys)
        for row in np.flatnonzero(~usual).tolist():
            self.other_keys[self.count + row] = keys[row]
        part = (words[:, 0], words[:, 1], cells, seeds, usual, np.array(ok, bool))
        self.parts.append((*part, np.array(sound, bool)))
        self.count += len(lines)

    def new_lines(self) -> np.ndarray:
        """Per line, whether a merge stores it: sound, no earlier line the same, and not a
        failure of a task an earlier line holds a success for."""
        if not self.parts:
            return np.zeros(0, dtype=bool)
        first, second, cells, seeds, usual, ok, sound = (
            np.concatenate(p) for p in zip(*self.parts)
        )
        rows = np.flatnonzero(sound)
        repeated = np.zeros(self.count, dtype=bool)
        repeated[rows[_later(first[rows], second[rows])]] = True
        keyed = rows[usual[rows]]
        ok_rows = np.zeros(self.count, dtype=bool)
        ok_rows[keyed[_after_success(cells[keyed], seeds[keyed], ok[keyed])]] = True
        succeeded: dict[Hashable, int] = {}
        for row, key in sorted(self.other_keys.items()):
            if not sound[row]:
                continue
            if ok[row]:
                succeeded.setdefault(key, row)
            elif key in succeeded:
                ok_rows[row] = True
        return sound & ~repeated & ~ok_rows


def _runs(high: np.ndarray, low: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows sorted by the pair (``high``, ``low``) of 64-bit numbers, equal pairs in the order
    of their rows: the order, and where each run of equal pairs starts and ends."""
    mixed = high ^ low
    order = np.argsort(mixed, kind="stable")
    sorted_high, sorted_low, mixed = high[order], low[order], mixed[order]
    alike = mixed[1:] == mixed[:-1]
    same = alike & (sorted_high[1:] == sorted_high[:-1]) & (sorted_low[1:] == sorted_low[:-1])
    if (alike & ~same).any():  # two pairs mixed alike (rare): sort by the pairs themselves
        order = np.lexsort((np.arange(high.size), low, high))
        sorted_high, sorted_low = high[order], low[order]
        same = (sorted_high[1:] == sorted_high[:-1]) & (sorted_low[1:] == sorted_low[:-1])
    starts = np.flatnonzero(np.concatenate([[True], ~same])) if order.size else order
    return order, starts, np.append(starts[1:], order.size)


def _later(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Places of rows whose pair an earlier row has."""
    order, starts, _ = _runs(high, low)
    first = np.zeros(order.size, dtype=bool)
    first[starts] = True
    return order[~first]


def _after_success(cells: np.ndarray, seeds: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Places of failed rows whose key an earlier row holds a success for."""
    order, starts, ends = _runs(cells, seeds)
    if not order.size:
        return order
    earliest = np.where(ok[order], order, np.iinfo(np.int64).max)
    first_success = np.repeat(np.minimum.reduceat(earliest, starts), ends - starts)
    return order[~ok[order] & (order > first_success)]
