"""A task's peak memory on its worker: the most resident memory its process held while the
task ran, for sizing a campaign's workers (`campaign plan --estimate`, `status`, the report).

On Linux the process's high-water mark is reset before each task (``/proc/self/clear_refs``)
and read after it (``VmHWM``), so each task gets its own peak. Elsewhere the process's peak
so far is the best bound there is (it never decreases, so it may be an earlier task's)."""

from __future__ import annotations

import os
import resource
import sys

_CLEAR_REFS = "/proc/self/clear_refs"
_STATUS = "/proc/self/status"
_OPEN: dict[tuple[str, int], int | None] = {}
"""The two files, opened once per process (None: not there); opening them per task cost more
than a task of a millisecond. Keyed by process too: /proc/self names the process that opened
it, which a forked child is not."""


def _descriptor(path: str, flags: int) -> int | None:
    key = (path, os.getpid())
    if key not in _OPEN:
        try:
            _OPEN[key] = os.open(path, flags | os.O_CLOEXEC)
        except OSError:
            _OPEN[key] = None
    return _OPEN[key]


def reset_peak() -> bool:
    """Start a new peak at the current resident size; False where that is not possible."""
    descriptor = _descriptor(_CLEAR_REFS, os.O_WRONLY)
    if descriptor is None:
        return False
    try:
        os.write(descriptor, b"5")
        return True
    except OSError:
        return False


def peak_bytes() -> float:
    """The peak resident memory of this process since the last reset, in bytes."""
    descriptor = _descriptor(_STATUS, os.O_RDONLY)
    if descriptor is not None:
        try:
            status = os.pread(descriptor, 16384, 0)
            at = status.find(b"VmHWM:")
            if at >= 0:
                return float(int(status[at + 6 : status.index(b"kB", at)]) * 1024)  # in kB
        except (OSError, ValueError):
            pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, kB else
