"""A program as a model, for the plan: its declaration, and what the workers receive.

The driver never runs the program: its declaration says which metrics it gives (units and
long names from ``declare``) and how to refuse a spec; the workers receive the program's
description (`campaign.spec.command_model.CommandSpec`) with the digests the plan took of the
program and of every input, and run it (`campaign.execute.program_task`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from campaign.models.contract import Model
from campaign.plan.program_sources import digested_programs, expected_files, placed_name
from campaign.plan.sources import Sources, combined_digest
from campaign.spec.command_model import COMMAND_MODEL, CommandSpec
from campaign.spec.types import Spec


def runs_on_workers(params: Mapping[str, object], seed: int) -> Mapping[str, float]:
    """A program runs on the workers only, in a folder of its own
    (`campaign.execute.program_task`)."""
    raise RuntimeError("a command model runs on Dask workers, through campaign.execute")


def command_declaration(command: CommandSpec) -> Model:
    """The declaration of a program: its declared metrics (none: whatever it prints)."""
    return Model(
        name=COMMAND_MODEL,
        run=runs_on_workers,
        summary=" ".join(command.argv),
        metrics=command.declared,
        strict=False,
    )


def worker_model(
    spec: Spec, sources: Sources | None, redefined: Iterable[str] = ()
) -> str | CommandSpec:
    """What the workers load: a model's name, or a program with the digests of its files and
    of what each program runs (each worker finds the inputs by digest and refuses its own
    copy of a program or library if it differs). ``redefined``: the metrics the parsers a
    remetric recorded compute after each task, which the program need not give."""
    if spec.command is None:
        return spec.model
    files: dict[str, Any] = dict(sources.code) if sources is not None else {}
    runtime = []
    for program in digested_programs(spec.command):
        entries = sources.programs.get(program.name, {}) if sources is not None else {}
        if program.placed and program.name in entries:  # a version a factor names
            files[placed_name(program)] = entries[program.name]
        runtime.extend((program.name, name, digest) for name, digest in sorted(entries.items()))
    return dataclasses.replace(
        spec.command,
        files=tuple(sorted(files.items())),
        runtime=tuple(runtime),
        redefined=tuple(sorted(set(redefined))),
    )


def worker_code(model: str | CommandSpec, sources: Sources | None) -> str | None:
    """The digest of the code each worker must report for its results to count: the model's
    code, or a program's files and what its programs run (`worker_model`)."""
    if sources is None:
        return None
    if isinstance(model, CommandSpec):
        return combined_digest(expected_files(model))
    return sources.code_digest
