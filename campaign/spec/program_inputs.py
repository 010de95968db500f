"""The files a program needs, as a spec's ``model:`` names them: its inputs and templates
(files, or folders whose every file is an input), and the arguments and values that name
files beside the spec, which must be among them so that each task's folder has them and a
change to them is seen."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.spec.input_file import InputFile
from campaign.spec.input_folder import relative_names
from campaign.spec.placeholders import PLACEHOLDER
from campaign.spec.program import Program, is_below

Fail = Callable[[str], CampaignError]


def parse_inputs(inputs: Any, templates: Any, base: Path, fail: Fail) -> tuple[InputFile, ...]:
    """Inputs and templates: existing files below the spec's folder, placed under the path
    written (an input elsewhere under its file name)."""
    listed = parse_name_list(inputs, "model.inputs", fail)
    filled = parse_name_list(templates, "model.templates", fail)
    files: dict[str, InputFile] = {}
    for key, names in (("model.inputs", listed), ("model.templates", filled)):
        for name in names:
            path = Path(name).expanduser()
            path = path if path.is_absolute() else base / path
            template = key == "model.templates"
            if not path.is_file() and (template or not path.is_dir()):
                what = "a folder: name its files" if path.is_dir() else "not found"
                raise fail(f"{key}: {name!r} is {what} ({path})")
            placed = name if is_below(path, base) and not Path(name).is_absolute() else path.name
            placed = Path(os.path.normpath(placed)).as_posix()
            folder = placed if path.is_dir() else ""
            for where, source in placed_files(placed, path, f"{key}: {name!r}", fail):
                earlier = files.get(where)
                if earlier is not None and earlier.path != os.path.abspath(source):
                    raise fail(f"{key}: two files would be placed as {where!r}")
                files[where] = InputFile(where, os.path.abspath(source), template, folder)
    return tuple(files.values())


def placed_files(placed: str, path: Path, what: str, fail: Fail) -> list[tuple[str, Path]]:
    """(name in the task's folder, path here) of an input: a file, or each file of a folder
    (`campaign.spec.input_folder`), placed below the folder's name."""
    if path.is_file():
        return [(placed, path)]
    if placed == ".":  # would hold the output folder, every run's results changing it
        raise fail(f"{what} is the spec's own folder; list the files or folders the program reads")
    try:
        found = relative_names(path)
    except ValueError as error:
        raise fail(f"{what} is a folder whose files cannot all be read: {error}") from None
    if not found:
        raise fail(f"{what} is a folder without files ({path}); a task's folder would lack it")
    return [(f"{placed}/{name}", file) for name, file in found]


def with_program(inputs: tuple[InputFile, ...], program: Program) -> tuple[InputFile, ...]:
    """The inputs and the program of the spec's folder (placed, travelling with them)."""
    name = Path(os.path.normpath(program.name)).as_posix()
    if any(i.name == name for i in inputs):
        return inputs
    return (*inputs, InputFile(name, program.path))


def option_value(arg: str) -> str:
    """What an argument names: the value of an option written ``--name=value`` (or
    ``-name=value``: ``--platform=cluster.xml``, as SimGrid's programs take it), else itself."""
    if arg.startswith("-") and "=" in arg:
        return arg.split("=", 1)[1]
    return arg


def check_arguments_listed(args: Iterable[str], inputs: tuple[InputFile, ...], base, fail) -> None:
    """Refuse an argument (or an option's value, ``--platform=cluster.xml``) that names a
    file or folder beside the spec but is not among the inputs: the task's folder would not
    have it."""
    placed = {i.name for i in inputs}
    for arg in args:
        value = option_value(arg)
        if PLACEHOLDER.search(arg) or not value or value.startswith("-") or os.path.isabs(value):
            continue
        name = Path(os.path.normpath(value)).as_posix()
        what = f"model.command: {value!r}" + ("" if value == arg else f" (in {arg!r})")
        if name not in (".", "..") and (base / value).is_dir():
            check_folder_listed(base / value, name, placed, what, fail)
        elif name not in placed and (base / value).is_file():
            raise fail(
                f"{what} is a file beside the spec but not among model.inputs; "
                "list it there so that each task's folder has it"
            )


def check_values_listed(
    params: Mapping[str, Any],
    levels: Mapping[str, Sequence[Any]],
    used: set[str],
    inputs: tuple[InputFile, ...],
    base: Path,
    fail: Fail,
) -> tuple[tuple[str, str], ...]:
    """Refuse a param's or factor's value that a placeholder gives the program and that names
    a file beside the spec but not among the inputs: the task would lack it, or (written with
    a folder, ``./platform.xml``, made absolute) read the spec's own copy, which no digest
    covers and a worker without the spec's folder lacks. The values naming inputs that a
    task's params hold made absolute, each with its input's name."""
    placed = {i.name for i in inputs}
    given = [(f"params.{n}", (v,)) for n, v in params.items() if n in used]
    given += [(f"factors.{n}", tuple(v)) for n, v in levels.items() if n in used]
    named = {}
    for key, values in given:
        for value in values:
            if not isinstance(value, str) or not value or Path(value).is_absolute():
                continue
            name = Path(os.path.normpath(value)).as_posix()
            if name in (".", ".."):  # the task's own folder, or the one above it
                continue
            if (base / value).is_dir():
                check_folder_listed(base / value, name, placed, f"{key}: {value!r}", fail)
            elif not (base / value).is_file():
                continue
            elif name not in placed:
                raise fail(
                    f"{key}: {value!r} is a file beside the spec but not among model.inputs; "
                    "list it there so that each task's folder has it and a change to it is "
                    "seen"
                )
            if "/" in value:  # as `campaign.design.tasks.cell_params` makes it absolute
                named[str((base / value).resolve())] = name
    return tuple(sorted(named.items()))


def check_folder_listed(folder: Path, name: str, placed: set[str], what: str, fail: Fail) -> None:
    """Refuse a folder beside the spec that a placeholder gives the program unless its files
    are among the inputs (listed as the folder): else the task would lack them, or read the
    spec's own copy, whose changes no digest would see."""
    try:
        files = [f"{name}/{rel}" for rel, _ in relative_names(folder)]
    except ValueError as error:
        raise fail(f"{what} is a folder whose files cannot all be read: {error}") from None
    missing = [file for file in files if file not in placed]
    if missing:
        raise fail(
            f"{what} is a folder beside the spec but {missing[0]!r} is not among model.inputs; "
            f"list the folder there (inputs: [{name}]) so that each task's folder has its "
            "files and a change to any of them is seen"
        )


def parse_name_list(raw: Any, key: str, fail: Fail) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(n, str) and n for n in raw):
        raise fail(f"{key}: expected a list of names, got {raw!r}")
    if len(set(raw)) != len(raw):
        raise fail(f"{key}: names repeat: {raw}")
    return tuple(raw)
