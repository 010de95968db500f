"""A Python model's input files on a worker are those the plan digested, or its tasks fail;
so are the files a program's params name by absolute path (`check_outside_files`).

The plan digests the files a model's ``inputs(params)`` names on the machine that runs
`campaign run`, and the results record those digests. A worker elsewhere (another machine,
another folder its ``inputs()`` resolves to, a copy edited since) may read other content
under the same name, and its numbers would be stored as if computed from the digested file.
So before each task a worker asks the model which files the task reads, as the plan did, and
compares each with the digest the plan took (sent with the task); one that differs, or is
missing, fails the task in one line, as a program's changed input does. Each file is hashed
once per worker process while its inode, size, modification and change times stay the same;
a folder once per batch. A file an earlier task here found as planned that differs now
changed while the campaign ran, most often written by its program (``--out
/data/{size}.out``): the task fails saying so, not that workers hold other copies.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from campaign.plan.outside_files import outside_values
from campaign.plan.sources import file_digest, folder_digest

# (path, inode, size, modification and change times in ns) -> digest of a file this process
# hashed (the change time too: a file rewritten in place, its modification time set back)
_KNOWN: dict[tuple[str, int, int, int, int], str] = {}
_AS_PLANNED: set[tuple[str, str]] = set()  # (path, digest) a task of this process found


class InputDiffers(Exception):
    """An input file on this worker is not the content the plan digested."""


def check_inputs(
    model: Any, params: Mapping[str, Any], digests: Sequence[str], folders: dict[str, str]
) -> None:
    """Raise `InputDiffers` (one line) unless each file the model says a task of ``params``
    reads here has the digest the plan took (``digests``, in the order ``inputs()`` names
    them); ``folders``: the digests of folders taken during this batch."""
    paths = [os.path.abspath(os.fspath(path)) for path in model.heavy_inputs(params)]
    if len(paths) != len(digests):
        raise InputDiffers(
            f"model {model.name}: inputs() names {len(paths)} files on this worker where it "
            f"named {len(digests)} when the run was planned: give every worker the same "
            "files and settings (environment variables, working folder) and run again"
        )
    check_each(model.name, paths, digests, folders, "where inputs() names it")


def check_outside_files(
    command: Any, params: Mapping[str, Any], digests: Sequence[str], folders: dict[str, str]
) -> None:
    """For a program's task: raise `InputDiffers` (one line) unless each file its params name
    by absolute path (`outside_values`: read by the program where it runs, never sent) has
    here the digest the plan took."""
    paths = outside_values(command, params)
    if len(paths) != len(digests):
        raise InputDiffers(
            f"model command: the params name {len(paths)} files by absolute path that exist "
            f"on this worker, where {len(digests)} existed when the run was planned: give "
            "every worker the same files and run again"
        )
    check_each("command", paths, digests, folders, "at that path")


def check_each(
    model: str, paths: Sequence[str], digests: Sequence[str], folders: dict[str, str], where: str
) -> None:
    """Raise `InputDiffers` at the first of ``paths`` whose digest here is not its planned one
    (``where``: where a worker should put its copy, as `differs_message` says it)."""
    for path, digest in zip(paths, digests):
        here = digest_here(path, folders)
        if here == digest:
            _AS_PLANNED.add((path, digest))
        elif (path, digest) in _AS_PLANNED:
            raise InputDiffers(changed_message(model, path, here, digest))
        else:
            raise InputDiffers(differs_message(model, path, here, digest, where))


def digest_here(path: str, folders: dict[str, str]) -> str | None:
    """The digest of a file or folder as this worker reads it; None when it is missing."""
    try:
        if os.path.isdir(path):
            if path not in folders:
                folders[path] = folder_digest(Path(path))
            return folders[path]
        stat = os.stat(path)
        key = (path, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        digest = _KNOWN.get(key)
        if digest is None:
            digest = _KNOWN[key] = file_digest(path)
        return digest
    except (OSError, ValueError):
        return None


def changed_message(model: str, path: str, here: str | None, digest: str) -> str:
    """The one line a task fails with when its input, found as planned by an earlier task of
    this worker, differs now: written while the campaign ran."""
    now = "is gone" if here is None else f"is {here[:12]}"
    return (
        f"model {model}: input {path} changed on this worker after an earlier task found it as "
        f"planned (digest {digest[:12]}; it {now}): a task wrote to it, or something else did "
        "while the campaign ran; a file the program writes must not be one the results are "
        "digested from: name it in the task's folder ({dir}/..., or a relative path), then "
        "run again"
    )


def differs_message(
    model: str, path: str, here: str | None, digest: str, where: str = "where inputs() names it"
) -> str:
    """The one line a task fails with when its input here is not the digested one."""
    what = "does not exist" if here is None else f"has other content (digest {here[:12]})"
    return (
        f"model {model}: input {path} {what} on this worker, where the run was planned with "
        f"digest {digest[:12]}: the results would not say what they were computed from; give "
        f"every worker the same file (or copy it {where} there) and run again"
    )
