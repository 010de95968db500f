"""What `campaign task` prints: which task it is (levels, replicate, seed), its params, what
is stored for it (each metric with every digit, to compare with a run by hand), and, once its
folder is prepared, the line that runs it there."""

from __future__ import annotations

from typing import Any


def task_lines(task: Any, prepared: Any = None) -> list[str]:
    levels = ", ".join(f"{name}={value}" for name, value in task.levels.items())
    lines = [
        f"task {task.key}: {levels or 'the one cell'}, replicate {task.replicate}, "
        f"seed {task.seed}",
        "params: " + ", ".join(f"{name}={value!r}" for name, value in task.params.items()),
        stored_line(task),
    ]
    if task.changed:
        lines.append(
            f"changed since it was stored: {task.changed}; run by hand, it computes with them "
            "as they are now"
        )
    if prepared is not None:
        lines.append(
            f"prepared {prepared.folder} as a worker prepares a task's folder (inputs "
            "placed, templates filled); run the task there:"
        )
        lines.append(f"  {prepared.shell_line()}")
    return lines


def stored_line(task: Any) -> str:
    if task.record is None:
        return "stored: nothing yet (the task has not run)"
    if task.status != "ok":
        return f"stored: {task.status}: {task.record.get('error', '')}".rstrip(": ")
    shown = []
    for name, value in task.metrics.items():
        if isinstance(value, list):
            shown.append(f"{name}=(a sample of {len(value)} values)")
        else:
            shown.append(f"{name}={value!r}")
    return "stored: ok; " + ", ".join(shown)
