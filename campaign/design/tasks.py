"""Expand a spec into cells and tasks: the cells of its design (the full factorial of the
factors, a fraction of it, or Latin hypercube or Sobol points crossed with the factors that
are not ranges) times the replicates.

A full factorial's results lie on one dimension per factor. Any other design's lie on the
crossed factors (if any) and `campaign.design.points.POINT`, the design points, in that order; the
cells are ordered alike (the last dimension fastest).

Seeds follow docs/explanation/reproducibility.md: a task's seed comes from
`numpy.random.SeedSequence` with the base seed as entropy and (replicate, levels of the unpaired
factors) as spawn key (evaluated for all tasks at once by `campaign.design.seeds`). A level
enters the key through a digest of its factor name and label, never its position, so adding
levels or replicates to a spec leaves every existing task's seed (and key) unchanged. Paired
factors are
left out of the key: their levels share seeds (common random numbers).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from campaign.design import points as designs
from campaign.design.seeds import LEVEL_WORD_FLAG, SEED_MASK, level_words_matrix, spawned_seeds
from campaign.spec.load import Spec

if TYPE_CHECKING:
    from campaign.design.lookup import TaskLookup


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
    """Level indices of every cell (a level index per factor, in spec order), in the order
    of the results' dimensions (`dimensions`), the last one fastest."""
    kind = spec.design.kind
    if kind == designs.FULL:
        return itertools.product(*(range(len(f.labels)) for f in spec.factors))
    if kind == designs.FRACTIONAL:
        return map(tuple, spec.design.fraction.runs.tolist())
    return _point_cells(spec)


def _point_cells(spec: Spec) -> Iterator[tuple[int, ...]]:
    """Cells of a Latin hypercube or Sobol design: the crossed factors' levels x the points;
    a range factor's level index is the point's."""
    crossed = [i for i, f in enumerate(spec.factors) if f.range is None]
    for levels in itertools.product(*(range(len(spec.factors[i].labels)) for i in crossed)):
        chosen = dict(zip(crossed, levels))
        for point in range(spec.design.points):
            yield tuple(chosen.get(i, point) for i in range(len(spec.factors)))


