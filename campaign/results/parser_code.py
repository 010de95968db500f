"""A ``parse:`` metrics parser's code: how its function is loaded, and which files the
digest that remetric records of it covers (`campaign.results.metric_parsers`), so that a
later run refuses a parser whose code changed, a helper module it imports included."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.plan.model_code import code_name, forget_loaded, module_files
from campaign.spec.command_model import MetricsSource


def python_function(source: MetricsSource) -> Callable[..., Any]:
    """The function ``module:function`` names (its module found on PYTHONPATH or in the
    working folder), or one line on why it cannot be loaded."""
    module_name, sep, name = source.name.partition(":")
    if not sep or not module_name or not name:
        raise CampaignError(f"metrics parser {source.name!r}: write module:function")
    importable_here()
    forget_loaded(module_name)
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - any import error is the user's to fix
        missing = isinstance(error, ModuleNotFoundError) and f"{module_name}.".startswith(
            f"{error.name}."
        )
        where = " (in the working folder or on PYTHONPATH)" if missing else ""
        raise CampaignError(
            f"metrics parser {source.name}: cannot import {module_name}{where}: {error}"
        ) from None
    function = getattr(module, name, None)
    if not callable(function):
        raise CampaignError(f"metrics parser {source.name}: {module_name} has no function {name!r}")
    return function


def importable_here() -> None:
    """Put the working folder last on the import path: a parser given to remetric runs in
    this process only (never on a worker), so its module may lie where campaign is run from,
    like a script's; last, so that it never hides an installed module of the same name."""
    try:
        here = os.getcwd()
    except OSError:  # the working folder was removed: nothing to find there
        return
    if not any(os.path.abspath(entry or os.curdir) == here for entry in sys.path):
        sys.path.append(here)


def parser_digest(function: Callable[..., Any], module_name: str) -> str:
    """SHA-256 of a ``parse:`` parser's code, found as a model's (`campaign.plan.model_code`:
    its package, the modules beside it that it imports), so that an edited helper is a
    changed parser too: the file that defines it, then each other file in the order of their
    names (the order they are found in depends on hashing), each after its name and size. A
    parser of one file has the digest of that file alone, as before helpers counted."""
    own = _source_file(function)
    folder, files = module_files(module_name)
    own_path = Path(own).resolve() if own else None
    others = {}
    for path in files:
        if path.resolve() != own_path:
            others[code_name(path, folder)] = path
    data = bytearray(_read(own_path) if own_path else b"")
    for name, path in sorted(others.items()):
        code = _read(path)
        data += b"\0%s\0%d\0" % (name.encode(), len(code)) + code
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def code_digest(*functions: Callable[..., Any]) -> str:
    """SHA-256 of the source files that define ``functions`` (each once, in order): which
    parser the results used."""
    data = b""
    for path in dict.fromkeys(_source_file(function) for function in functions):
        data += _read(Path(path)) if path else b""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _source_file(function: Callable[..., Any]) -> str | None:
    try:
        return inspect.getsourcefile(function)
    except TypeError:
        return None
