"""Shards: one campaign cut into n parts that run apart (batch jobs that share no scheduler).

A shard owns a fixed part of the design, decided from the design alone, never from what is
stored: so shards never overlap, together they cover every task, and a rerun of a shard runs
only its own missing tasks. The tasks, sorted by task key, are dealt to the shards in turn:
shard sizes differ by at most one, and since a key starts with its cell's digest, each shard
also holds every cell's replicates within one of each other, while the cells (digests, not
positions) fall to the shards without regard to their levels, so no shard gets all the slow
levels of a factor. Changing the design (levels, replicates) deals its tasks anew.

With a precision target a cell's next round follows from that cell's own results, so the
cells, sorted by digest, are dealt instead: a shard owns whole cells and decides their rounds
alone, as one machine would. With a selection a group's stages follow from all its cells'
results: whole groups are dealt (sorted by their first cell's digest).

A shard's output folder holds its ledger and a ``campaign.json`` that says which shard it
is and which design it was cut from (the spec's text and a digest of its task list);
`campaign.pipelines.merge` reads both to join the shards into one results file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path
from typing import Any

import numpy as np

from campaign.design.groups import selection_groups
from campaign.design.tasks import Design, canonical
from campaign.errors import ParameterError
from campaign.spec.load import Spec
from campaign.store.folder import shard_folder_name

SHARD_SYNTAX = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclasses.dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1 <= index <= count); `EVERY_TASK` is the whole design."""

    index: int
    count: int

    whole = False  # the campaign not cut: every task is this shard's

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``I/N``, as the ``shard`` parameter takes it; anything else is one line saying what
        is allowed."""
        match = SHARD_SYNTAX.fullmatch(str(text))
        if match is None:
            raise ParameterError(
                f"{{shard}} {text!r}: expected I/N, shard I of N counted from 1 (such as 1/3)",
                "shard",
            )
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ParameterError(
                f"{{shard}} {text}: I must be between 1 and N, and N at least 1 (such as 1/3)",
                "shard",
            )
        return cls(index, count)

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def folder(self) -> str:
        """The shard's output folder, inside the campaign's, unless ``--out`` names one."""
        return shard_folder_name(self.index, self.count)

    def output(self, spec: Spec) -> Path:
        """Where the shard writes by default: its folder inside the spec's output folder."""
        return spec.output / self.folder

    def owns(self, design: Design) -> np.ndarray:
        """Per task (in task order), whether this shard runs it."""
        return owners(design, self.count) == self.index - 1

    def mine(self, indices: list[int], design: Design) -> list[int]:
        """The task indices among ``indices`` that this shard runs."""
        return mine(indices, self.owns(design))

    def stored(self, design: Design, inputs: dict[str, str]) -> dict[str, Any]:
        """What campaign.json adds for a shard: the design it was cut from, which shard it is."""
        return {
            "design": design_record(design, inputs),
            "shard": {"index": self.index, "count": self.count},
        }


class EveryTask:
    """The whole design, as one shard that owns every task (a run not cut into shards)."""

    whole = True
    label = ""

    def output(self, spec: Spec) -> Path:
        return spec.output

    def owns(self, design: Design) -> np.ndarray:
        return np.ones(design.size, dtype=bool)

    def mine(self, indices: list[int], design: Design) -> list[int]:
        return list(indices)

    def stored(self, design: Design, inputs: dict[str, str]) -> dict[str, Any]:
        return {}


EVERY_TASK = EveryTask()


def as_shard(shard: str | Shard | EveryTask | None) -> Shard | EveryTask:
    """A shard given as "I/N", a `Shard`, or None: every task."""
    if shard is None:
        return EVERY_TASK
    return Shard.parse(shard) if isinstance(shard, str) else shard


