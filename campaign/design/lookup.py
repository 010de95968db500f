"""Task keys to task indices for a whole design at once, in memory that grows by a few bytes
per task (no Python string or dictionary entry per task).

A task key is its cell's digest and its seed, 16 lowercase hex digits each
(`campaign.design.tasks.Design`): two 64-bit numbers. The design's tasks are sorted by the
exclusive or of the two (the seed alone would not do: paired levels share seeds), each
key looked up by binary search and then checked whole, so that a key of another design (a
level since removed, a hand-written key) is never taken for one of this design's.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any, Protocol

import numpy as np


class Design(Protocol):
    """What a lookup reads of a `campaign.design.tasks.Design` (which makes the lookup)."""

    cell_digests: Sequence[str]
    seeds: Any  # the seeds, cell by cell (an array of cells x replicates)
    spec: Any  # its ``replicates``


KEY_LENGTH = 32  # hex digits: the cell's digest and the seed
NOT_IN_DESIGN = -1
_HEX = np.zeros(256, dtype=bool)
_HEX[list(b"0123456789abcdef")] = True


def key_numbers(keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cell digests and seeds of task keys as 64-bit numbers, and which keys have the
    form of a task key (32 lowercase hex digits; the others get zeros)."""
    count = len(keys)
    valid = np.fromiter(map(len, keys), dtype=np.int64, count=count) == KEY_LENGTH
    whole = bool(valid.all())
    text = "".join(keys if whole else (k if ok else "0" * KEY_LENGTH for k, ok in zip(keys, valid)))
    try:
        data = np.frombuffer(text.encode("ascii"), dtype=np.uint8).reshape(count, KEY_LENGTH)
    except UnicodeEncodeError:  # a key of other characters: no task key
        return _numbers_one_by_one(keys)
    hexadecimal = _HEX[data].all(axis=1)
    if not hexadecimal.all():
        valid &= hexadecimal
        text = "".join(key if ok else "0" * KEY_LENGTH for key, ok in zip(keys, valid))
    words = np.frombuffer(bytes.fromhex(text), dtype=">u8").reshape(count, 2)
    return words[:, 0].astype(np.uint64), words[:, 1].astype(np.uint64), valid


def _numbers_one_by_one(keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cells, seeds = np.zeros(len(keys), dtype=np.uint64), np.zeros(len(keys), dtype=np.uint64)
    valid = np.zeros(len(keys), dtype=bool)
    for row, key in enumerate(keys):
        if key.isascii():
            found_cells, found_seeds, ok = key_numbers([key])
            cells[row], seeds[row], valid[row] = found_cells[0], found_seeds[0], ok[0]
    return cells, seeds, valid


class TaskLookup:
    """Task key -> task index of one design (`NOT_IN_DESIGN` for a key it does not hold)."""

    def __init__(self, design: Design):
        self.design = design

    @cached_property
    def _cells(self) -> np.ndarray:
        return np.array([int(digest, 16) for digest in self.design.cell_digests], np.uint64)

    @cached_property
    def _seeds(self) -> np.ndarray:
        return np.asarray(self.design.seeds, dtype=np.uint64).ravel()

    @cached_property
    def _sorted(self) -> tuple[np.ndarray, np.ndarray, int]:
        """The tasks' mixed keys sorted, the task at each place, and the longest run of
        equal mixed keys (1 unless two keys happen to mix alike)."""
        replicates = self.design.spec.replicates
        mixed = np.repeat(self._cells, replicates) ^ self._seeds
        index_type = np.int32 if mixed.size < 2**31 else np.int64
        order = np.argsort(mixed, kind="stable").astype(index_type)
        mixed = mixed[order]
        runs = 1
        if mixed.size > 1:
            starts = np.flatnonzero(np.concatenate([[True], mixed[1:] != mixed[:-1], [True]]))
            runs = int(np.diff(starts).max())
        return mixed, order, runs

    def indices(self, keys: Sequence[str]) -> np.ndarray:
        """The task index of each key (int64), `NOT_IN_DESIGN` where the design has none."""
        cells, seeds, valid = key_numbers(keys)
        return self.indices_of(cells, seeds, valid)

    def indices_of(self, cells: np.ndarray, seeds: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """`indices` of keys given as their numbers (`key_numbers`)."""
        found = np.full(len(cells), NOT_IN_DESIGN, dtype=np.int64)
        mixed, order, runs = self._sorted
        if not mixed.size or not len(cells):
            return found
        wanted = cells ^ seeds
        place = np.searchsorted(mixed, wanted)
        replicates = self.design.spec.replicates
        open_ = valid.copy()
        for step in range(runs):
            at = place + step
            rows = np.flatnonzero(open_ & (at < mixed.size))
            if not rows.size:
                break
            at = at[rows]
            same = mixed[at] == wanted[rows]
            rows, at = rows[same], at[same]
            task = order[at].astype(np.int64)
            match = self._cells[task // replicates] == cells[rows]
            match &= self._seeds[task] == seeds[rows]
            found[rows[match]] = task[match]
            open_[rows[match]] = False
        return found
