"""What a program's task printed: the last lines of its stderr on one line (a failure's
message ends with them) and the outputs a failed task keeps (its streams' ends, the files
``keep`` names that fit); read as the task ends, or while it still runs, when the driver
times it out (`printed_so_far`): its worker process is then ended, its folder with it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import campaign.execute.keep as keep
from campaign.execute.command_metrics import FolderOutputs
from campaign.spec.command_model import CommandSpec

STDERR_LINES = 5  # lines of stderr a failure's message ends with
STDERR_CHARACTERS = 800
# batch key -> (the key of its task whose program runs, what that task printed so far): read
# when the driver times the task out (`printed_so_far`), its worker process then ended
PRINTING: dict[str, tuple[str, Callable[[], tuple[str, dict[str, bytes]]]]] = {}


def printed(
    command: CommandSpec, outputs: FolderOutputs, placed: Iterable[tuple[int, int]]
) -> tuple[str, dict[str, bytes]]:
    """What a running task printed so far: the last lines of its stderr on one line (as an
    exit's failure ends with), and the outputs a failure keeps (`failure_outputs`)."""
    err = stderr_tail(outputs.streams["stderr"])
    return f"stderr: {err}" if err else "stderr was empty", failure_outputs(
        command, outputs, placed
    )


def printed_so_far(batch: str) -> tuple[str, str, dict[str, bytes]] | None:
    """The running program of ``batch`` on this worker: its task's key and what it printed
    so far (`printed`); None when no program of that batch runs here."""
    running = PRINTING.get(batch)
    if running is None:
        return None
    key, read = running
    try:
        return (key, *read())
    except OSError:  # its files went with the task's end
        return None


def stderr_tail(path: Path) -> str:
    """The last lines of stderr on one line (`` | `` between lines)."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 4 * STDERR_CHARACTERS))
        data = handle.read()
    lines = [line.strip() for line in data.decode(errors="replace").splitlines() if line.strip()]
    tail = " | ".join(lines[-STDERR_LINES:])
    return tail[-STDERR_CHARACTERS:]


def failure_outputs(
    command: CommandSpec, outputs: FolderOutputs, placed: Iterable[tuple[int, int]] = ()
) -> dict[str, bytes]:
    """What a failed task keeps: its stdout and stderr (their ends, within ``keep_limit``)
    and the files ``keep`` names that fit."""
    kept: dict[str, bytes] = {}
    room = command.keep_limit
    for name in keep.STREAMS:
        data = tail_bytes(outputs.streams[name], room // 2)
        kept[name] = data
        room -= len(data)
    selection = keep.select(command.keep, outputs.folder, outputs.streams, placed)
    for name, path in selection.paths.items():
        if name in keep.STREAMS:
            continue
        size = path.stat().st_size
        if size <= room:
            kept[name] = path.read_bytes()
            room -= size
    return kept


def tail_bytes(path: Path, most: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(0, handle.tell() - most))
        return handle.read()
