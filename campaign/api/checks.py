"""The Python API's arguments, checked at the top of each function of `campaign.api`.

A wrong type (``workers='2'``, ``metrics=5``) would otherwise surface as a ``TypeError`` from
deep inside a library, far from the call that caused it. Each function of the API declares a
check per parameter (`checked`); the first argument that fails is one `ParameterError`
naming the parameter, what was given and what is allowed, before anything is read or run.
A keyword the function does not take is refused the same way, with the ones it takes.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping
from numbers import Integral, Real
from typing import Any

from campaign.errors import ParameterError

Check = Callable[[Any, str], Any]

SHOWN = 60  # characters of a refused value shown


def refused(parameter: str, allowed: str, value: Any) -> ParameterError:
    text = repr(value)
    text = text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."
    return ParameterError(
        f"{{{parameter}}} must be {allowed}, got {type(value).__name__} {text}", parameter
    )


def must(parameter: str, problem: str) -> ParameterError:
    """``{parameter} must be PROBLEM``: what a value of that parameter must be."""
    return ParameterError(f"{{{parameter}}} must be {problem}", parameter)


def spec(value: Any, parameter: str) -> Any:
    """A `Spec` from a spec file's path, an output folder, a dict (a spec file's keys) or a
    `Spec` (`campaign.plan.target`)."""
    from campaign.plan.target import campaign_spec

    return campaign_spec(value, parameter=parameter)


def no_pivot(pivot: Any, what: str) -> None:
    """Refuse a ``pivot`` given for a table that has none to put across."""
    if pivot is not None:
        raise ParameterError(f"{{pivot}} is for query and compare tables, not {what}", "pivot")


def whole(minimum: int, optional: bool = True) -> Check:
    """A whole number >= ``minimum`` (None too when ``optional``)."""

    def check(value: Any, parameter: str) -> Any:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, Integral):
            alternative = " or None" if optional else ""
            raise refused(parameter, f"a whole number >= {minimum}{alternative}", value)
        if value < minimum:  # as the command line says it: --workers 0 must be >= 1
            raise ParameterError(f"{{{parameter}}} {value} must be >= {minimum}", parameter)
        return int(value)

    return check


def number(allowed: str, test: Callable[[float], bool], optional: bool = True) -> Check:
    """A real number that passes ``test`` (``allowed`` says which), or None when ``optional``."""

    def check(value: Any, parameter: str) -> Any:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, Real):
            raise refused(parameter, allowed + (" or None" if optional else ""), value)
        if not test(float(value)):  # as a command line says it too: --task-timeout 0 must be
            raise ParameterError(f"{{{parameter}}} {float(value):g} must be {allowed}", parameter)
        return float(value)

    return check


def level(value: Any, parameter: str) -> Any:
    """A confidence level: between 0 and 1, or None (the results' own)."""
    number("a number between 0 and 1", lambda x: True)(value, parameter)
    if value is not None and not 0 < value < 1:
        raise ParameterError(
            f"{{{parameter}}} {float(value)} is not allowed; use a number between 0 and 1 "
            "(exclusive), such as 0.95",
            parameter,
        )
    return None if value is None else float(value)


def flag(value: Any, parameter: str) -> bool:
    if not isinstance(value, bool):
        raise refused(parameter, "True or False", value)
    return value


def optional_flag(value: Any, parameter: str) -> bool | None:
    """True, False or None (the default decides)."""
    return None if value is None else flag(value, parameter)


def text(value: Any, parameter: str) -> Any:
    """A string, or None."""
    if value is not None and not isinstance(value, str):
        raise refused(parameter, "a string or None", value)
    return value


def required_text(value: Any, parameter: str) -> str:
    if not isinstance(value, str):
        raise refused(parameter, "a string", value)
    return value


def path(value: Any, parameter: str) -> Any:
    """A file or folder path (a string or a `pathlib.Path`), or None."""
    if value is not None and not isinstance(value, str | os.PathLike):
        raise refused(parameter, "a path (a string or a pathlib.Path) or None", value)
    return value


def required_path(value: Any, parameter: str) -> Any:
    if not isinstance(value, str | os.PathLike):
        raise refused(parameter, "a path (a string or a pathlib.Path)", value)
    return value


def paths(value: Any, parameter: str) -> list[Any]:
    """A list of paths (a single path is refused: a string is no list of folders)."""
    if isinstance(value, str | os.PathLike | bytes) or not _iterable(value):
        raise refused(parameter, "a list of paths", value)
    listed = list(value)
    for item in listed:
        required_path(item, parameter)
    return listed


def names(value: Any, parameter: str) -> list[str] | None:
    """A name or a list of distinct names, as a list (None stays None)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not _iterable(value) or isinstance(value, Mapping | bytes):
        raise refused(parameter, "a name or a list of names", value)
    listed = list(value)
    if not all(isinstance(item, str) for item in listed):
        raise refused(parameter, "a name or a list of names (strings)", value)
    twice = next((item for i, item in enumerate(listed) if item in listed[:i]), None)
    if twice is not None:
        raise ParameterError(
            f"{{{parameter}}} names {twice!r} twice; give each name once", parameter
        )
    return listed


def some_names(value: Any, parameter: str) -> list[str] | None:
    """As `names`, at least one: an empty list is no choice of metrics (None is the default)."""
    listed = names(value, parameter)
    if listed == []:
        raise ParameterError(
            f"{{{parameter}}} must name at least one metric (None: the default metrics), got "
            f"{type(value).__name__} {value!r}",
            parameter,
        )
    return listed


def where(value: Any, parameter: str) -> Any:
    """Levels to keep: ``{factor: level or [levels]}``, or ``"F=LEVEL"`` texts (one text is
    one condition), or None."""
    if value is None or isinstance(value, Mapping):
        return value
    if isinstance(value, str):
        return [value]
    if _iterable(value) and all(isinstance(item, str) for item in value):
        return list(value)
    raise refused(parameter, "a dict {factor: level or [levels]}, 'F=LEVEL' texts or None", value)


def results(value: Any, parameter: str) -> Any:
    """A results Dataset, or a results file or its folder."""
    if hasattr(value, "data_vars") or isinstance(value, str | os.PathLike):
        return value
    raise refused(parameter, "an xarray Dataset, a results file or its folder", value)


def one_of(*allowed: Any) -> Check:
    def check(value: Any, parameter: str) -> Any:
        if not isinstance(value, str) or value not in allowed:
            raise refused(parameter, f"one of {', '.join(map(repr, allowed))}", value)
        return value

    return check


def size(value: Any, parameter: str) -> Any:
    """A figure's size: a name (``column``, ``page``), ``"WxH"``, or (width, height) inches."""
    if isinstance(value, str):
        return value
    pair = _iterable(value) and not isinstance(value, Mapping | bytes) and list(value)
    if pair and len(pair) == 2 and all(_positive(side) for side in pair):
        return tuple(float(side) for side in pair)
    raise refused(parameter, "'column', 'page', 'WxH' or (width, height) in inches", value)


def _positive(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and value > 0


def facet(value: Any, parameter: str) -> Any:
    """A figure's facet factor: a name, None (chosen when averaging could mislead) or False."""
    if value is not None and value is not False and not isinstance(value, str):
        raise refused(parameter, "a factor's name, None or False", value)
    return value


def shard(value: Any, parameter: str) -> Any:
    """``"I/N"``, a `campaign.design.shards.Shard`, or None (parsed where it is used)."""
    from campaign.design.shards import Shard

    if value is not None and not isinstance(value, str | Shard):
        raise refused(parameter, "'I/N' (such as '1/3'), a Shard or None", value)
    return value


def function(value: Any, parameter: str) -> Any:
    if value is not None and not callable(value):
        raise refused(parameter, "a function or None", value)
    return value


def anything(value: Any, parameter: str) -> Any:
    return value


def checked(
    options: Mapping[str, Check] | None = None, **checks: Check
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Check each argument of the decorated function by its parameter's name (``options``,
    else ``checks``, else `BY_NAME`); the keywords of its ``**options`` by ``options``, one not
    named there refused with those allowed."""
    checks = {**BY_NAME, **checks}

    def decorate(wrapped: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(wrapped)
        var_keyword = next(
            (p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None
        )
        own = [name for name in signature.parameters if name != var_keyword]
        allowed = {k: c for k, c in (options or {}).items() if k not in own}

        @functools.wraps(wrapped)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                named = ", ".join([*own, *sorted(allowed)])
                raise ParameterError(
                    f"{wrapped.__name__}: {error}; its parameters: {named}"
                ) from None
            for name, value in list(bound.arguments.items()):
                if name == var_keyword:
                    bound.arguments[name] = {
                        key: _option(wrapped.__name__, key, given, allowed)
                        for key, given in value.items()
                    }
                elif name in checks or name in (options or {}):  # ``options`` first
                    check = (options or {}).get(name) or checks[name]
                    bound.arguments[name] = check(value, name)
            return wrapped(*bound.args, **bound.kwargs)

        return call

    return decorate


def _option(function_name: str, key: str, value: Any, allowed: Mapping[str, Check]) -> Any:
    if key not in allowed:
        named = ", ".join(sorted(allowed))
        raise ParameterError(
            f"{{{key}}} is not an option of {function_name}; its options: {named}", key
        )
    return allowed[key](value, key)


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


POSITIVE = number("a number > 0", lambda x: x > 0)
SECONDS_OR_INFINITE = number("a number of seconds >= 0 (math.inf: no limit)", lambda x: x >= 0)

BY_NAME: dict[str, Check] = {
    "results": results,
    "metrics": some_names,
    "by": names,
    "where": where,
    "confidence": level,
    "pivot": text,
    "factor": required_text,
    "metric": required_text,
    "output": path,
    "out": path,
    "shard": shard,
    "on_change": one_of("refuse", "rerun", "accept"),
    "fmt": text,
    "name": text,
    "workers": whole(1),
    "scheduler": text,
    "figures": flag,
}
"""What the API's parameters of these names allow, whichever function takes them."""

RUN_OPTIONS: dict[str, Check] = {
    "workers": whole(1),
    "scheduler": text,
    "cluster": path,
    "security": path,
    "retries": whole(0, optional=False),
    "task_timeout": POSITIVE,
    "wait_workers": SECONDS_OR_INFINITE,
    "confidence": level,
    "new": flag,
    "progress": flag,
    "say": function,
    "replicate_tail": flag,
    "locality": flag,
    "keep_going": flag,
    "on_change": one_of("refuse", "rerun", "accept"),
    "shard": shard,
    "output": path,
    "batch_size": whole(1),
    "where": where,
}
"""`campaign.run`'s options (`campaign.pipelines.run.run`'s parameters) and what each allows."""

ESTIMATE_OPTIONS: dict[str, Check] = {
    "replicates": whole(1, optional=False),
    "target_hours": number("a number of hours > 0", lambda x: x > 0, optional=False),
    "job_cores": whole(1, optional=False),
    **{name: RUN_OPTIONS[name] for name in ("workers", "scheduler", "on_change", "say")},
}
"""`campaign.estimate`'s parameters: the pilot's, and the options of the run it makes."""

PLOT_OPTIONS: dict[str, Check] = {
    "kind": required_text,
    "out": path,
    "x": text,
    "by": text,
    "facet": facet,
    "where": where,
    "baseline": anything,
    "confidence": level,
    "log": required_text,
    "size": size,
    "style": required_text,
    "formula": flag,
    "title": flag,
}
"""`campaign.plot`'s options (`campaign.render.figures.plot`'s parameters) and ``out``."""

COMPARE_OPTIONS: dict[str, Check] = {
    "by": names,
    "where": where,
    "confidence": level,
    "paired": optional_flag,
    "pivot": text,
}
SENSITIVITY_OPTIONS: dict[str, Check] = {
    "method": text,
    "where": where,
    "confidence": level,
    "resamples": whole(10),  # fewer make no bootstrap interval; None: the method's default
    "transform": text,
}
