"""The registry of models: every model is found through the ``campaign.models`` entry points.

A package makes its models known in its metadata, and ``model: their_name`` then works in a
spec with nothing else to change::

    [project.entry-points."campaign.models"]
    their_name = "their_package.module:MODEL"     # a `campaign.models.contract.Model`

This package registers its own models the same way (pyproject.toml). Its entry points are also
listed in `BUILTIN`, which a test keeps equal to pyproject.toml, so that a checkout whose
installed metadata is older than its code still finds its own models; a built-in name cannot be
taken by another package. For a quick experiment, ``model: package.module:function`` names a
function (or a `Model`) directly; a plain function's optional ``check``, ``metrics`` and
``inputs`` attributes are then its declaration.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import os
import re
import sys
from importlib.metadata import entry_points
from pathlib import Path

from campaign.models.contract import Command, Model

GROUP = "campaign.models"

BUILTIN: dict[str, str] = {
    "mm1": "campaign.models.check:MM1",
    "busy": "campaign.models.check:BUSY",
    "normal": "campaign.models.check:NORMAL",
    "jobs": "campaign.models.jobs:MODEL",
    "grid": "campaign.models.grid:MODEL",
    "bot": "campaign.models.bot:MODEL",
    "ownership": "campaign.models.ownership:MODEL",
}

REFERENCE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


def registered() -> dict[str, str]:
    """Every registered model name and the ``module:attribute`` it refers to, by name."""
    found = {ep.name: ep.value for ep in entry_points(group=GROUP)}
    found.update(BUILTIN)
    return dict(sorted(found.items()))


def model_names() -> list[str]:
    return list(registered())


def model_reference(name: str) -> str:
    """The ``module:attribute`` of a registered name, or a reference itself."""
    models = registered()
    if name in models:
        return models[name]
    if REFERENCE.fullmatch(name):
        return name
    raise ValueError(
        f"unknown model {name!r}: use a registered model ({', '.join(models)}) "
        "or 'package.module:function'"
    )


def load_model(name: str) -> Model:
    """The declaration of the model a spec names (a registered name or a reference).

    Whatever goes wrong while importing the model's module (a missing module, a syntax error,
    an exception its top level raises, even ``sys.exit``) becomes one ``ValueError`` naming
    the model and the error, so that users see one line rather than a traceback.
    """
    reference = model_reference(name)
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name and not module_name.startswith(f"{error.name}."):
            raise ValueError(  # the module exists; something it imports does not
                f"model {name!r}: importing module {module_name!r} failed: {describe_error(error)}"
            ) from None
        raise ValueError(
            f"model {name!r}: cannot import module {module_name!r} ({error}); the module must "
            "be importable where campaign runs (on PYTHONPATH or an installed package)"
        ) from None
    except (Exception, SystemExit) as error:
        raise ValueError(
            f"model {name!r}: importing module {module_name!r} failed: {describe_error(error)}"
        ) from None
    target = getattr(module, attribute, None)
    if isinstance(target, Model):
        return target
    if not callable(target):
        raise ValueError(f"model {name!r}: module {module_name!r} has no function {attribute!r}")
    try:
        return Model.from_function(target, name)
    except (Exception, SystemExit) as error:
        raise ValueError(f"model {name!r}: {describe_error(error)}") from None


CODE_SUFFIXES = (*importlib.machinery.SOURCE_SUFFIXES, *importlib.machinery.EXTENSION_SUFFIXES)


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
    load_model(name)
    module_name = model_reference(name).partition(":")[0]
    parts = module_name.split(".")
    builtin = module_name.startswith(f"{__name__}.")
    for end in range(3 if builtin else 1, len(parts) + 1):
        module = sys.modules[".".join(parts[:end])]
        file = getattr(module, "__file__", None)
        if file is None:
            continue  # a namespace package: look further down
        if hasattr(module, "__path__"):
            folder = Path(file).parent
            return folder.parent, _with_imports(_code_files(folder), folder.parent, builtin)
        return Path(file).parent, _with_imports([Path(file)], Path(file).parent, builtin)
    return Path.cwd(), []


MODELS_FOLDER = Path(__file__).resolve().parent
INSTALLED = ("site-packages", "dist-packages")


def _code_files(folder: Path) -> list[Path]:
    files = []
    for root, folders, names in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith((".", "__pycache__")))
        files += [Path(root) / n for n in sorted(names) if n.endswith(CODE_SUFFIXES)]
    return files


def _with_imports(files: list[Path], root: Path, builtin: bool) -> list[Path]:
    """The files, and those of the libraries they import, each library once."""
    beside = None if builtin or root.name in INSTALLED else root
    files = list(files)
    seen = {path.resolve() for path in files}
    pending = list(files)
    while pending:
        for library in _imported_libraries(pending.pop(), beside):
            for path in _code_files(library) if library.is_dir() else [library]:
                if path.resolve() not in seen:
                    seen.add(path.resolve())
                    files.append(path)
                    pending.append(path)
    return files


def _imported_libraries(path: Path, beside: Path | None) -> set[Path]:
    """What a code file imports that is model code: packages below ``campaign.models`` and,
    with ``beside``, the modules (files) and packages (folders) in that folder."""
    prefix = __name__.split(".")
    libraries = set()
    for name in _imported_names(path):
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


def _imported_names(path: Path) -> list[str]:
    """The absolute names of the modules a code file imports, as far as they can be told."""
    if path.suffix != ".py":
        return []
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return []  # its digest still says when it changes
    try:
        relative = path.resolve().relative_to(MODELS_FOLDER)
        here = [*__name__.split("."), *relative.parent.parts]
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
    return names


def check_params(model: Model, name: str, params: dict) -> None:
    """Let a model refuse bad parameters.

    A ``ValueError`` is the model's answer about the parameters and passes through; any other
    exception is a fault of the model's check itself and becomes a ``ValueError`` naming it.
    """
    try:
        model.check(params)
    except ValueError:
        raise
    except (Exception, SystemExit) as error:
        raise ValueError(f"model {name!r}: check() failed: {describe_error(error)}") from None


def find_command(command: str) -> tuple[str, Command] | None:
    """The model that declares ``command`` and the command, or None; a model that fails to
    load declares nothing here (running it says why)."""
    for name in registered():
        try:
            model = load_model(name)
        except ValueError:
            continue
        for declared in model.commands:
            if declared.name == command:
                return name, declared
    return None


def describe_error(error: BaseException) -> str:
    """An exception as one line: its type and its message, where it happened for syntax errors."""
    if isinstance(error, SyntaxError) and error.filename:
        text = f"{error.msg} ({error.filename}, line {error.lineno})"
    elif isinstance(error, SystemExit):
        text = f"sys.exit({error.code!r}) called"
    else:
        text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
