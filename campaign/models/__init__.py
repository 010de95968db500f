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
    below it), or the module alone when it is not in one. Libraries shared by models (packages
    below ``campaign.models`` such as ``rigid``) that this code imports, directly or through
    each other, are part of it too: their files are named relative to ``campaign/models``.
    The model is loaded first (its import errors are one ``ValueError``).
    """
    load_model(name)
    module_name = model_reference(name).partition(":")[0]
    parts = module_name.split(".")
    first = 3 if module_name.startswith(f"{__name__}.") else 1
    for end in range(first, len(parts) + 1):
        module = sys.modules[".".join(parts[:end])]
        file = getattr(module, "__file__", None)
        if file is None:
            continue  # a namespace package: look further down
        if hasattr(module, "__path__"):
            folder = Path(file).parent
            return folder.parent, _with_libraries(_code_files(folder))
        return Path(file).parent, _with_libraries([Path(file)])
    return Path.cwd(), []


MODELS_FOLDER = Path(__file__).resolve().parent


def _code_files(folder: Path) -> list[Path]:
    files = []
    for root, folders, names in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith((".", "__pycache__")))
        files += [Path(root) / n for n in sorted(names) if n.endswith(CODE_SUFFIXES)]
    return files


def _with_libraries(files: list[Path]) -> list[Path]:
    """The files, and those of every package below ``campaign.models`` they import."""
    files = list(files)
    seen = {path.resolve() for path in files}
    pending = list(files)
    while pending:
        for package in _imported_packages(pending.pop()):
            for path in _code_files(MODELS_FOLDER / package):
                if path.resolve() not in seen:
                    seen.add(path.resolve())
                    files.append(path)
                    pending.append(path)
    return files


def _imported_packages(path: Path) -> set[str]:
    """The packages directly below ``campaign.models`` a code file imports (by name)."""
    if path.suffix != ".py":
        return set()
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return set()  # its digest still says when it changes
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
    prefix = __name__.split(".")
    packages = set()
    for name in names:
        parts = name.split(".")
        if parts[: len(prefix)] == prefix and len(parts) > len(prefix):
            package = parts[len(prefix)]
            if (MODELS_FOLDER / package / "__init__.py").is_file():
                packages.add(package)
    return packages


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
