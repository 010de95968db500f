"""Which levels ``factor=level[,level]`` clauses choose in a spec's design, by position: the
tasks `campaign outputs --where` shows and `campaign run --where` runs. The clauses are read
as a query's (`campaign.analysis.query.where_items`): one CSV line of levels per factor."""

from __future__ import annotations

from typing import Any

from campaign.analysis.query import not_a_level, where_items
from campaign.errors import ParameterError
from campaign.spec.load import Spec


def where_levels(spec: Spec, clauses: list[str]) -> dict[int, set[int]]:
    """``factor=level[,level]`` clauses -> per factor (by position), the positions of the
    levels kept; one line naming the clause when it names no factor or level."""
    names = [factor.name for factor in spec.factors]
    chosen: dict[int, set[int]] = {}
    for clause in clauses:
        name, sep, text = clause.partition("=")
        name = name.strip()
        if not sep or not text:
            raise ParameterError(
                f"{{where}} {clause!r}: write factor=level (or factor=a,b)", "where"
            )
        if name not in names:
            raise ParameterError(
                f"{{where}} {clause!r}: unknown factor {name!r}; factors: {', '.join(names)}",
                "where",
            )
        index = names.index(name)
        labels = list(spec.factors[index].labels)
        found = chosen.setdefault(index, set())
        for item in where_items(clause, text):
            position = level_position(item.strip(), labels)
            if position is None:
                raise not_a_level(clause, item, name, labels)
            found.add(position)
    return chosen


def level_position(text: str, labels: list[Any]) -> int | None:
    """The position of the level ``text`` names (``1`` names 1.0, ``true`` names True)."""
    for position, label in enumerate(labels):
        if str(label) == text or (isinstance(label, bool) and text.lower() == str(label).lower()):
            return position
        if isinstance(label, int | float) and not isinstance(label, bool):
            try:
                if float(text) == float(label):
                    return position
            except ValueError:
                continue
    return None
