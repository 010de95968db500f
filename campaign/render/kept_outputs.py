"""What `campaign outputs` prints: one line per task that kept outputs (key, status,
replicate, levels, each output and its size, what its keep: patterns left out), then the
counts."""

from __future__ import annotations

from typing import Any

from campaign.spec.describe import byte_size
from campaign.store.outputs import KeepNotes


def listing(chosen: list[Any]) -> list[str]:
    """One line per task, then the counts, and what the patterns left out of how many tasks."""
    lines = []
    for task in chosen:
        levels = " ".join(f"{name}={value}" for name, value in task.levels.items())
        kept = ", ".join(f"{name} {byte_size(size)}" for name, size in task.sizes.items())
        line = f"{task.key}  {task.status:6}  r{task.replicate}  {levels}  {kept or 'nothing'}"
        lines.append(line + left_out(task.record))
    kept = [task for task in chosen if task.sizes]
    total = sum(sum(task.sizes.values()) for task in kept)
    lines.append(f"{len(kept)} tasks kept outputs ({byte_size(total)} before compression)")
    lines.extend(KeepNotes(task.record for task in chosen).lines())
    return lines


def extracted_line(files: int, size: int, tasks: int, folder: str) -> str:
    """What `outputs --extract` wrote."""
    return f"{files} files ({byte_size(size)}) of {tasks} tasks written under {folder}"


def left_out(record: dict[str, Any]) -> str:
    """What a task's keep: patterns left out, to end its line ("" when nothing)."""
    unmatched = [repr(pattern) for pattern in record.get("keep_unmatched") or ()]
    refused = [name.removeprefix("files/") for name in record.get("keep_refused") or {}]
    parts = [f"{', '.join(unmatched)} matched nothing"] if unmatched else []
    parts += [f"not kept: {', '.join(refused)}"] if refused else []
    return f"  (keep: {'; '.join(parts)})" if parts else ""
