"""What a program's results are computed from: its files, its environment, its runtime.

- **code** (`command_files`, every task reads it): each input by the name it is placed under,
  the program when it is the command's own item (placed, or on PATH), the ``{parse:}``
  parser's code, and each ``env`` variable (``env NAME``, a digest of its value as written).
  A recompiled program, an edited input or another ``env`` value makes every stored result
  stale.
- **programs** (`program_files`, per program): what each program runs besides the code above,
  as `campaign.plan.runtime` lists it (its interpreter, its shared libraries), and the
  program's own file when it is not among the code: the first word of a shell line found on
  PATH, each program a launcher runs found on PATH (``[mpirun, -n, 2, mysim]``), and each
  program a factor names; for a program a Python runs, the libraries its Python inputs
  import (`campaign.plan.script_libraries`). A cell runs one program, so when a factor names
  the program (``{sim}`` with ``sim: {v1: ./mw.v1, v2: ./mw}``), a changed version or library
  makes only the tasks of the levels that run it stale.
- **engine** (per program model): the libraries a ``{parse:}`` parser imports, as a Python
  model's (`campaign.plan.model_libraries.parser_libraries`).

The worker is sent these digests and compares its own copies with them
(`campaign.execute.program_task.files_here`), so a worker with another copy of a program or of a
library is not used.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.plan.model_libraries import parser_libraries
from campaign.plan.outside_files import outside_arguments, outside_digest, outside_values
from campaign.plan.runtime import binary_libraries, digest, runtime_files
from campaign.plan.script_libraries import script_libraries, script_modules
from campaign.plan.sources import Sources, code_files, file_digest
from campaign.plan.version import program_version
from campaign.spec.command_model import CommandSpec
from campaign.spec.program import Program

ENV_PREFIX = "env "  # a variable of model.env among the code's names
PARSER_PREFIX = "parser: "  # a file of the ``{parse:}`` parser's code among the code's names


def command_files(command: CommandSpec) -> dict[str, str]:
    """The code of a program (see the module): name -> digest."""
    chosen = {placed_name(program) for _, program in command.choices if program.placed}
    files = {
        item.name: _digest(Path(item.path)) for item in command.inputs if item.name not in chosen
    }
    program = command.program
    if program is not None and not program.placed and not command.shell:
        files[program.name] = _digest(Path(program.path))
    for name, value in command.env:
        files[ENV_PREFIX + name] = hashlib.blake2b(value.encode(), digest_size=32).hexdigest()
    if command.metrics.kind == "parse":  # the parser's code decides the metrics too
        try:
            files.update(parser_files(command.metrics.name))
        except ValueError as error:
            raise CampaignError(f"model.metrics.parse: {error}") from None
    return files


def parser_files(name: str) -> dict[str, str]:
    """The code of a ``{parse: module:function}`` parser among a program's code: each file,
    named after `PARSER_PREFIX`, -> its digest. Its module is imported (afresh when a file of
    it changed since this process imported it: `campaign.plan.model_code.current_model`),
    so that the digest is that of the code this process runs; an import error is one
    ``ValueError``."""
    return {f"{PARSER_PREFIX}{file}": digest for file, digest in code_files(name).items()}


def digested_programs(command: CommandSpec) -> tuple[Program, ...]:
    """Every program whose runtime is digested: the command's own (or each a factor names),
    each a launcher runs found on PATH (``mpirun -np 4 mysim``: `campaign.spec.launchers`),
    and each input that is an executable binary or script, as a launcher runs it
    (``mpirun -np 4 ./sim``, ``timeout 60 ./sim``)."""
    programs = list(command.programs)
    programs += [p for p in command.launched if p.name not in {q.name for q in programs}]
    taken = {placed_name(p) for p in programs if p.placed}
    for item in command.inputs:
        if not item.template and item.name not in taken and is_executable(item.path):
            programs.append(Program(item.name, item.path, placed=True))
    return tuple(programs)


def checked_programs(command: CommandSpec) -> tuple[Program, ...]:
    """The programs whose runtime a worker checks: those the plan digested (``runtime``)."""
    known = {p.name: p for p in (*command.launched, *command.programs)}
    known.update(
        (i.name, Program(i.name, i.path, True)) for i in command.inputs if i.name not in known
    )
    owners = dict.fromkeys(owner for owner, _, _ in command.runtime)
    return tuple(known[owner] for owner in owners if owner in known)


def is_executable(path: str) -> bool:
    """An executable file that is a binary or a script (``#!``)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except OSError:
        return False
    return os.access(path, os.X_OK) and (head == b"\x7fELF" or head.startswith(b"#!"))


def program_files(
    command: CommandSpec, program: Program, path: str, modules: list[str] | None = None
) -> dict[str, str]:
    """What ``program`` (found at ``path`` on this machine) runs beyond `command_files`
    (its interpreter and libraries, the Python libraries a Python program imports, and its
    own file when not among the code): name -> digest. ``modules``: those Python libraries
    (a worker is given the plan's list: the inputs are not read there)."""
    env = program_environment(command)
    inputs = {os.path.realpath(item.path) for item in command.inputs}
    files = runtime_files(path, env, inputs)
    modules = script_modules(command) if modules is None else modules
    files.update(script_libraries(path, modules, env))
    chosen = any(program == choice for _, choice in command.choices)
    launched = program in command.launched and program != command.program
    if chosen or launched or (command.shell and program == command.program and not program.placed):
        files[program.name] = digest(path) if os.path.isfile(path) else "not found"
    return files


def check_libraries_listed(command: CommandSpec, program: Program) -> None:
    """Refuse a program placed with the inputs that loads a library of the spec's folder not
    among them: a worker runs the program's copy, which finds no such library beside it
    (``$ORIGIN``), or the spec's own file, whose rebuild nothing would see travel."""
    if not program.placed or not command.folder:
        return
    listed = {os.path.realpath(item.path) for item in command.inputs}
    folder = os.path.realpath(command.folder)
    for name, where in binary_libraries(program.path, program_environment(command)):
        real = os.path.realpath(where) if where else ""
        if real and Path(real).is_relative_to(folder):
            if real not in listed:
                relative = Path(real).relative_to(folder).as_posix()
                raise CampaignError(
                    f"model.inputs: {program.name} loads {name} from the spec's folder "
                    f"({relative}), which is not among the inputs: list it there, so that it "
                    "travels with the program and a rebuild of it is seen"
                )


def program_environment(command: CommandSpec) -> dict[str, str]:
    """The environment a program finds its interpreter and libraries with: this process's,
    with ``env`` (values without placeholders: those are known per task only)."""
    env = dict(os.environ)
    env.update((name, value) for name, value in command.env if "{" not in value)
    return env


def placed_name(program: Program) -> str:
    """The name a program of the spec's folder is placed under in a task's folder."""
    return Path(os.path.normpath(program.name)).as_posix()


def runtime_name(program: str, name: str) -> str:
    """How a worker's check names what a program runs (``./mw: libsimgrid.so.3.35``)."""
    return f"{program}: {name}"


def expected_files(command: CommandSpec) -> dict[str, str]:
    """Name -> digest of every file a worker must have as the plan digested it (the code,
    and what each program runs); `campaign.execute.program_task.files_here` is the worker's own."""
    files = dict(command.files)
    files.update((runtime_name(program, name), d) for program, name, d in command.runtime)
    return files


def command_sources(
    command: CommandSpec, cells: Iterable[tuple[str, Mapping[str, Any]]] = ()
) -> Sources:
    """The digests of a program, its inputs and runtime, and its version; with a factor
    naming the program, which program each cell ((cell digest, params)) runs; and the files
    each cell names by absolute path (`campaign.plan.outside_files`)."""
    for program in digested_programs(command):
        check_libraries_listed(command, program)
    programs = {p.name: program_files(command, p, p.path) for p in digested_programs(command)}
    cell_programs: dict[str, str] = {}
    names: dict[Any, str] = {}  # a value of the factor -> the program it names
    inputs: dict[str, str] = {}
    cell_inputs: dict[str, tuple[str, ...]] = {}
    for cell, params in cells:
        paths = outside_values(command, params)
        if paths:
            cell_inputs[cell] = paths
            inputs.update((path, outside_digest(path)) for path in paths if path not in inputs)
        if not command.chosen_by:
            continue
        value = params[command.chosen_by]
        if value not in names:
            chosen = command.chosen_program(value)
            names[value] = chosen.name if chosen is not None else ""
        if names[value]:
            cell_programs[cell] = names[value]
    version = program_version(command.version, command.folder)
    try:
        engine = parser_libraries(command)
    except ValueError as error:
        raise CampaignError(f"model.metrics.parse: {error}") from None
    return Sources(
        code={**command_files(command), **outside_arguments(command)},
        inputs=inputs,
        cell_inputs=cell_inputs,
        version=version,
        programs=programs,
        cell_programs=cell_programs,
        engine=engine,
    )


def _digest(path: Path) -> str:
    try:
        return file_digest(path)
    except OSError as error:
        raise CampaignError(f"cannot read {path} to take its digest: {error.strerror}") from None
