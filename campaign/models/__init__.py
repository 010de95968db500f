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

import importlib
import re

from campaign.models import installed
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

CHECK_MODELS = ("mm1", "busy", "normal")
"""Models with known answers that test the engine and benchmark it (`campaign.models.check`):
registered like any model, so a spec or a benchmark names them, but not listed among the
models of the domain by `campaign models`."""

REFERENCE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


def registered() -> dict[str, str]:
    """Every registered model name and the ``module:attribute`` it refers to, by name."""
    found = installed.declared(GROUP)  # read again only when the installed packages change
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
