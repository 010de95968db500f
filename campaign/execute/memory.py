"""A task's peak memory on its worker, for sizing a campaign's workers (`campaign plan
--estimate`, `status`, the report): the larger of the most resident memory the worker process
held while the task ran and the most its program's process tree held (a program is a process
of its own, so the worker's memory says nothing of it).

The worker's: on Linux the process's high-water mark is reset before each task
(``/proc/self/clear_refs``) and read after it (``VmHWM``), so each task gets its own peak.
Elsewhere the process's peak so far is the best bound there is (it never decreases, so it may
be an earlier task's).

A program's (`campaign.execute.process_tree` reports them here, per thread: the task of the
thread that started it): the kernel's peak of the program when it is reaped (``wait4``: the
largest of the program and the children it waited for), and the resident memory of every
process of its session summed, sampled while it runs (children running side by side: an MPI
job's ranks, a pipeline).
"""

from __future__ import annotations

import os
import resource
import sys
import threading
from pathlib import Path

_CLEAR_REFS = "/proc/self/clear_refs"
_STATUS = "/proc/self/status"
_OPEN: dict[tuple[str, int], int | None] = {}
"""The two files, opened once per process (None: not there); opening them per task cost more
than a task of a millisecond. Keyed by process too: /proc/self names the process that opened
it, which a forked child is not."""
_PROGRAMS = threading.local()  # .peak: the largest peak of a program of this thread's task
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MAXRSS_UNIT = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, kB else


def _descriptor(path: str, flags: int) -> int | None:
    key = (path, os.getpid())
    if key not in _OPEN:
        try:
            _OPEN[key] = os.open(path, flags | os.O_CLOEXEC)
        except OSError:
            _OPEN[key] = None
    return _OPEN[key]


def reset_peak() -> bool:
    """Start a new peak at the current resident size (and none of a program yet); False where
    that is not possible for the worker's own."""
    _PROGRAMS.peak = 0.0
    descriptor = _descriptor(_CLEAR_REFS, os.O_WRONLY)
    if descriptor is None:
        return False
    try:
        os.write(descriptor, b"5")
        return True
    except OSError:
        return False


def note_program_peak(size: float) -> None:
    """A program of this thread's task held ``size`` bytes at its peak."""
    _PROGRAMS.peak = max(getattr(_PROGRAMS, "peak", 0.0), float(size))


def peak_bytes() -> float:
    """The task's peak since the last reset, in bytes: the worker process's or its
    programs', whichever is larger."""
    return max(_own_peak(), getattr(_PROGRAMS, "peak", 0.0))


def _own_peak() -> float:
    descriptor = _descriptor(_STATUS, os.O_RDONLY)
    if descriptor is not None:
        try:
            status = os.pread(descriptor, 16384, 0)
            at = status.find(b"VmHWM:")
            if at >= 0:
                return float(int(status[at + 6 : status.index(b"kB", at)]) * 1024)  # in kB
        except (OSError, ValueError):
            pass
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * MAXRSS_UNIT)


def session_resident_bytes(session: int) -> float:
    """The resident memory of every process of ``session`` summed, in bytes (Linux: /proc;
    0 elsewhere). A program started in a session of its own keeps its children in it, those
    its shell or a daemonising fork left behind too."""
    total = 0
    try:
        entries = os.scandir("/proc")
    except OSError:
        return 0.0
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_bytes()
            except OSError:
                continue  # gone meanwhile
            fields = stat[stat.rfind(b")") + 2 :].split()
            # after the name: state ppid pgrp session ...; resident pages is the 24th field
            if len(fields) > 21 and int(fields[3]) == session:
                total += int(fields[21]) * _PAGE
    return float(total)
