"""The files of a folder a program or model reads (a folder of configuration files): each one,
so that every file is placed and digested and a change to any of them is seen.

Every file below the folder counts, hidden ones too, links followed (a link back to a folder
already walked is walked once); what cannot be read as a file (a broken link, a pipe, a
folder that cannot be listed) is refused rather than left out, since a file left out would be
a change that no digest sees. Empty folders hold no file and are not counted.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def files_below(folder: Path) -> list[Path]:
    """Every file below ``folder``, sorted by its path relative to it; ``ValueError`` naming
    the first entry that is no readable file."""
    found: list[Path] = []
    walked: set[str] = set()

    def refuse(error: OSError) -> None:
        raise ValueError(f"cannot list {error.filename}: {error.strerror}")

    for root, folders, names in os.walk(folder, onerror=refuse, followlinks=True):
        real = os.path.realpath(root)
        if real in walked:
            folders.clear()
            continue
        walked.add(real)
        for name in names:
            path = Path(root, name)
            try:
                regular = stat.S_ISREG(os.stat(path).st_mode)
            except OSError:
                regular = False
            if not regular:
                what = "a broken link" if path.is_symlink() else "not a regular file"
                raise ValueError(f"{path} is {what}; remove it or move it out of the folder")
            found.append(path)
    return sorted(found, key=lambda path: path.relative_to(folder).as_posix())


def relative_names(folder: Path) -> list[tuple[str, Path]]:
    """(name relative to ``folder``, path) of each of `files_below`."""
    return [(path.relative_to(folder).as_posix(), path) for path in files_below(folder)]
