"""What counts as a model's code: the files whose digests say which stored results a change
of code makes stale (`campaign.plan.sources` digests them).

The rule: a model's code is the package that holds it, with every code file below it (a model
imports its own modules), and what that code imports, followed from file to file: a library
shared by models (a package below ``campaign.models``, such as ``rigid``) and, for a model
outside ``campaign.models``, the modules and packages beside its own that it imports (a
helper next to a model's module). Installed packages (``site-packages``), the standard
library and the engine (``campaign`` outside ``campaign.models``, digested as the engine:
`campaign.plan.sources.engine_files`) are not a model's code. Imports are read from the source
(`ast`), without running anything: an import made at run time by name (``importlib``) is not
followed, and a file that does not parse is digested but not followed.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from functools import lru_cache
from pathlib import Path

from campaign.models import contract, load_model, model_reference
from campaign.models.contract import Model

MODELS_PACKAGE = contract.__name__.rpartition(".")[0]  # campaign.models
MODELS_FOLDER = Path(contract.__file__).resolve().parent
INSTALLED = ("site-packages", "dist-packages")
EXTENSION_SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)
CODE_SUFFIXES = (*importlib.machinery.SOURCE_SUFFIXES, *EXTENSION_SUFFIXES)


def source_files(name: str) -> tuple[Path, list[Path]]:
    """The files of a model's code, and the folder their names are taken relative to.

    A model's code is the whole package that holds it, since a model imports its own
    modules: for a model of this package, its package below ``campaign.models`` (or its one
    module there); for another, the outermost regular package of its module (every code file
    below it), or the module alone when it is not in one. What this code imports, directly
    or through each other, is part of it too: libraries shared by models (packages below
    ``campaign.models`` such as ``rigid``, named relative to ``campaign/models``) and, for
    another model, the modules and packages beside it (a helper module next to a model's
    module), unless they are installed ones (``site-packages``). The model is loaded first
    (its import errors are one ``ValueError``).
    """
    current_model(name)
    return module_files(model_reference(name).partition(":")[0])


# per model module this process imported (the tool's own aside): its code files, each with
# its identity when imported
_IMPORTED: dict[str, tuple[tuple[Path, tuple[int, ...]], ...]] = {}


def current_model(name: str) -> Model:
    """The model a spec names (`load_model`), its module imported afresh when a file of its
    code changed since this process imported it: one Python session runs the model, checks
    its params and names its inputs as its files are now, which its digest is read from (a
    model edited between two runs of one session would otherwise be checked and declared by
    its old code under its new code's digest). A module imported before (by the user, or
    not through here) is imported afresh once, as when it was imported is not known."""
    module_name = model_reference(name).partition(":")[0]
    kept = _never_forgotten(module_name)
    if not kept and _changed(module_name):
        forget_loaded(module_name)
    model = load_model(name)
    if not kept and module_name not in _IMPORTED:
        files = module_files(module_name)[1]
        _IMPORTED[module_name] = tuple((path, _stamp(path)) for path in files)
    return model


def _never_forgotten(module_name: str) -> bool:
    """The tool's own modules (never a user's code), the main module (a script's or a
    notebook's, which no import can run again: dropped, the session would lose it) and the
    standard library's (a parser such as ``json:loads`` is no code of the user's, and its
    modules are everyone's: dropped, the session loses ``warnings`` and the like)."""
    top = module_name.partition(".")[0]
    return (
        module_name in ("campaign", "__main__")
        or module_name.startswith("campaign.")
        or top in sys.stdlib_module_names
    )


def _changed(module_name: str) -> bool:
    """Whether a loaded module's code may differ from its files (see `current_model`)."""
    if module_name not in sys.modules:
        _IMPORTED.pop(module_name, None)
        return False
    known = _IMPORTED.get(module_name)
    return known is None or any(_stamp(path) != stamp for path, stamp in known)


def _stamp(path: Path) -> tuple[int, bytes] | tuple[()]:
    """A file's content, as its size and digest: an edit within one tick of the file
    system's clock leaves the modification time as it was (a model file written twice
    in a few milliseconds, by a script or a test)."""
    try:
        content = path.read_bytes()
    except OSError:
        return ()
    return (len(content), hashlib.blake2b(content, digest_size=16).digest())


def forget_loaded(module_name: str) -> None:
    """Drop from ``sys.modules`` a module and those of the files its digest covers, as an
    earlier call in this process imported them, so that the next import reads their files
    as they are now (a model's, `current_model`; a metrics parser's,
    `campaign.results.parser_code`); never the tool's own nor the main module
    (`_never_forgotten`)."""
    _IMPORTED.pop(module_name, None)
    if module_name not in sys.modules or _never_forgotten(module_name):
        return
    _, files = module_files(module_name)
    paths = {path.resolve() for path in files}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        if _never_forgotten(name) or file.endswith(EXTENSION_SUFFIXES):
            continue  # a compiled module cannot be loaded twice (PyO3's refuse to)
        if name == module_name or (file and Path(file).resolve() in paths):
            del sys.modules[name]
    for path in paths:
        _forget_bytecode(path)
    importlib.invalidate_caches()


def _forget_bytecode(path: Path) -> None:
    """Remove a source file's cached bytecode: Python takes it as current while the source's
    size and modification time in whole seconds match, so an edit of the same size within
    the second would import the old code again."""
    if path.suffix not in importlib.machinery.SOURCE_SUFFIXES:
        return
    try:
        Path(importlib.util.cache_from_source(str(path))).unlink(missing_ok=True)
    except (OSError, NotImplementedError, ValueError):
        pass  # no cache for it (a read-only folder: then none was written either)


def module_files(module_name: str) -> tuple[Path, list[Path]]:
    """The files of the code of an imported module, as `source_files` finds a model's (a
    metrics parser's code too, which is no model: `campaign.results.metric_parsers`)."""
    parts = module_name.split(".")
    builtin = module_name.startswith(f"{MODELS_PACKAGE}.")
    for end in range(3 if builtin else 1, len(parts) + 1):
        module = sys.modules[".".join(parts[:end])]
        file = getattr(module, "__file__", None)
        if file is None:
            continue  # a namespace package: look further down
        if hasattr(module, "__path__"):
            folder = Path(file).parent
            return folder.parent, with_imports(code_files_below(folder), folder.parent, builtin)
        return Path(file).parent, with_imports([Path(file)], Path(file).parent, builtin)
    return Path.cwd(), []


def code_name(path: Path, folder: Path) -> str:
    """A code file's name: relative to the model's folder, or for a library of
    ``campaign.models`` outside it, relative to the folder that holds ``campaign``."""
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return path.relative_to(MODELS_FOLDER.parent.parent).as_posix()


def code_files_below(folder: Path) -> list[Path]:
    files = []
    for root, folders, names in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith((".", "__pycache__")))
        files += [Path(root) / n for n in sorted(names) if n.endswith(CODE_SUFFIXES)]
    return files


