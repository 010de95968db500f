"""A preemptive schedule's executions, per job (begin, end, processors), built when first read.

A run that only reports metrics never reads them; building one tuple per job as jobs end made
the garbage collector walk the whole heap several times a run (an FCFS run allocates nothing
that lasts). So the policy keeps every job's processors in one flat list and only the
times of the jobs it suspended (or started late); the rest follow from the jobs' first start
and end.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Executions(Sequence):
    """Per job its executions ((begin, end, processors), ...), in time order.

    A job executes on the processors ``placed[offset[job] : offset[job] + size[job]]``, over
    [begin, end) for each pair of ``runs[job]`` (begin, end, begin, end, ...), or once from
    ``start`` to ``end`` if it has no runs.
    """

    def __init__(
        self,
        start: np.ndarray,
        end: np.ndarray,
        size: Sequence[int],
        placed: list[int],
        offset: dict[int, int],
        runs: dict[int, tuple[float, ...]],
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
                at = offset[job]
                procs = tuple(placed[at : at + size[job]])
                times = runs.get(job)
                if times is None:
                    every.append(((begins[job], ends[job], procs),))
                else:
                    pairs = zip(times[::2], times[1::2], strict=True)
                    every.append(tuple((begin, end, procs) for begin, end in pairs))
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
