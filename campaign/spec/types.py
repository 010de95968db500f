"""What a campaign spec says, once checked: the `Spec` and its parts (frozen dataclasses).

`campaign.spec.load` reads a spec file into these; `campaign.spec.keys` checks each key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from campaign.design import points as designs
from campaign.spec.command_model import CommandSpec, Resources


@dataclass(frozen=True)
class Precision:
    """Run replicates per cell until every interval of ``metrics`` is at most ``half_width``.

    Part of the spec, ``confidence`` included: the rounds a campaign makes follow from the
    spec and the stored results alone (see `campaign.analysis.stats.precision_rounds`).
    """

    metrics: tuple[str, ...]
    half_width: float
    relative: bool
    min_replicates: int
    max_replicates: int
    confidence: float = 0.95


@dataclass(frozen=True)
class Selection:
    """Select the best system of each group on ``metric`` with a guarantee: the best with
    probability at least ``pcs`` when it is at least ``indifference`` (delta) better than the
    others (GSP: a system within delta of the best, whatever the means).

    The systems are the levels of ``among`` at each combination of the other factors (every
    cell, when None). Part of the spec: the stages a campaign runs follow from the spec and
    the stored results alone (see `campaign.analysis.selection`).
    """

    metric: str
    goal: str  # "min" or "max"
    indifference: float
    among: str | None = None
    procedure: str = "kn"
    relative: bool = False  # indifference is a share of the best first-stage mean's size
    pcs: float = 0.95
    first: int = 10
    batch: int = 5
    budget: int | None = None  # tasks per group (ocba)
    max_replicates: int = 1000
    rounds: int = 10  # gsp's screening rounds before its final stage


@dataclass(frozen=True)
class Factor:
    """A factor: its name, the labels stored as coordinates and the values models receive."""

    name: str
    labels: tuple[Any, ...]
    values: tuple[Any, ...]
    range: tuple[float, float] | None = None  # a range's labels are its design points' values
    scale: str = designs.LINEAR  # a range drawn uniformly in value (linear) or in log(value)
    integer: bool = False  # a range of integers

    @property
    def labelled(self) -> bool:
        return self.labels != self.values


@dataclass(frozen=True)
class DesignSpec:
    """Which cells run: ``kind`` one of `campaign.design.points.KINDS`; a fraction's generators
    (given, or the standard ones of ``resolution``); a Latin hypercube's or Sobol design's
    point counts (``sizes``: growing, the last one the design's); a Saltelli sample's base
    samples or Morris's trajectories (``samples``), whether the Saltelli sample allows
    second-order indices and Morris's grid ``levels``."""

    kind: str = designs.FULL
    fraction: designs.Fraction | None = None
    resolution: int | None = None
    sizes: tuple[int, ...] = ()
    samples: int = 0
    second_order: bool = False
    levels: int = 0

    @property
    def points(self) -> int:
        if self.fraction is not None:
            return 2 ** (len(self.fraction.names) - len(self.fraction.generators))
        return self.sizes[-1] if self.sizes else 0


DEFAULT_PERCENTILES = (50, 95, 99)
"""The percentiles of every sample a model returns that results keep as metrics
(``wait_p95``); a spec's ``percentiles:`` chooses others among the whole percentiles 0..100."""


@dataclass(frozen=True)
class Spec:
    name: str
    model: str
    params: dict[str, Any]
    factors: tuple[Factor, ...]
    paired: tuple[str, ...]
    replicates: int
    seed: int
    metrics: tuple[str, ...] | None
    output: Path
    precision: Precision | None = None
    text: str = ""
    path: Path | None = None
    description: str = ""
    digest: str = field(default="")
    design: DesignSpec = field(default_factory=DesignSpec)
    percentiles: tuple[int, ...] = DEFAULT_PERCENTILES
    command: CommandSpec | None = None  # a program as the model (`model` is then "command")
    resources: Resources | None = None  # what one task needs of a worker
    selection: Selection | None = None  # ranking and selection instead of fixed replicates

    @property
    def model_reference(self) -> str | CommandSpec:
        """What loads the model: its name, or the program's description."""
        return self.command if self.command is not None else self.model

    def factor(self, name: str) -> Factor:
        for factor in self.factors:
            if factor.name == name:
                return factor
        raise KeyError(name)

    @property
    def crossed(self) -> tuple[Factor, ...]:
        """The factors whose levels are crossed: every factor of a full factorial, the factors
        that are not ranges in a Latin hypercube or Sobol design, none in a fraction."""
        if self.design.kind == designs.FRACTIONAL:
            return ()
        return tuple(f for f in self.factors if f.range is None)

    @property
    def cells(self) -> int:
        crossed = math.prod(len(f.labels) for f in self.crossed)
        return crossed if self.design.kind == designs.FULL else crossed * self.design.points

    @property
    def tasks(self) -> int:
        return self.cells * self.replicates
