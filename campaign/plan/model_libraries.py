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

import hashlib
import importlib.metadata
import importlib.util
import sys
from pathlib import Path

from campaign.plan.model_code import code_files_below, imported_names, source_files
from campaign.plan.runtime import digest

ENGINE_PACKAGE = "campaign"


def model_libraries(model_name: str, skipped: tuple[str, ...] = ()) -> dict[str, str]:
    """Import name -> how it is here ("1.0", or "code 1a2b3c4d5e6f7a8b" for files that no
    installed distribution holds, "not installed"), for each library the code of
    ``model_name`` imports, less those named in ``skipped`` (the numeric libraries, which
    the engine's identity names)."""
    _, files = source_files(model_name)
    own = {path.resolve() for path in files}
    names = {name.partition(".")[0] for path in files for name in imported_names(path)}
    libraries = {}
    distributions = importlib.metadata.packages_distributions()
    for name in sorted(names):
        if not name or name in skipped or _not_a_library(name):
            continue
        described = _described(name, own, distributions.get(name, []))
        if described is not None:
            libraries[name] = described
    return libraries


def _not_a_library(name: str) -> bool:
    return name == ENGINE_PACKAGE or name in sys.stdlib_module_names


def _described(name: str, own: set[Path], distributions: list[str]) -> str | None:
    """How library ``name`` is here; None for the model's own code (a module beside it)."""
    origin = _origin(name)
    if origin is None:
        return "not installed"
    if origin in own:
        return None
    folder = origin.parent if origin.name.startswith("__init__.") else None
    for distribution in distributions:
        try:
            found = importlib.metadata.distribution(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
        if origin.is_relative_to(Path(found.locate_file("")).resolve()):
            return found.version
    files = code_files_below(folder) if folder is not None else [origin]
    text = "".join(f"{path.relative_to(origin.parent)}\0{digest(str(path))}\n" for path in files)
    return "code " + hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _origin(name: str) -> Path | None:
    """The file a top-level module is loaded from (its ``__init__`` for a package), as this
    process imported it, else as it would; None when there is none (not installed, or a
    namespace package)."""
    module = sys.modules.get(name)
    file = getattr(module, "__file__", None) if module is not None else None
    if file is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        file = spec.origin if spec is not None and spec.has_location else None
    return Path(file).resolve() if file else None
