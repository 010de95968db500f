"""Files a program reads from outside the spec's folder, named by absolute path: digested.

A param's or factor's value written as an absolute path (``platform: [/data/small.xml,
/data/large.xml]``, a folder of configuration files) reaches the program as it is: each
worker reads the file at that path (a file system shared with the workers), and nothing
travels with the inputs. Its content decides the numbers as an input's does, so it is
digested here as a Python model's input files are: per cell (a file edited makes stale only
the cells that name it), a folder by every file below it. The same for a file the command
names by absolute path (`campaign.spec.named_files`: ``--platform /data/cluster.xml``, or
``--platform=/data/cluster.xml``, a word of a shell line), which every task reads; a folder
named so is not digested there, as it is most often where a program writes. A file named so
that appears while a run goes on (`appeared_files`) is most often the program's output: the
run says so as it ends.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.plan.sources import file_digest, folder_digest
from campaign.spec.command_model import CommandSpec
from campaign.spec.named_files import filled_paths, named_files


def outside_values(command: CommandSpec, params: Mapping[str, Any]) -> tuple[str, ...]:
    """The files and folders a task's params name by absolute path, besides the inputs'
    copies and the programs (digested as programs), and the files the command names by a
    path its params fill (``/data/{size}.xml``: `campaign.spec.named_files.filled_paths`)."""
    known = {path for path, _ in command.placed_values}
    known |= {p.name for p in (*command.programs, *command.launched)}
    known |= {p.path for p in (*command.programs, *command.launched)}
    named = {
        value
        for value in params.values()
        if isinstance(value, str) and os.path.isabs(value) and value not in known
    }
    named = {v for v in named if os.path.isfile(v) or os.path.isdir(v)}
    return tuple(sorted(named | filled_paths(command, params)))


def outside_arguments(command: CommandSpec) -> dict[str, str]:
    """Name (the path) -> digest of each file the command names by absolute path
    (`campaign.spec.named_files`: its arguments, a shell line's words), read by every task."""
    return {path: outside_digest(path) for path in named_files(command)}


def appeared_files(command: CommandSpec, planned: Mapping[str, str]) -> list[str]:
    """The files the command names by absolute path that exist now but did not when the run
    was planned (``planned``: the code's digests then): most often files the program writes
    (``LOG: /scratch/log.txt``), which the next plan would digest as files it reads."""
    return [path for path in named_files(command) if path not in planned]


def appeared_note(paths: list[str]) -> str:
    """What a run says at its end of `appeared_files`, before the next run refuses its
    results as computed before them."""
    one = len(paths) == 1
    it, them = ("it is", "it") if one else ("they are", "them")
    return (
        f"note: {', '.join(paths)} did not exist when this run was planned and "
        f"{'exists' if one else 'exist'} now: named by absolute path (in model.command, "
        f"model.env, a template or an input's text), {it} digested from the next run on as "
        f"{'a file' if one else 'files'} the program reads, which makes these results stale; "
        f"if the program writes {them}, name {them} in the task's folder ({{dir}}/log.txt, or "
        "a relative path)"
    )


def outside_digest(path: str) -> str:
    """The digest of a file, or of every file below a folder."""
    try:
        if os.path.isdir(path):
            return folder_digest(Path(path))
        return file_digest(path)
    except ValueError as error:
        raise CampaignError(f"input folder {path}: {error}") from None
    except OSError as error:
        raise CampaignError(f"cannot read {path} to take its digest: {error.strerror}") from None
