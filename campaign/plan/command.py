"""A program as a model, for the plan: its declaration, and what the workers receive.

The driver never runs the program: its declaration says which metrics it gives (units and
long names from ``declare``) and how to refuse a spec; the workers receive the program's
description (`campaign.spec.command.CommandSpec`) with the digests the plan took of the
program and of every input, and run it (`campaign.execute.command`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from campaign.models.contract import Model
from campaign.plan.sources import Sources
from campaign.spec.command import COMMAND_MODEL, CommandSpec
from campaign.spec.types import Spec


def runs_on_workers(params: Mapping[str, object], seed: int) -> Mapping[str, float]:
    """A program runs on the workers only, in a folder of its own (`campaign.execute.command`)."""
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


def worker_model(spec: Spec, sources: Sources | None) -> str | CommandSpec:
    """What the workers load: a model's name, or a program with the digests of its files
    (each worker finds the inputs by digest and refuses its own copy if it differs)."""
    if spec.command is None:
        return spec.model
    files: dict[str, Any] = dict(sources.code) if sources is not None else {}
    return dataclasses.replace(spec.command, files=tuple(sorted(files.items())))
