"""A file a program needs, as a spec names it: where it is placed in each task's folder and
where it is on this machine. Apart from `campaign.spec.command_model`, which parses the inputs, so
that `campaign.spec.placeholders` can read a template without importing the command spec."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InputFile:
    """A file of the spec's folder the program needs: ``name`` where it is placed in the
    task's folder, ``path`` where it is on this machine; a ``template`` is filled per task."""

    name: str
    path: str
    template: bool = False
    folder: str = ""  # the folder of the inputs it was listed with (``configs``), if any
