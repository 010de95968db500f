"""A task's peak memory on its worker: the most resident memory its process held while the
task ran, for sizing a campaign's workers (`campaign plan --estimate`, `status`, the report).

On Linux the process's high-water mark is reset before each task (``/proc/self/clear_refs``)
and read after it (``VmHWM``), so each task gets its own peak. Elsewhere the process's peak
so far is the best bound there is (it never decreases, so it may be an earlier task's)."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def reset_peak() -> bool:
    """Start a new peak at the current resident size; False where that is not possible."""
    try:
        _CLEAR_REFS.write_text("5")
        return True
    except OSError:
        return False


def peak_bytes() -> float:
    """The peak resident memory of this process since the last reset, in bytes."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return float(int(line.split()[1]) * 1024)  # the line is in kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, kB else
