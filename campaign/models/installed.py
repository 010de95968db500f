"""The models that installed packages declare (entry points of a group), read once in a
process and again only when what `importlib.metadata` reads changes: a scan of every
installed distribution takes milliseconds, and `validate`, `plan` and a run ask for the
models several times each. A package installed, removed or edited during a long session (a
notebook) is seen at the next call: its folder on ``sys.path``, or its ``entry_points.txt``,
changed."""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points

_FOUND: dict[str, tuple[tuple, dict[str, str]]] = {}  # group -> (metadata_state, found)
METADATA = (".dist-info", ".egg-info")


def declared(group: str) -> dict[str, str]:
    """The entry points of ``group`` of the installed distributions: name -> value."""
    state = metadata_state()
    cached = _FOUND.get(group)
    if cached is None or cached[0] != state:
        cached = _FOUND[group] = (state, {ep.name: ep.value for ep in entry_points(group=group)})
    return dict(cached[1])


def metadata_state() -> tuple:
    """What a scan of the installed distributions depends on: the folders of ``sys.path``
    (as the working folder now resolves them), the modification time of each (a
    distribution installed or removed there changes it) and of the ``entry_points.txt`` of
    each distribution in them."""
    state: list[object] = []
    for entry in sys.path:
        folder = os.path.abspath(entry or ".")
        try:
            state.append((folder, os.stat(folder).st_mtime_ns))
            found = os.scandir(folder) if os.path.isdir(folder) else None
        except OSError:
            state.append((folder, None))
            continue
        if found is None:
            continue
        with found:
            for item in found:
                if item.name.endswith(METADATA):
                    state.append(_mtime(os.path.join(item.path, "entry_points.txt")))
    return tuple(state)


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