def owners(design: Design, count: int) -> np.ndarray:
    """Per task (in task order), the shard (counted from 0) that owns it among ``count``."""
    replicates = design.spec.replicates
    # a key is the cell's digest and the seed, both 16 hex digits: sorting keys is sorting
    # these two numbers
    cells = np.array([int(d, 16) for d in design.cell_digests], dtype=np.uint64)
    if design.spec.precision is not None:  # whole cells: their rounds are decided alone
        dealt = np.empty(cells.size, dtype=np.int64)
        dealt[np.argsort(cells, kind="stable")] = np.arange(cells.size) % count
        return np.repeat(dealt, replicates)
    if design.spec.selection is not None:  # whole groups: their stages are decided together
        groups = selection_groups(design)
        firsts = np.array([cells[group].min() for group in groups], dtype=np.uint64)
        by_group = np.empty(len(groups), dtype=np.int64)
        by_group[np.argsort(firsts, kind="stable")] = np.arange(len(groups)) % count
        dealt = np.empty(cells.size, dtype=np.int64)
        for group, shard in zip(groups, by_group):
            dealt[group] = shard
        return np.repeat(dealt, replicates)
    seeds = np.asarray(design.seeds, dtype=np.uint64).ravel()
    order = np.lexsort((seeds, np.repeat(cells, replicates)))
    dealt = np.empty(seeds.size, dtype=np.int64)
    dealt[order] = np.arange(seeds.size) % count
    return dealt


def placed(
    spec: Spec, out: str | Path | None = None, shard: Shard | EveryTask | None = None
) -> Spec:
    """The spec with the output folder a command uses: ``out`` when given, else the spec's
    output, or for a shard the folder ``shard-I-of-N`` inside it."""
    folder = Path(out).expanduser().absolute() if out is not None else None
    folder = folder or as_shard(shard).output(spec)
    return spec if folder == spec.output else dataclasses.replace(spec, output=folder)


def design_digest(design: Design) -> str:
    """A digest of the task list a shard was dealt from (task keys in order) and of what
    decides a task's record (the metrics kept, the precision target)."""
    spec = design.spec
    digest = hashlib.blake2b(digest_size=16)
    digest.update(canonical([design.cell_digests, spec.replicates]).encode())
    digest.update(np.ascontiguousarray(design.seeds, dtype=">u8").tobytes())
    precision = None if spec.precision is None else dataclasses.asdict(spec.precision)
    selection = None if spec.selection is None else dataclasses.asdict(spec.selection)
    digest.update(
        canonical([spec.metrics, precision, *([selection] if selection else [])]).encode()
    )
    return digest.hexdigest()


def design_record(design: Design, inputs: dict[str, str]) -> dict[str, Any]:
    """What campaign.json keeps of the design a shard was cut from: its digest, the spec's
    text (the merge writes its results from it) and the input files it reads (path ->
    digest, as `campaign.plan.sources` took them)."""
    spec = design.spec
    return {
        "digest": design_digest(design),
        "spec": spec.text,
        "spec_file": str(Path(spec.path).absolute()) if spec.path else "",
        "inputs": dict(sorted(inputs.items())),
    }


@dataclasses.dataclass(frozen=True)
class Counts:
    """A shard's own tasks (with a precision target, within its cells' rounds so far)."""

    tasks: int
    done: int
    failed: int
    missing: int

    def describe(self, shard: Shard) -> str:
        return (
            f"shard {shard.label}: {self.done} of {self.tasks} of its tasks done, "
            f"{self.failed} failed, {self.missing} missing"
        )


def counts(plan: Any, shard: Shard | EveryTask) -> Counts:
    """How far a run's state (`campaign.plan.state.RunState`) stands on the tasks of
    ``shard`` (within the replicate window)."""
    own = shard.owns(plan.design)
    planned = plan.replicates.window.ravel()
    tasks = int(np.count_nonzero(own & planned))
    failed = int(np.count_nonzero(own[plan.failed]))
    missing = int(np.count_nonzero(own[[*plan.missing, *plan.again]]))  # again: to compute
    return Counts(tasks, tasks - failed - missing, failed, missing)


def mine(indices: list[int], own: np.ndarray | None) -> list[int]:
    """The task indices a shard owns (all of them when ``own`` is None: no shard)."""
    if own is None:
        return list(indices)
    return [index for index in indices if own[index]]
