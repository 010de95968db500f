"""Writes that survive any crash: a file is on disk whole or not at all; and one-line
reasons when a write fails (a full disk, a folder that may not be written)."""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path


def fsync_dir(path: Path) -> None:
    """Make a rename or removal in ``path`` durable (where the file system allows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def room_left(folder: Path) -> str:
    """How much room is left where a write failed (a full disk is the usual cause)."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return ""
    return f" ({free / 2**20:.1f} MiB free on its disk)"


NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


def write_failure(error: OSError, folder: Path, kept: str, again: str) -> str:
    """The end of a one-line error for a failed write: why, what is ``kept``, what to do.

    A folder that may not be written (a read-only file system, permissions) needs another
    remedy than a full disk or quota: making room would not help.
    """
    reason = error.strerror or str(error)
    if error.errno in NOT_WRITABLE:
        return (
            f"{reason}: {folder} is not writable; {kept}: make it writable (or give another "
            f"output folder) and {again}"
        )
    return f"{reason}{room_left(folder)}; {kept}: make room and {again}"


def writer_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (one of another user's counts too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False
    return True


TEMPORARY = re.compile(r"^\.(?P<name>.+?)\.(?P<pid>\d+)(?:\.[0-9a-f]{8})?\.tmp$")


def remove_stale_temporaries(folder: Path, name: str) -> list[Path]:
    """Remove the temporary files (``.NAME.PID[.TAG].tmp``) of files named like ``name`` (a
    glob pattern) that a writer killed mid-write (SIGTERM, SIGKILL, a lost node) left in
    ``folder``: those whose writer process is gone. Returns the files removed."""
    removed: list[Path] = []
    try:
        candidates = list(folder.glob(f".{name}.*.tmp"))
    except OSError:
        return removed
    for path in candidates:
        match = TEMPORARY.match(path.name)
        if match is None or not fnmatch.fnmatchcase(match["name"], name):
            continue
        if writer_alive(int(match["pid"])):
            continue
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def write_atomic(path: Path, text: str | bytes | Iterable[bytes]) -> None:
    """Write a file so that readers see the old content or the whole new one, never a part
    (``text``: the content, or its parts as bytes, written one at a time)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w" if isinstance(text, str) else "wb") as handle:
            for part in [text] if isinstance(text, str | bytes) else text:
                handle.write(part)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a part written before a full disk is nobody's file
        raise
    fsync_dir(path.parent)
