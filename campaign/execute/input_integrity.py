"""A program's cached inputs stay as they arrived, or the tasks that would read them fail.

Every task of a worker links the one cached copy of an input into its folder
(`campaign.execute.inputs`), read-only by its mode, which root ignores: a program run as root
that writes to its input (``echo x >> data.txt``) changes what every later task reads under
the same digest, and their results would mix two inputs silently. So the size and
modification time of each cached file are taken once it is known whole (stored and checked by
this process, or hashed once by it), and compared before a task links the file and after the
task ends. A changed file fails that task in one line, is taken out of the cache (it comes
again with the next run) and fails every task of this worker that would read it.
"""

from __future__ import annotations

import os
from pathlib import Path

from campaign.plan.sources import file_digest

# cached file -> (size, modification time in ns) when this process knew it whole
_KNOWN: dict[str, tuple[int, int]] = {}
_CHANGED: dict[str, str] = {}  # cached file -> the input's name, of files a task changed


class InputChanged(Exception):
    """A cached input is not what arrived under its digest: a task wrote to it."""


def changed_message(name: str) -> str:
    return (
        f"input {name} was changed on this worker by a task of this campaign (its program "
        "wrote to it, which its read-only mode does not stop for root): every task of a "
        "worker reads the same copy, so a program must not write to its inputs; copy it in "
        "the task's folder first (or make it a template). The tasks that saw it changed "
        "failed; it comes again with the next run"
    )


def known_whole(path: Path) -> None:
    """Take the identity of a cached file just stored and checked against its digest."""
    _KNOWN[str(path)] = _stamp(path)
    _CHANGED.pop(str(path), None)


def check_unchanged(path: Path, digest: str, name: str) -> None:
    """Raise `InputChanged` if the cached file of ``digest`` is not as it arrived; a file
    this process has not seen whole is hashed once."""
    key = str(path)
    if key in _CHANGED:
        raise InputChanged(changed_message(name))
    stamp = _stamp(path)
    known = _KNOWN.get(key)
    if known is None and stamp is not None and file_digest(path) == digest:
        _KNOWN[key] = known = stamp
    if stamp is None or stamp != known:
        _KNOWN.pop(key, None)
        _CHANGED[key] = name
        Path(path).unlink(missing_ok=True)  # never read again: the next run sends it anew
        raise InputChanged(changed_message(name))


def taken_out(path: Path) -> bool:
    """Whether a task changed this cached file (and it was taken out of the cache)."""
    return str(path) in _CHANGED


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns)
