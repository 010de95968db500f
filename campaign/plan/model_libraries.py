"""The libraries a Python model's code imports besides its own code, the engine, the standard
library and `campaign.plan.sources.NUMERIC_LIBRARIES`: a simulation library installed with
pip, or a package on PYTHONPATH. Another version of one changes the model's numbers as its code
does, yet neither the model's code digest (`campaign.plan.model_code` does not follow installed
packages) nor the engine's identity names it, so a worker whose environment has another version
(another venv, a PYTHONPATH shadowing the package) would store its numbers beside the others'.

Each is described by the version of the distribution it was installed from, or, when its
files are not that distribution's (a package on PYTHONPATH, an editable install), by a
digest of its code files. Only the libraries the model's files name are looked at, not what
those libraries import in turn.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from campaign.plan.library_probe import describe
from campaign.plan.model_code import imported_names, source_files

ENGINE_PACKAGE = "campaign"


def model_libraries(
    model_name: str, skipped: tuple[str, ...] = (), files: list[Path] | None = None
) -> dict[str, str]:
    """Import name -> how it is here ("1.0", or "code 1a2b3c4d5e6f7a8b" for files that no
    installed distribution holds, "not installed"), for each library the code of
    ``model_name`` (its files ``files``, when known) imports, less those named in ``skipped``
    (the numeric libraries, which the engine's identity names)."""
    if files is None:
        _, files = source_files(model_name)
    own = {str(path.resolve()) for path in files}
    libraries = {}
    for name in imported_libraries(files, skipped):
        described, origin = describe(name)
        if origin not in own:  # not a module beside the model's (its own code)
            libraries[name] = described
    return libraries


def parser_libraries(command: Any) -> dict[str, str]:
    """For a program whose metrics a ``{parse: module:function}`` parser computes, the
    libraries the parser's code imports, as `model_libraries` describes a Python model's
    (numpy's and pandas' too, when it imports them): it computes the metrics in this Python,
    with them, so an upgraded one makes the results stale as a Python model's. Nothing for
    another model; an import error of the parser is one ``ValueError``."""
    metrics = getattr(command, "metrics", None)
    if metrics is None or metrics.kind != "parse":
        return {}
    return model_libraries(metrics.name)


def imported_libraries(files: list[Path], skipped: tuple[str, ...] = ()) -> list[str]:
    """The top-level names the code files import, less the standard library's, the engine's
    and ``skipped``."""
    names = {name.partition(".")[0] for path in files for name in imported_names(path)}
    return sorted(
        name
        for name in names
        if name
        and name not in skipped
        and name != ENGINE_PACKAGE
        and name not in sys.stdlib_module_names
    )
