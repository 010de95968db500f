"""A value per task held as an integer code into the distinct values (error texts, workers,
a record's recomputations): four bytes a task however long the value, where a Python
string per task would take a hundred and more."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from typing import Any

import numpy as np

NONE = -1  # the code of a task without a value


class Codes:
    """Per row (of ``size``), a value or none; the codes are made on the first value."""

    def __init__(self, size: int):
        self.size = size
        self.codes: np.ndarray | None = None  # int32 per row, NONE where no value
        self.values: list[Any] = []
        self._code: dict[Hashable, int] = {}

    def set(self, row: int, value: Hashable) -> None:
        code = self._code.get(value)
        if code is None:
            code = self._code[value] = len(self.values)
            self.values.append(value)
        if self.codes is None:
            self.codes = np.full(self.size, NONE, dtype=np.int32)
        self.codes[row] = code

    def clear(self, row: int) -> None:
        if self.codes is not None:
            self.codes[row] = NONE

    def get(self, row: int) -> Any:
        """The value of a row (None where it has none)."""
        if self.codes is None or self.codes[row] == NONE:
            return None
        return self.values[int(self.codes[row])]

    def all_codes(self) -> np.ndarray:
        """The code of every row (`NONE` where it has no value)."""
        if self.codes is None:
            return np.full(self.size, NONE, dtype=np.int32)
        return self.codes

    def counts(self, rows: np.ndarray | None = None) -> Counter[Any]:
        """How many rows (of ``rows``, a mask, or all) hold each value."""
        codes = self.all_codes() if rows is None else self.all_codes()[rows]
        found = np.bincount(codes[codes != NONE], minlength=len(self.values))
        return Counter({value: int(n) for value, n in zip(self.values, found) if n})
