"""A preemptive schedule's executions, per job (begin, end, processors), built when first read.

A run that only reports metrics never reads them; building one tuple per job as jobs end made
the garbage collector walk the whole heap several times a run (an FCFS run allocates nothing
that lasts). So the policy keeps every job's processors in one flat list and only the
executions of the jobs it suspended (or started late) as tuples; the rest follow from the
jobs' first start and end.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Executions(Sequence):
    """Per job its executions ((begin, end, processors), ...), in time order.

    A job missing from ``runs`` executed once, from ``start`` to ``end``, on the processors
    ``placed[offset[job] : offset[job] + size[job]]``.
    """

    def __init__(
        self,
        start: np.ndarray,
        end: np.ndarray,
        size: Sequence[int],
        placed: list[int],
        offset: dict[int, int],
        runs: dict[int, tuple[tuple[float, float, tuple[int, ...]], ...]],
    ) -> None:
        self._parts = (start, end, size, placed, offset, runs)
        self._every: tuple | None = None

    def _all(self) -> tuple:
        if self._every is None:
            start, end, size, placed, offset, runs = self._parts
            begins = start.tolist()
            ends = end.tolist()
            every = []
            for job in range(len(begins)):
                parts = runs.get(job)
                if parts is None:
                    at = offset[job]
                    parts = ((begins[job], ends[job], tuple(placed[at : at + size[job]])),)
                every.append(parts)
            self._every = tuple(every)
        return self._every

    def __len__(self) -> int:
        return len(self._parts[0])

    def __getitem__(self, index):
        return self._all()[index]

    def __iter__(self):
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Executions):
            return self._all() == other._all()
        if isinstance(other, tuple):
            return self._all() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._all())