def with_imports(files: list[Path], root: Path, builtin: bool) -> list[Path]:
    """The files, and those of the libraries they import, each library once."""
    beside = None if builtin or root.name in INSTALLED else root
    files = list(files)
    seen = {path.resolve() for path in files}
    pending = list(files)
    while pending:
        for library in imported_libraries(pending.pop(), beside):
            for path in code_files_below(library) if library.is_dir() else [library]:
                if path.resolve() not in seen:
                    seen.add(path.resolve())
                    files.append(path)
                    pending.append(path)
    return files


def imported_libraries(path: Path, beside: Path | None) -> set[Path]:
    """What a code file imports that is model code: packages below ``campaign.models`` and,
    with ``beside``, the modules (files) and packages (folders) in that folder."""
    prefix = MODELS_PACKAGE.split(".")
    libraries = set()
    for name in imported_names(path):
        parts = name.split(".")
        if parts[: len(prefix)] == prefix and len(parts) > len(prefix):
            package = MODELS_FOLDER / parts[len(prefix)]
            if (package / "__init__.py").is_file():
                libraries.add(package)
        elif beside is not None and parts[0]:
            if (beside / parts[0] / "__init__.py").is_file():
                libraries.add(beside / parts[0])
            elif (beside / f"{parts[0]}.py").is_file():
                libraries.add(beside / f"{parts[0]}.py")
    return libraries


def imported_names(path: Path) -> list[str]:
    """The absolute names of the modules a code file imports, as far as they can be told
    (parsed once per content: a model's files are read at every plan, run and worker)."""
    if path.suffix != ".py":
        return []
    try:
        content = path.read_bytes()
    except OSError:
        return []
    return list(_imported_names(content, path.resolve()))


@lru_cache(maxsize=4096)
def _imported_names(content: bytes, path: Path) -> tuple[str, ...]:
    try:
        tree = ast.parse(content, filename=str(path))
    except (SyntaxError, ValueError):
        return ()  # its digest still says when it changes
    try:
        relative = path.relative_to(MODELS_FOLDER)
        here = [*MODELS_PACKAGE.split("."), *relative.parent.parts]
    except ValueError:
        here = None  # outside campaign.models: its relative imports stay in its own package
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            elif here is None or node.level - 1 > len(here):
                continue
            else:
                kept = here[: len(here) - (node.level - 1)]
                base = ".".join([*kept, *([node.module] if node.module else [])])
            names += [base] + [f"{base}.{alias.name}" for alias in node.names]
    return tuple(names)
