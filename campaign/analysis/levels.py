"""Which levels ``factor=level[,level]`` and ``factor<number`` clauses choose in a spec's
design, by position: the tasks `campaign outputs --where` shows, `campaign run --where` runs
(`ChosenLevels`) and `campaign task` picks. The clauses are read as a query's
(`campaign.analysis.query`): one CSV line of levels per factor, or a comparison."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from campaign.analysis.query import CLAUSE, compared_levels, not_a_level, where_items
from campaign.design.tasks import Design
from campaign.errors import ParameterError
from campaign.spec.load import Spec


def where_levels(spec: Spec, clauses: list[str]) -> dict[int, set[int]]:
    """``factor=level[,level]`` and ``factor<number`` (``<=``, ``>``, ``>=``) clauses -> per
    factor (by position), the positions of the levels kept: those the ``=`` clauses on it
    name, that pass every comparison on it; one line naming the clause when it names no
    factor or level, or no level passes."""
    names = [factor.name for factor in spec.factors]
    named: dict[int, set[int]] = {}
    compared: dict[int, set[int]] = {}
    for clause in clauses:
        match = CLAUSE.match(clause)
        name, sign, text = match.groups() if match else ("", "", "")
        if not match or not text:
            raise ParameterError(
                f"{{where}} {clause!r}: write factor=level (or factor=a,b), or factor<number "
                "(<, <=, >, >=)",
                "where",
            )
        if name not in names:
            raise ParameterError(
                f"{{where}} {clause!r}: unknown factor {name!r}; factors: {', '.join(names)}",
                "where",
            )
        index = names.index(name)
        labels = list(spec.factors[index].labels)
        if sign != "=":
            values = compared_levels(clause, name, sign, text, np.asarray(labels))
            passing = {position for position, label in enumerate(labels) if label in values}
            compared[index] = compared.get(index, passing) & passing
            continue
        found = named.setdefault(index, set())
        for item in where_items(clause, text):
            position = level_position(item.strip(), labels)
            if position is None:
                raise not_a_level(clause, item, name, labels)
            found.add(position)
    chosen = {}
    for index in {*named, *compared}:
        every = set(range(len(spec.factors[index].labels)))
        chosen[index] = named.get(index, every) & compared.get(index, every)
        if not chosen[index]:
            labels = spec.factors[index].labels
            raise ParameterError(
                f"{{where}}: no level of {names[index]} passes every clause on it; its levels: "
                f"{', '.join(map(str, labels[:8]))}{', ...' if len(labels) > 8 else ''}",
                "where",
            )
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


@dataclass(frozen=True)
class ChosenLevels:
    """The tasks a run owns (``shard``: a `campaign.design.shards.Shard` or the whole design)
    less those of the cells ``where`` leaves out; everything else is the shard's."""

    shard: Any
    cells: tuple[bool, ...]  # per cell, whether the clauses choose it

    @classmethod
    def of(cls, spec: Spec, shard: Any, where: Sequence[str] | Mapping[str, Any]) -> ChosenLevels:
        """``where``: ``factor=level[,level]`` clauses, or ``{factor: level or [levels]}``."""
        levels = where_levels(spec, clauses(where))
        chosen = tuple(
            all(cell[factor] in positions for factor, positions in levels.items())
            for cell in Design(spec).cells
        )
        return cls(shard, chosen)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.shard, name)

    def mine(self, indices: list[int], design: Design) -> list[int]:
        """The task indices among ``indices`` that the shard owns and the clauses choose."""
        per = design.spec.replicates  # task i is of cell i // replicates
        return [i for i in self.shard.mine(indices, design) if self.cells[i // per]]

    def describe(self) -> str:
        return f"only the tasks of {sum(self.cells)} of {len(self.cells)} cells run (as asked)"


def clauses(where: str | Sequence[str] | Mapping[str, Any]) -> list[str]:
    """``factor=level[,level]`` clauses, from clauses or from ``{factor: level or [levels]}``
    (the levels written as one CSV line, as a clause holds them)."""
    if isinstance(where, str):
        return [where]
    if not isinstance(where, Mapping):
        return list(where)
    written = []
    for factor, levels in where.items():
        line = io.StringIO()
        listed = levels if isinstance(levels, list | tuple) else [levels]
        csv.writer(line, lineterminator="").writerow([str(level) for level in listed])
        written.append(f"{factor}={line.getvalue()}")
    return written


def check_rerun_chosen(plan: Any, shard: Any) -> None:
    """Refuse to compute changed stored results again when ``where`` leaves some out: they
    would stay stored, computed from other sources than campaign.json then names."""
    if not isinstance(shard, ChosenLevels):
        return
    outside = len(plan.changed) - len(shard.mine(list(plan.changed), plan.design))
    if outside:
        raise ParameterError(
            f"{plan.spec.output}: {{where}} leaves out {outside} of the "
            f"{len(plan.changed)} stored results computed before "
            f"{plan.change.describe(plan.spec.model)}; choose their levels too, or run "
            "without {where}",
            "where",
        )
