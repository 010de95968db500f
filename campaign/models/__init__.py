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


def model_reference(name: str) -> str:
    """Return the ``module:function`` reference of a built-in name or of a reference itself."""
    if name in BUILTIN_MODELS:
        return BUILTIN_MODELS[name]
    if ":" in name:
        return name
    raise ValueError(
        f"unknown model {name!r}: use a built-in name ({', '.join(sorted(BUILTIN_MODELS))}) "
        "or 'package.module:function'"
    )


def load_model(name: str) -> ModelFunction:
    """Import and return the model function named by a built-in name or a reference."""
    reference = model_reference(name)
    module_name, _, function_name = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"model {name!r}: cannot import module {module_name!r} ({error})"
        ) from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ValueError(
            f"model {name!r}: module {module_name!r} has no function {function_name!r}"
        )
    return function
