"""Which of a finished task's outputs are kept: its stdout and stderr and the files of its folder
that the model's ``keep:`` patterns name, under the names they are stored by.

- A pattern is a shell glob over paths relative to the task's folder: ``*``, ``?`` and
  ``[...]`` stay within one path segment (``*.csv`` is a file at the top of the folder,
  ``out/*.csv`` one in ``out/``); ``**`` as a whole segment spans any number of folders
  (``**/*.csv`` at any depth, the top included). ``stdout`` and ``stderr`` are the streams
  (``*`` matches them too); a file of the folder by those names is not kept (it would be one
  file with the stream wherever the outputs are laid out as a folder).
- The inputs placed in the folder (the program too, when it travels with them) and the links
  to the streams a metrics parser is given are never kept: they are the campaign's own files.
  A file the program wrote over an input's name is its own, and kept.
- A symbolic link is kept as the file it points to when that file is inside the task's folder;
  one pointing outside is not kept, and the task says so (``refused``).
- A name that is not UTF-8 is stored with each byte that is not as ``%XX`` (``r\\xe9sum\\xe9.csv``
  as ``r%E9sum%E9.csv``), and a backslash as ``%5C``: a zip archive holds UTF-8 names, and
  the name must mean the same file wherever it is extracted. Patterns match the stored name.
- A pattern that matches nothing is noted (``unmatched``), so that a misspelt pattern shows.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

STREAMS = ("stdout", "stderr")
FILES_PREFIX = "files/"
LINK_OUTSIDE = "a link to a file outside the task's folder"
LINK_NOWHERE = "a link to no file"
STREAM_NAME = "a file named like the stream: rename it"
CLASH = "two files of the task's folder would be stored under this name"


@dataclass
class Selection:
    """The outputs a task keeps (name -> file on the worker), what its patterns left out."""

    paths: dict[str, Path] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)  # patterns that matched nothing
    refused: dict[str, str] = field(default_factory=dict)  # name -> why it is not kept

    def notes(self) -> dict[str, object]:
        """What the task's record says of its patterns (nothing when all went as written)."""
        notes: dict[str, object] = {}
        if self.unmatched:
            notes["keep_unmatched"] = list(self.unmatched)
        if self.refused:
            notes["keep_refused"] = dict(self.refused)
        return notes


def select(
    patterns: Iterable[str],
    folder: Path,
    streams: Mapping[str, Path],
    placed: Iterable[tuple[int, int]] = (),
) -> Selection:
    """The outputs ``patterns`` keep of a task whose folder is ``folder`` and whose stdout and
    stderr are the files ``streams``; ``placed``: the (device, inode) of the files placed in
    the folder (inputs, templates), never kept."""
    patterns = tuple(patterns)
    selection = Selection()
    if not patterns:
        return selection
    compiled = [(pattern, glob_regex(pattern)) for pattern in patterns]
    matched: set[str] = set()
    skip = {*placed, *(identity(path) for path in streams.values())}
    files = folder_files(folder, skip)
    named = Counter(relative for relative, _ in files)
    candidates = [(relative, FILES_PREFIX + relative, path) for relative, path in files]
    candidates += [(name, name, Path(streams[name])) for name in STREAMS if name in streams]
    for relative, name, path in sorted(candidates):
        hits = [pattern for pattern, regex in compiled if regex.fullmatch(relative)]
        if not hits:
            continue
        matched.update(hits)
        clash = name.startswith(FILES_PREFIX) and named[relative] > 1
        why = CLASH if clash else refusal(relative, name, path, folder)
        if why is not None:
            selection.refused[name] = why
            continue
        selection.paths[name] = path
    selection.unmatched = [pattern for pattern in patterns if pattern not in matched]
    return selection


def refusal(relative: str, name: str, path: Path, folder: Path) -> str | None:
    """Why a file a pattern names is not kept (None: it is)."""
    if name.startswith(FILES_PREFIX) and relative in STREAMS:
        return STREAM_NAME
    if path.is_symlink():
        target = os.path.realpath(path)
        if not Path(target).is_relative_to(os.path.realpath(folder)):
            return LINK_OUTSIDE
        if not os.path.isfile(target):
            return LINK_NOWHERE
    return None


def folder_files(folder: Path, skip: set[tuple[int, int]]) -> list[tuple[str, Path]]:
    """The files of a task's folder, each as (stored name, path), those whose identity is in
    ``skip`` left out; links to folders are not followed (a loop, a folder outside)."""
    found = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(path)
                    continue
                if entry.is_symlink():
                    if os.path.isdir(path):
                        continue  # a link to a folder: its files are kept by their own paths
                elif not entry.is_file(follow_symlinks=False):
                    continue  # a socket, a pipe: not a file to keep
                if identity(path) in skip:
                    continue  # an input, or a link to one
            except OSError:
                continue
            found.append((stored_name(path.relative_to(folder).as_posix()), path))
    return found


def identity(path: Path | str) -> tuple[int, int]:
    """A file's (device, inode), a link's of its target: the same file under any name."""
    try:
        stat = os.stat(path)
    except OSError:
        return (-1, -1)
    return (stat.st_dev, stat.st_ino)


def stored_name(relative: str) -> str:
    """The name a file is stored under: its path's UTF-8 as it is, each byte that is not
    UTF-8 as ``%XX`` and a backslash as ``%5C`` (see the module's doc)."""
    raw = os.fsencode(relative)
    parts = []
    while raw:
        try:
            parts.append(raw.decode("utf-8"))
            break
        except UnicodeDecodeError as error:
            parts.append(raw[: error.start].decode("utf-8"))
            parts.append("".join(f"%{byte:02X}" for byte in raw[error.start : error.end]))
            raw = raw[error.end :]
    return "".join(parts).replace("\\", "%5C")


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A shell glob over a relative path as a regular expression (see the module's doc)."""
    segments = pattern.split("/")
    regex = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            regex.append(".*" if last else "(?:[^/]+/)*")
        else:
            regex.append(segment_regex(segment) + ("" if last else "/"))
    return re.compile("".join(regex), re.DOTALL)


def segment_regex(segment: str) -> str:
    """One path segment of a glob: ``*``, ``?`` and ``[...]`` never match a ``/``."""
    regex, at = [], 0
    while at < len(segment):
        char = segment[at]
        at += 1
        if char == "*":
            regex.append("[^/]*")
        elif char == "?":
            regex.append("[^/]")
        elif char == "[":
            end = class_end(segment, at)
            if end is None:
                regex.append(re.escape(char))
                continue
            inside = segment[at:end]
            negated = inside[:1] in ("!", "^")
            body = inside[1:] if negated else inside
            body = body.replace("\\", "\\\\").replace("[", "\\[")
            regex.append(f"(?!/)[{'^' if negated else ''}{body}]")
            at = end + 1
        else:
            regex.append(re.escape(char))
    return "".join(regex)


def class_end(segment: str, at: int) -> int | None:
    """Where the ``]`` closing a character class that opens before ``at`` stands (None: it
    is not closed, so the ``[`` is a plain character); a ``]`` first in the class is one of
    its characters."""
    if at < len(segment) and segment[at] in "!^":
        at += 1
    if at < len(segment) and segment[at] == "]":
        at += 1
    end = segment.find("]", at)
    return end if end >= 0 else None
