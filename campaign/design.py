"""Expand a spec into cells and tasks: the full factorial of the factors times the replicates.

Seeds follow DESIGN.md: a task's seed comes from `numpy.random.SeedSequence` with the base seed
as entropy and (replicate, levels of the unpaired factors) as spawn key. A level enters the key
through a digest of its factor name and label, never its position, so adding levels or
replicates to a spec leaves every existing task's seed (and key) unchanged. Paired factors are
left out of the key: their levels share seeds (common random numbers).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from campaign.spec import Spec

SEED_MASK = (1 << 63) - 1


@dataclass(frozen=True)
class Task:
    """One simulation run: a cell (level index per factor), a replicate and its seed."""

    key: str
    cell: tuple[int, ...]
    replicate: int
    seed: int


def canonical(value: Any) -> str:
    """A stable text form of plain data, for digests that survive reordering of mappings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True, default=str)


def iter_cells(spec: Spec) -> Iterator[tuple[int, ...]]:
    """Level indices of every cell, in spec order (last factor varies fastest)."""
    return itertools.product(*(range(len(f.labels)) for f in spec.factors))


def cell_params(spec: Spec, cell: tuple[int, ...], resolve_paths: bool = True) -> dict[str, Any]:
    """The parameters a model receives for one cell: fixed params plus the cell's levels.

    With ``resolve_paths``, a string that names an existing file relative to the spec file
    (and is written as a relative path with a folder, like ``data/trace.swf``) becomes absolute.
    """
    params = dict(spec.params)
    for factor, index in zip(spec.factors, cell):
        params[factor.name] = factor.values[index]
    if resolve_paths and spec.path is not None:
        base = spec.path.parent
        params = {name: _resolve(value, base) for name, value in params.items()}
    return params


def _resolve(value: Any, base: Path) -> Any:
    if isinstance(value, str) and ("/" in value) and not Path(value).is_absolute():
        candidate = base / value
        if candidate.exists():
            return str(candidate.resolve())
    return value


def level_word(factor_name: str, label: Any) -> int:
    """A 64-bit word identifying a factor level, independent of its position in the spec."""
    digest = hashlib.blake2b(canonical([factor_name, label]).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def task_seed(base_seed: int, replicate: int, unpaired_words: tuple[int, ...]) -> int:
    """Seed of a task from the base seed, its replicate and its unpaired levels."""
    sequence = np.random.SeedSequence(entropy=base_seed, spawn_key=(replicate, *unpaired_words))
    return int(sequence.generate_state(1, dtype=np.uint64)[0]) & SEED_MASK


class Design:
    """The cells and tasks of a spec, with stable keys and seeds."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.cells: list[tuple[int, ...]] = list(iter_cells(spec))
        self.shape = tuple(len(f.labels) for f in spec.factors)

    @property
    def size(self) -> int:
        return len(self.cells) * self.spec.replicates

    @cached_property
    def _unpaired_words(self) -> list[tuple[int, ...]]:
        """Per cell, the level words of the unpaired factors, ordered by factor name."""
        unpaired = [
            (i, f) for i, f in enumerate(self.spec.factors) if f.name not in self.spec.paired
        ]
        order = sorted(unpaired, key=lambda item: item[1].name)
        words = {
            (i, level): level_word(f.name, f.labels[level])
            for i, f in order
            for level in range(len(f.labels))
        }
        return [tuple(words[(i, cell[i])] for i, _ in order) for cell in self.cells]

    @cached_property
    def _cell_digests(self) -> list[str]:
        """Per cell, a digest of the model and the parameters as written in the spec."""
        model = self.spec.model
        return [
            hashlib.blake2b(
                canonical([model, cell_params(self.spec, cell, resolve_paths=False)]).encode(),
                digest_size=16,
            ).hexdigest()
            for cell in self.cells
        ]

    def cell_label(self, cell: tuple[int, ...]) -> dict[str, Any]:
        return {f.name: f.labels[i] for f, i in zip(self.spec.factors, cell)}

    def tasks(self) -> Iterator[Task]:
        """Every task, cell-major then replicate; seeds shared across paired levels."""
        seeds: dict[tuple[int, tuple[int, ...]], int] = {}
        for index, cell in enumerate(self.cells):
            words = self._unpaired_words[index]
            digest = self._cell_digests[index]
            for replicate in range(self.spec.replicates):
                seed_key = (replicate, words)
                seed = seeds.get(seed_key)
                if seed is None:
                    seed = seeds[seed_key] = task_seed(self.spec.seed, replicate, words)
                key = hashlib.blake2b(f"{digest}:{seed}".encode(), digest_size=16).hexdigest()
                yield Task(key=key, cell=cell, replicate=replicate, seed=seed)
