"""One task of a campaign, to look at or to run by hand: its levels, replicate, seed and
params, what is stored for it, and, for a program, its folder prepared as a worker prepares it
(the inputs placed, the templates filled) with the command line and environment the worker
would run it with. A number that looks wrong can then be checked in a debugger or by eye.

The folder is prepared by the worker's own functions (`campaign.execute.program_task`), so the
command line is the one a worker runs, not a second rendering of the spec.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from campaign.analysis.levels import where_levels
from campaign.design.lookup import NOT_IN_DESIGN
from campaign.design.tasks import Design, cell_params
from campaign.errors import CampaignError, ParameterError
from campaign.execute.program_task import (
    command_line,
    fill,
    placeholder_values,
    program_variables,
)
from campaign.plan.plan import design_sources
from campaign.plan.sources import compare
from campaign.spec.load import Spec
from campaign.store.identity import read_identity
from campaign.store.ledger import Ledger


@dataclass(frozen=True)
class PreparedCommand:
    """A task's folder made ready, and how to run the program there as a worker would."""

    folder: Path
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # set beside the worker's environment

    def shell_line(self) -> str:
        """One line to paste into a shell: into the folder, the variables set, the program."""
        settings = [f"{name}={shlex.quote(value)}" for name, value in self.env.items()]
        words = ["env", *settings] if settings else []
        return f"cd {shlex.quote(str(self.folder))} && " + shlex.join([*words, *self.argv])


@dataclass(frozen=True)
class TaskByHand:
    """One task of a campaign: what it computes with, and what is stored for it (None when
    nothing is)."""

    spec: Spec
    key: str
    levels: dict[str, Any]
    replicate: int
    seed: int
    params: dict[str, Any]
    record: dict[str, Any] | None
    changed: str | None = None  # what changed since the stored result was computed

    @property
    def status(self) -> str:
        return "not run" if self.record is None else self.record["status"]

    @property
    def metrics(self) -> dict[str, Any]:
        """The stored metrics (none when the task failed or has not run)."""
        return dict((self.record or {}).get("metrics") or {})

    def prepare(self, folder: str | Path) -> PreparedCommand:
        """Make ``folder`` (new, or empty) the task's folder as a worker makes it, and give
        the command line and environment to run the program there."""
        return prepare(self, Path(folder))


def task_by_hand(
    spec: Spec, key: str | None = None, where: Sequence[str] = (), replicate: int | None = None
) -> TaskByHand:
    """The task of ``spec``'s design that ``key`` names, or that ``where`` (one level of each
    factor with several) and ``replicate`` choose, with its stored record."""
    design = Design(spec)
    index = key_index(spec, design, key) if key is not None else None
    if index is None:
        index = chosen_index(spec, design, list(where), replicate)
    elif where or replicate is not None:
        raise ParameterError("{task}: give a task key or levels and a replicate, not both", "task")
    task = design.task(index)
    ledger = Ledger(spec.output)
    records = ledger.load({task.key}) if ledger.has_records() else {}
    return TaskByHand(
        spec=spec,
        key=task.key,
        levels=design.cell_label(task.cell),
        replicate=task.replicate,
        seed=task.seed,
        params=cell_params(spec, task.cell),
        record=records.get(task.key),
        changed=changed_since(spec, design, task.key) if task.key in records else None,
    )


def changed_since(spec: Spec, design: Design, key: str) -> str | None:
    """What changed since the stored result of task ``key`` was computed (its model's code,
    a program, an input, a trace), as `campaign status` says it; None when nothing did."""
    stored = (read_identity(spec.output) or {}).get("sources")
    if not stored:
        return None
    try:
        change = compare(stored, design_sources(design))
    except (CampaignError, ValueError) as error:
        return f"could not be checked ({' '.join(str(error).split())})"
    if change is None or not change.affects(key):
        return None
    return change.describe(spec.model)


def key_index(spec: Spec, design: Design, key: str) -> int:
    (index,) = design.lookup.indices([key])
    if index == NOT_IN_DESIGN:
        raise ParameterError(
            f"{{task}} {key!r}: no task of campaign {spec.name} has this key (choose it by "
            "its levels and replicate instead)",
            "task",
        )
    return int(index)


def chosen_index(spec: Spec, design: Design, where: list[str], replicate: int | None) -> int:
    """The index of the task in the one cell ``where`` chooses, of replicate ``replicate``."""
    if not where and replicate is None:
        raise ParameterError(
            "choose the task by its key ({task}), or by one level of each factor ({where}) "
            "and a replicate ({replicate})",
            "task",
            "where",
            "replicate",
        )
    levels = where_levels(spec, where)
    open_factors = [f.name for i, f in enumerate(spec.factors) if len(levels.get(i, f.labels)) > 1]
    if open_factors:
        raise ParameterError(
            f"{{where}}: choose one level of {', '.join(open_factors)} (one task at a time)",
            "where",
        )
    cells = [
        number
        for number, cell in enumerate(design.cells)
        if all(cell[i] in positions for i, positions in levels.items())
    ]
    if len(cells) != 1:
        raise ParameterError(f"{{where}}: these levels choose {len(cells)} cells, not one", "where")
    if replicate is None or not 0 <= replicate < spec.replicates:
        given = "" if replicate is None else f" {replicate}"
        raise ParameterError(
            f"{{replicate}}{given}: give a replicate from 0 to {spec.replicates - 1}",
            "replicate",
        )
    return cells[0] * spec.replicates + replicate


def prepare(task: TaskByHand, folder: Path) -> PreparedCommand:
    command = task.spec.command
    if command is None:
        raise ParameterError(
            f"{{folder}}: model {task.spec.model} is a Python function, with no folder or "
            f"command line to prepare; run it by hand with its params and seed: "
            f"campaign.models.load_model({task.spec.model!r}).run(params, {task.seed})",
            "folder",
        )
    folder = folder.resolve()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ParameterError(
            f"{{folder}} {folder}: give a new or empty folder (the task's inputs are placed there)",
            "folder",
        )
    values = placeholder_values(command, task.params, task.seed, task.key, task.replicate, folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for item in command.inputs:  # copies: the worker's cache stays untouched
            target = folder / item.name
            target.parent.mkdir(parents=True, exist_ok=True)
            if item.template:
                text = Path(item.path).read_text(encoding="utf-8")
                target.write_text(fill(text, values), encoding="utf-8")
            else:
                shutil.copy2(item.path, target)
    except OSError as error:
        raise CampaignError(f"cannot prepare the task's folder {folder}: {error}") from None
    env = program_variables(command, values)
    return PreparedCommand(folder, command_line(command, folder, values), env)
