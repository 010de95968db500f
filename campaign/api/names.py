"""The names the `campaign` package exports, loaded on first use.

Two of the API's functions share their name with a package of the engine: `campaign.plan`
(the package ``campaign/plan/``) and `campaign.models` (``campaign/models/``, the model
contract and the registry). Python sets a package's attribute to each submodule it imports,
so a run, which imports both packages, would turn ``campaign.plan`` into a module. Instead
the attribute stays one object that is both: called, it is the API's function; its other
attributes are the package's, so that ``campaign.plan(spec)``,
``campaign.models.contract.Model`` and ``import campaign.plan.state as state`` all work,
whichever was imported first.
"""

from __future__ import annotations

import functools
import importlib
import types
from collections.abc import Callable
from typing import Any

SHARED = {"plan": "campaign.plan", "models": "campaign.models"}  # function name: package


class FunctionAndPackage:
    """An API function whose name is also a package's: calling it calls the function (its
    name, docstring and signature are the function's); any other attribute is the
    package's."""

    def __init__(self, function: Callable[..., Any], package: str):
        self._package = package
        functools.update_wrapper(self, function)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # only what the function itself lacks
        if name == "_package":  # not set yet (a copy being made)
            raise AttributeError(name)
        return getattr(importlib.import_module(self._package), name)

    def __repr__(self) -> str:
        return f"<function campaign.{self.__name__}, also the package {self._package}>"


class Package(types.ModuleType):
    """The class of the `campaign` package: the import system's attribute for a submodule
    named like a shared function (`SHARED`) is not set, so the name stays the function
    (whose attributes reach the submodule)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in SHARED and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


def exported(name: str) -> Any:
    """The object `campaign` exports as ``name``: the API's, made a `FunctionAndPackage`
    when it shares its name with a package."""
    value = getattr(importlib.import_module("campaign.api"), name)
    return FunctionAndPackage(value, SHARED[name]) if name in SHARED else value
