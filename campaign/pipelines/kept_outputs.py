"""A campaign's kept outputs: which tasks kept which, chosen by task key or factor levels, and
their bytes read back (checked against their records) to be shown or extracted.

The records say what each task kept (`campaign.store.outputs`); the design says which levels
a task key stands for, so a selection never opens an archive it does not need.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.analysis.levels import clauses, where_levels
from campaign.design.tasks import Design
from campaign.errors import CampaignError, ParameterError
from campaign.spec.load import Spec
from campaign.store.ledger import Ledger
from campaign.store.outputs import FILES_PREFIX, Archives, reference, sizes, write_folder

NOT_KEPT_HINT = (
    "by default a task keeps only its stdout and stderr, and only when it fails; the model's "
    "keep: names files to keep"
)


@dataclass(frozen=True)
class KeptTask:
    """A stored task and the outputs it kept."""

    key: str
    levels: dict[str, Any]
    replicate: int
    record: dict[str, Any]

    @property
    def status(self) -> str:
        return self.record["status"]

    @property
    def sizes(self) -> dict[str, int]:
        return sizes(self.record)


@dataclass
class KeptOutputs:
    """The chosen tasks of a campaign that kept outputs, and their bytes read back on demand
    (each checked against the SHA-256 its record holds)."""

    spec: Spec
    tasks: list[KeptTask]

    def show(self, name: str) -> bytes:
        """One kept output (stdout, stderr, a kept file's name) of the one task chosen."""
        return show(self.spec.output, self.tasks, name)

    def extract(self, folder: str | Path) -> tuple[int, int]:
        """Write the tasks' kept outputs under ``folder``/TASK_KEY/; the files and bytes
        written."""
        return extract(self.spec.output, self.tasks, folder)


def kept_outputs(
    spec: Spec, tasks: Iterable[str] = (), where: Sequence[str] | Mapping[str, Any] | None = None
) -> KeptOutputs:
    """The stored tasks of ``spec``'s output folder that kept outputs (or whose keep:
    patterns left something out), chosen by ``tasks`` (keys) and ``where`` (levels)."""
    ledger = Ledger(spec.output)
    if not ledger.has_records():
        raise CampaignError(f"{spec.output}: no stored results here (run the campaign first)")
    chosen = select(spec, Design(spec), ledger.load(), tasks, clauses(where or []))
    return KeptOutputs(spec, chosen)


def select(
    spec: Spec,
    design: Design,
    records: dict[str, dict[str, Any]],
    tasks: Iterable[str] = (),
    where: list[str] = (),
) -> list[KeptTask]:
    """The stored tasks with kept outputs (or whose keep: patterns left something out) that
    ``tasks`` (keys) and ``where`` (levels) choose (every one when neither is given), in task
    order; one line when the choice holds none."""
    keys = list(dict.fromkeys(tasks))
    levels = where_levels(spec, list(where))
    known = set(design.keys()) if keys else set()
    for key in keys:
        if key not in known:
            raise ParameterError(
                f"{{tasks}} {key!r}: no task of campaign {spec.name} has this key "
                "(`campaign outputs` lists the tasks that kept outputs)",
                "tasks",
            )
    wanted = set(keys)
    chosen, matched = [], 0
    for task in design.tasks():
        if wanted and task.key not in wanted:
            continue
        if any(task.cell[index] not in positions for index, positions in levels.items()):
            continue
        record = records.get(task.key)
        if record is None:
            continue
        matched += 1
        if reference(record) is None and not has_keep_notes(record):
            continue
        chosen.append(KeptTask(task.key, design.cell_label(task.cell), task.replicate, record))
    if not chosen:
        raise ParameterError(no_outputs_line(keys, list(where), matched), "tasks", "where")
    return chosen


def has_keep_notes(record: dict[str, Any]) -> bool:
    """Whether a task's record says its keep: patterns left something out."""
    return bool(record.get("keep_unmatched") or record.get("keep_refused"))


def no_outputs_line(keys: list[str], where: list[str], matched: int) -> str:
    """One line for a choice of tasks that kept no outputs (a `ParameterError`'s template:
    ``{tasks}`` and ``{where}`` name what chose them)."""
    chose = " ".join([*(f"{{tasks}} {key}" for key in keys), *(f"{{where}} {w}" for w in where)])
    if chose and not matched:
        return f"{chose}: no stored task is chosen"
    chosen = f" {chose} chooses" if chose else ""
    return f"none of the {matched} stored tasks{chosen} kept outputs ({NOT_KEPT_HINT})"


def output_name(name: str) -> str:
    """An output as `show` takes it: stdout, stderr, files/PATH or just PATH."""
    return (
        name
        if name in ("stdout", "stderr") or name.startswith(FILES_PREFIX)
        else (FILES_PREFIX + name)
    )


def show(output: Path, chosen: list[KeptTask], name: str) -> bytes:
    """One kept output of the one task chosen."""
    if len(chosen) != 1:
        raise ParameterError(
            f"{{name}} {name}: choose one task ({{tasks}} KEY, or {{where}} clauses that leave "
            f"one); {len(chosen)} tasks with kept outputs are chosen",
            "name",
            "tasks",
            "where",
        )
    (task,) = chosen
    with Archives(output) as archives:
        return archives.read(task.record, [output_name(name)])[output_name(name)]


def extract(output: Path, chosen: list[KeptTask], folder: str | Path) -> tuple[int, int]:
    """Write the chosen tasks' kept outputs under ``folder``/TASK_KEY/ (stdout, stderr and the
    kept files under their own names: the folder a metrics parser is given); returns the
    files and bytes written."""
    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise ParameterError(
            f"{{folder}} {folder} is a file; give a folder (made if missing)", "folder"
        )
    files = size = 0
    with Archives(output) as archives:
        for task in chosen:
            if reference(task.record) is None:
                continue  # it kept nothing (its keep: patterns matched nothing)
            outputs = archives.read(task.record)
            try:
                files += len(write_folder(folder / task.key, outputs))
            except OSError as error:
                raise ParameterError(
                    f"{{folder}} {folder}: cannot write {task.key}'s outputs: {error.strerror} "
                    f"({files} files of the tasks before it are written)",
                    "folder",
                ) from None
            size += sum(len(data) for data in outputs.values())
    return files, size