def dimensions(spec: Spec) -> list[tuple[str, int]]:
    """The results' dimensions but ``replicate``, with their sizes."""
    crossed = [(f.name, len(f.labels)) for f in spec.crossed]
    if spec.design.kind == designs.FULL:
        return crossed
    return [*crossed, (designs.POINT, spec.design.points)]


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
    """A 64-bit word identifying a factor level, independent of its position in the spec.

    The top bit is set so that every level word is exactly two 32-bit seed words.
    """
    digest = hashlib.blake2b(canonical([factor_name, label]).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") | LEVEL_WORD_FLAG


def repeat_points(words: np.ndarray, paired_levels: np.ndarray) -> None:
    """Tell apart cells whose levels all repeat an earlier cell's (the same point drawn twice:
    Morris's grid, integer ranges), the levels of paired factors included (those share seeds
    on purpose): the k-th repeat's first word is mixed with a digest of k, so each point keeps
    its own seeds and keys. Points drawn once keep theirs unchanged."""
    if not words.shape[1] or len(words) < 2:
        return
    rows = np.concatenate([words, paired_levels], axis=1)
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if len(first) == len(words):
        return
    seen: dict[int, int] = {}
    for row, group in enumerate(inverse.tolist()):
        repeat = seen.get(group, 0)
        seen[group] = repeat + 1
        if repeat:
            mixed = int(words[row, 0]) ^ level_word(designs.POINT, repeat)
            words[row, 0] = np.uint64(mixed | LEVEL_WORD_FLAG)


def task_seed(base_seed: int, replicate: int, unpaired_words: tuple[int, ...]) -> int:
    """Seed of one task: NumPy's SeedSequence of (base seed; replicate, unpaired level words)."""
    sequence = np.random.SeedSequence(entropy=base_seed, spawn_key=(replicate, *unpaired_words))
    return int(sequence.generate_state(1, dtype=np.uint64)[0]) & SEED_MASK


class Design:
    """The cells and tasks of a spec, with stable keys and seeds, held as arrays.

    Task ``i`` is cell ``i // replicates``, replicate ``i % replicates``. A task key is the
    cell's digest (model and parameters as written) followed by the task seed, both in hex.
    """

    def __init__(self, spec: Spec):
        self.spec = spec
        self.cells: list[tuple[int, ...]] = list(iter_cells(spec))
        self.dims = [name for name, _ in dimensions(spec)]
        self.shape = tuple(size for _, size in dimensions(spec))

    @property
    def size(self) -> int:
        return len(self.cells) * self.spec.replicates

    @cached_property
    def unpaired_words(self) -> np.ndarray:
        """Per cell, the level words of the unpaired factors ordered by name (cells x k)."""
        order = sorted(
            (f.name, i) for i, f in enumerate(self.spec.factors) if f.name not in self.spec.paired
        )
        words = np.zeros((len(self.cells), len(order)), dtype=np.uint64)
        for column, (name, i) in enumerate(order):
            factor = self.spec.factors[i]
            per_level = np.array([level_word(name, label) for label in factor.labels], np.uint64)
            levels = np.array([cell[i] for cell in self.cells], dtype=np.int64)
            words[:, column] = per_level[levels]
        if self.spec.design.kind in designs.POINT_KINDS:
            paired = [i for i, f in enumerate(self.spec.factors) if f.name in self.spec.paired]
            crossing = np.array([[cell[i] for i in paired] for cell in self.cells], np.uint64)
            repeat_points(words, crossing.reshape(len(self.cells), len(paired)))
        return words

    @cached_property
    def seeds(self) -> np.ndarray:
        """Seed of every task, shape (cells, replicates)."""
        replicates = self.spec.replicates
        cells = len(self.cells)
        replicate_column = np.tile(np.arange(replicates, dtype=np.uint32), cells)[:, None]
        level_columns = level_words_matrix(np.repeat(self.unpaired_words, replicates, axis=0))
        spawn = np.concatenate([replicate_column, level_columns], axis=1)
        return spawned_seeds(self.spec.seed, spawn).reshape(cells, replicates)

    @cached_property
    def cell_digests(self) -> list[str]:
        """Per cell, a digest of the model and the parameters as written in the spec."""
        model = self.spec.model
        return [
            hashlib.blake2b(
                canonical([model, cell_params(self.spec, cell, resolve_paths=False)]).encode(),
                digest_size=8,
            ).hexdigest()
            for cell in self.cells
        ]

    @cached_property
    def lookup(self) -> TaskLookup:
        """Task key -> task index, for keys by the million (`campaign.design.lookup`)."""
        from campaign.design.lookup import TaskLookup

        return TaskLookup(self)

    def keys(self) -> list[str]:
        """Every task key, in task order."""
        hexes = self.seeds.astype(">u8").tobytes().hex()
        replicates = self.spec.replicates
        digests = self.cell_digests
        return [
            digests[i // (16 * replicates)] + hexes[i : i + 16] for i in range(0, len(hexes), 16)
        ]

    def cell_label(self, cell: tuple[int, ...]) -> dict[str, Any]:
        return {f.name: f.labels[i] for f, i in zip(self.spec.factors, cell)}

    def task(self, index: int) -> Task:
        cell_index, replicate = divmod(index, self.spec.replicates)
        seed = int(self.seeds[cell_index, replicate])
        key = self.cell_digests[cell_index] + format(seed, "016x")
        return Task(key=key, cell=self.cells[cell_index], replicate=replicate, seed=seed)

    def tasks(self, indices: Iterable[int] | None = None) -> Iterator[Task]:
        """Tasks in task order (cell-major, then replicate), or those at the given indices."""
        return map(self.task, range(self.size) if indices is None else indices)
