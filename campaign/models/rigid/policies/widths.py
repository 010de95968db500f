"""The widths of a list of waiting jobs as bytes, in the list's order, so that a pass looking
for the next job that fits in the free processors skips the others in C: on a saturated
queue few of thousands of waiting jobs fit, and a greedy pass after every job end would
otherwise look at each of them."""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

SHORT = 64
"""Lists up to this long are walked job by job: keeping their widths in step costs more than
the walk (most traces keep their queues that short)."""

_FITS = [bytes(byte <= free for byte in range(256)) for free in range(256)]
"""Per free count below 256: each byte mapped to 1 if no higher, else to 0."""


class Widths:
    """Byte k is the width of job k of a list (255 for 255 or more), kept in step by
    ``follow`` at every pass."""

    def __init__(self, size: Sequence[int], estimate: Sequence[float] | None = None) -> None:
        self.size = size
        self.bytes = bytearray()
        self.estimate = estimate
        self.estimates: array | None = None if estimate is None else array("d")
        """With ``estimate``: the jobs' estimates too, in the same order (for EASY)."""
        self.gone: list[int] = []
        """Positions of the jobs started at the last pass, ascending (to be dropped)."""
        self._key = -1
        self._mask = b""
        self._stale = True
        """Whether the bytes may be out of step (a short list was not followed)."""

    def _byte(self, job: int) -> int:
        width = self.size[job]
        return width if width < 255 else 255

    def follow(self, listing: Sequence[int], rebuilt: bool) -> None:
        """Step with ``listing``: the list of the last pass without the jobs started then
        (``gone``) and with the jobs arrived since at its end; ``rebuilt``: any list."""
        data = self.bytes
        self._key = -1
        estimates = self.estimates
        if rebuilt:
            data[:] = map(self._byte, listing)
            if estimates is not None:
                self.estimates = array("d", map(self.estimate.__getitem__, listing))
        else:
            for position in reversed(self.gone):
                del data[position]
                if estimates is not None:
                    del estimates[position]
            if len(data) < len(listing):
                if estimates is not None:
                    estimates.extend(map(self.estimate.__getitem__, listing[len(data) :]))
                data.extend(map(self._byte, listing[len(data) :]))
        self.gone = []

    def step(self, listing: Sequence[int], rebuilt: bool = False) -> bool:
        """``follow`` a list longer than SHORT (True); a shorter one is left to the caller to
        walk job by job (False), and the widths are rebuilt once the list is long again."""
        if len(listing) <= SHORT:
            self._stale = True
            return False
        self.follow(listing, rebuilt or self._stale)
        self._stale = False
        return True

    def fitting(self, position: int, free: int) -> int:
        """The first position from ``position`` on whose job may fit in ``free`` processors
        (it does when free < 255; else check its width), or -1."""
        key = free if free < 255 else 255
        if key != self._key:  # the mask of the jobs that fit, kept while free stays
            self._key = key
            self._mask = self.bytes.translate(_FITS[key])
        return self._mask.find(1, position)

    def easy_candidates(
        self, first: int, t: float, shadow: float, free: int, extra: int
    ) -> list[int]:
        """The positions from ``first`` on of every job that may start under EASY's rule
        (fits in ``free`` and ends by ``shadow`` or fits in ``extra``), and maybe some that
        may not (widths of 255 or more): a check of each remains. Copies of the slices, not
        views: a view left alive (in a frame a profiler holds) would lock the buffers."""
        widths = np.frombuffer(self.bytes[first:], np.uint8)
        ends = np.frombuffer(self.estimates[first:], np.float64) + t
        may = (ends <= shadow) | (widths <= min(extra, 255))
        may &= widths <= min(free, 255)
        return (np.flatnonzero(may) + first).tolist()
