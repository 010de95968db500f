"""Simulation models and the registry of built-in model names.

A model is a plain picklable function ``run(params, seed) -> {metric: float}`` (see DESIGN.md).
It may carry optional attributes that the engine uses without knowing the model:

- ``run.metrics``: ``{name: {"units": str, "long_name": str}}``; a name may contain ``{k}``
  for per-entity metrics (``makespan_job{k}`` documents ``makespan_job1``, ``makespan_job2``...).
- ``run.check(params)``: raises ``ValueError`` naming a bad or missing parameter, so a spec can
  be refused before anything runs.
- ``run.inputs(params)``: identifiers of the heavy inputs a run reads (trace files), so that
  runs sharing them are batched together and sent where the inputs are already loaded.

Built-in models are named here; a user's own model is written ``package.module:function``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping

ModelFunction = Callable[[Mapping[str, object], int], Mapping[str, float]]

BUILTIN_MODELS: dict[str, str] = {
    "mm1": "campaign.models.check:mm1",
    "busy": "campaign.models.check:busy",
    "jobs": "campaign.models.jobs:run",
    "grid": "campaign.models.jobs.grid:run",
    "bot": "campaign.models.bot:run",
    "ownership": "campaign.models.ownership:run",
}


REFERENCE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


def model_reference(name: str) -> str:
    """Return the ``module:function`` reference of a built-in name or of a reference itself."""
    if name in BUILTIN_MODELS:
        return BUILTIN_MODELS[name]
    if REFERENCE.fullmatch(name):
        return name
    raise ValueError(
        f"unknown model {name!r}: use a built-in name ({', '.join(sorted(BUILTIN_MODELS))}) "
        "or 'package.module:function'"
    )


def load_model(name: str) -> ModelFunction:
    """Import and return the model function named by a built-in name or a reference.

    Whatever goes wrong while importing the model's module (a missing module, a syntax error,
    an exception its top level raises, even ``sys.exit``) becomes one ``ValueError`` naming
    the model and the error, so that users see one line rather than a traceback.
    """
    reference = model_reference(name)
    module_name, _, function_name = reference.partition(":")
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
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ValueError(
            f"model {name!r}: module {module_name!r} has no function {function_name!r}"
        )
    return function


def check_params(model: ModelFunction, name: str, params: Mapping[str, object]) -> None:
    """Let a model refuse bad parameters through its optional ``check``.

    A ``ValueError`` is the model's answer about the parameters and passes through; any other
    exception is a fault of ``check`` itself and becomes a ``ValueError`` naming the model.
    """
    check = getattr(model, "check", None)
    if check is None:
        return
    try:
        check(params)
    except ValueError:
        raise
    except (Exception, SystemExit) as error:
        raise ValueError(f"model {name!r}: check() failed: {describe_error(error)}") from None


def describe_error(error: BaseException) -> str:
    """An exception as one line: its type and its message, where it happened for syntax errors."""
    if isinstance(error, SyntaxError) and error.filename:
        text = f"{error.msg} ({error.filename}, line {error.lineno})"
    elif isinstance(error, SystemExit):
        text = f"sys.exit({error.code!r}) called"
    else:
        text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
