"""How the Python API (`campaign`) takes its arguments: a name or a list of names, the
factor a table puts across, and errors that name the function's parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _metrics_of(dataset) -> list[str]:
    from campaign.results.assemble import metrics_of

    return metrics_of(dataset)


def _names(names: str | Sequence[str] | None) -> list[str] | None:
    """A name or a list of names as a list (None stays None)."""
    if names is None:
        return None
    return [names] if isinstance(names, str) else list(names)


def _pivot_of(result, pivot: str | None) -> str | None:
    """The factor a table puts across: the one asked, else the one its query was given."""
    return pivot if pivot is not None else result.attrs.get("pivot")


def _no_pivot(pivot: Any, what: str) -> None:
    if pivot is not None:
        from campaign.errors import ParameterError

        raise ParameterError(f"{{pivot}} is for query and compare tables, not {what}", "pivot")


def _bad(parameter: str, problem: str):
    from campaign.errors import ParameterError

    return ParameterError(f"{{{parameter}}} must be {problem}", parameter)
