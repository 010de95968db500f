"""Run one task of a program on a worker: its own folder, its inputs, its metrics.

For each task: a fresh folder below the worker's scratch folder; the inputs linked there
under their own names from the worker's cache (read-only: `campaign.execute.inputs`); the
templates filled; the command's placeholders filled (each item stays one argument, no shell
unless asked for); the program started in a process group of its own
(`campaign.execute.process_tree`) with stdout and stderr written to files (a huge output
never fills a pipe or the worker's memory); the metrics read from the outputs
(`campaign.execute.command_metrics`); the outputs to keep gathered; the folder removed.

A failure is one line: the exit code or the signal's name and the last lines of stderr, a
missing output, garbage, an undeclared metric. Which failures are worth another try
(``transient``): a program killed by SIGKILL (the kernel's out-of-memory killer, the machine's
administrator) and a fault of the task's surroundings (no room left for its folder). An exit
code, another signal (a segfault) or bad output come back the same on every try.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import uuid
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import campaign.execute.keep as keep
import campaign.execute.process_tree as process_tree
from campaign.design.seeds import seed31
from campaign.execute.command_metrics import FolderOutputs, metrics_from_outputs
from campaign.execute.input_integrity import InputChanged, check_unchanged
from campaign.execute.inputs import cache_folder, cached_input
from campaign.execute.printed import PRINTING, failure_outputs, printed, stderr_tail
from campaign.plan.program_sources import (
    PARSER_PREFIX,
    checked_programs,
    expected_files,
    parser_files,
    placed_name,
    program_environment,
    program_files,
    runtime_name,
)
from campaign.plan.script_libraries import MODULE_PREFIX
from campaign.plan.sources import combined_digest, file_digest
from campaign.results.check import check_declared
from campaign.results.names import metric_values
from campaign.spec.command_model import CommandSpec
from campaign.spec.placeholders import fill, fill_shell_line, value_text
from campaign.spec.program import Program

TASKS_FOLDER = "campaign-tasks"
TRANSIENT_SIGNALS = (signal.SIGKILL,)


class CommandFailed(Exception):
    """A task of a program failed: ``outputs`` as kept, ``transient`` if worth another try."""

    def __init__(self, message: str, outputs: dict[str, bytes], transient: bool = False):
        super().__init__(message)
        self.outputs = outputs
        self.transient = transient


def command_code(command: CommandSpec) -> str:
    """The digest of the program and inputs this worker runs (`files_here`), which the driver
    compares with its own: a worker whose copy differs is not used."""
    return combined_digest(files_here(command))


def differing_files(command: CommandSpec) -> list[str]:
    """What this worker has otherwise than the plan digested it (`expected_files`), one
    phrase each ("mysim differs", "python3: module numpy is 1.26.4 there, 2.4.6 here"): what
    the run stops with when a worker's `command_code` is not the plan's."""
    here, plan = files_here(command), expected_files(command)
    phrases = []
    for name in sorted({*here, *plan}):
        theirs, mine = here.get(name, "not found"), plan.get(name, "not found")
        if theirs == mine:
            continue
        if theirs.startswith("not found"):
            phrases.append(f"{name} is {theirs}")
        elif name.partition(": ")[2].startswith(MODULE_PREFIX):
            phrases.append(f"{name} is {theirs} there, {mine} here")
        else:
            phrases.append(f"{name} differs")
    return phrases


@lru_cache(maxsize=16)
def _program_digest(path: str, stamp: tuple[int, int, int]) -> str:
    return file_digest(path)


def files_here(command: CommandSpec) -> dict[str, str]:
    """Name -> digest of each file this worker would run: the inputs as cached (by the digest
    they arrived under), a program found on this worker's PATH as it is here, what each
    program runs here (its interpreter and libraries, as `expected_files` names them), and a
    ``parse:`` parser's code as this process imports it: afresh once its files changed, as a
    long-lived worker that ran it in an earlier run would otherwise go on running its old
    code under the new code's digest. A file an argument names by absolute path is read here
    too (each worker reads its own: a node's local copy may differ)."""
    files = dict(command.files)
    if command.metrics.kind == "parse":
        files = {name: d for name, d in files.items() if not name.startswith(PARSER_PREFIX)}
        files.update(parser_files(command.metrics.name))
    search = program_environment(command).get("PATH")
    program = command.program
    if program is not None and not program.placed and program.name in files:
        path = resolve_on_path(program.name, search)
        if path is None:
            files[program.name] = "not found on this worker's PATH"
        else:
            files[program.name] = _digest_here(path)
    for name in [n for n in files if os.path.isabs(n) and (program is None or n != program.name)]:
        files[name] = _outside_file(name)  # an argument naming a file: read here, not sent
    for program in checked_programs(command):
        expected = [name for owner, name, _ in command.runtime if owner == program.name]
        if not expected:
            continue
        path = program_here(command, program, search)
        modules = [n.removeprefix(MODULE_PREFIX) for n in expected if n.startswith(MODULE_PREFIX)]
        here = program_files(command, program, path, modules) if path else {}
        for name in expected:
            files[runtime_name(program.name, name)] = here.get(name, "not found on this worker")
    return files


def _outside_file(path: str) -> str:
    """The digest of a file an argument names by absolute path, as this worker has it."""
    try:
        return _digest_here(path)
    except OSError:
        return "not found on this worker"


def _digest_here(path: str) -> str:
    """A file's digest as this worker has it, read again only once its identity changed."""
    stat = os.stat(path)
    return _program_digest(path, (stat.st_ino, stat.st_size, stat.st_mtime_ns))


def program_here(command: CommandSpec, program: Program, search: str | None) -> str | None:
    """Where a program is on this worker: its cached copy (placed with the inputs), or on
    PATH."""
    if not program.placed:
        return resolve_on_path(program.name, search)
    digest = dict(command.files).get(placed_name(program))
    try:
        return str(cached_input(digest, program.name, program.path)) if digest else None
    except (FileNotFoundError, InputChanged):  # not here as it arrived: another program
        return None


def resolve_on_path(name: str, search: str | None = None) -> str | None:
    found = shutil.which(name, path=search)
    return os.path.abspath(found) if found else None


def run_command(
    command: CommandSpec,
    params: Mapping[str, Any],
    seed: int,
    key: str,
    replicate: int,
    cancelled: Callable[[], bool] = lambda: False,
    batch: str | None = None,
) -> tuple[dict[str, float], dict[str, bytes], dict[str, object]]:
    """Run one task of the program; its metrics as a record stores them (`metric_values`,
    held to the declaration), the outputs to keep and what its record says of its ``keep``
    patterns (raises `CommandFailed`, or `process_tree.Cancelled` when the task is no longer
    wanted). ``batch`` names the batch in the program's environment
    (`process_tree.end_batch`)."""
    root = tasks_folder()
    name = f"{key[:40]}-{uuid.uuid4().hex[:8]}"
    folder = root / name
    streams = {"stdout": root / f"{name}.stdout", "stderr": root / f"{name}.stderr"}
    try:
        try:
            folder.mkdir(parents=True)
            values = placeholder_values(command, params, seed, key, replicate, folder)
            placed, linked = place_inputs(command, folder, values)
            argv = command_line(command, folder, values)
            env = task_environment(command, values, batch)
        except OSError as error:
            raise CommandFailed(f"cannot prepare the task's folder: {error}", {}, True) from None
        except InputChanged as error:
            raise CommandFailed(str(error), {}) from None
        with open(streams["stdout"], "wb") as out, open(streams["stderr"], "wb") as err:
            try:
                process = process_tree.start(argv, folder, out, err, env)
            except OSError as error:
                raise CommandFailed(f"cannot start {argv[0]}: {error}", {}, False) from None
            outputs = FolderOutputs(folder, streams)
            if batch is not None:
                PRINTING[batch] = (key, lambda: printed(command, outputs, placed))
            try:
                code = process_tree.wait(process, cancelled)
            finally:
                PRINTING.pop(batch, None)
        try:
            for cached, digest, name in linked:  # shared with every task of this worker
                check_unchanged(cached, digest, name)
        except InputChanged as error:
            raise CommandFailed(str(error), failure_outputs(command, outputs, placed)) from None
        if code != 0:
            failure = exit_failure(command, code, streams["stderr"])
            kept = failure_outputs(command, outputs, placed)
            raise CommandFailed(failure, kept, code == -signal.SIGKILL)
        try:
            metrics = metric_values(metrics_from_outputs(command.metrics, outputs))
            check_declared(command, metrics)
            kept, notes = kept_outputs(command, outputs, placed)
        except (ValueError, TypeError) as error:
            raise CommandFailed(str(error), failure_outputs(command, outputs, placed)) from None
        return metrics, kept, notes
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        for path in streams.values():
            path.unlink(missing_ok=True)


def tasks_folder() -> Path:
    """Where this worker's tasks get their folders: beside its input cache."""
    return cache_folder().parent / TASKS_FOLDER


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the program binds it soon after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def placeholder_values(
    command: CommandSpec,
    params: Mapping[str, Any],
    seed: int,
    key: str,
    replicate: int,
    folder: Path,
) -> dict[str, str]:
    """Every placeholder's text for this task (a value naming an input: the task's copy)."""
    placed = dict(command.placed_values)
    values = {
        name: str(folder / placed[value])
        if isinstance(value, str) and value in placed
        else value_text(value)
        for name, value in params.items()
    }
    values.update(
        seed=str(seed),
        seed31=str(seed31(seed)),
        replicate=str(replicate),
        task=key,
        dir=str(folder),
        cores=str(command.cores),
    )
    if command.chosen_by:  # the program this task runs: its copy in the folder, or its name
        program = command.chosen_program(params[command.chosen_by])
        if program is None:
            raise ValueError(f"{command.chosen_by}: {params[command.chosen_by]!r} names no program")
        values[command.chosen_by] = (
            str(folder / placed_name(program)) if program.placed else program.name
        )
    if "{port}" in " ".join(command.argv) or any(i.template for i in command.inputs):
        values["port"] = str(free_port())
    return values


def place_inputs(
    command: CommandSpec, folder: Path, values: Mapping[str, str]
) -> tuple[set[tuple[int, int]], list[tuple[Path, str, str]]]:
    """Link each input into the task's folder under its own name; fill the templates. Returns
    the files placed, by (device, inode): they are never kept; and the cached files linked
    (with their digests and names), which the task must leave as they are."""
    digests = dict(command.files)
    placed = set()
    linked = []
    for item in command.inputs:
        target = folder / item.name
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = digests.get(item.name) or file_digest(item.path)
        cached = cached_input(digest, item.name, item.path)
        if item.template:
            target.write_text(fill(cached.read_text(encoding="utf-8"), values), encoding="utf-8")
        else:
            try:
                os.link(cached, target)
                linked.append((cached, digest, item.name))
            except OSError:
                shutil.copy2(cached, target)
        placed.add(keep.identity(target))
    return placed, linked


def command_line(command: CommandSpec, folder: Path, values: Mapping[str, str]) -> list[str]:
    """The program and its arguments for this task."""
    if command.shell:
        return ["/bin/sh", "-c", fill_shell_line(" ".join(command.argv), values)]
    argv = [fill(item, values) for item in command.argv[1:]]
    program = command.program
    if program is not None and program.placed:
        executable = str(folder / placed_name(program))
    else:
        first = fill(command.argv[0], values)  # a placeholder names the task's program
        search = program_environment(command).get("PATH")
        executable = first if "/" in first else resolve_on_path(first, search) or first
    return [executable, *argv]


def task_environment(
    command: CommandSpec, values: Mapping[str, str], batch: str | None = None
) -> dict[str, str] | None:
    """The program's environment: the worker's, with ``env`` (its placeholders filled) and
    the batch it runs for."""
    extra = program_variables(command, values)
    if batch:
        extra[process_tree.BATCH_VARIABLE] = batch
    return {**os.environ, **extra} if extra else None


def program_variables(command: CommandSpec, values: Mapping[str, str]) -> dict[str, str]:
    """The variables ``env`` sets for the program, its placeholders filled."""
    return {name: fill(value, values) for name, value in command.env}


def exit_failure(command: CommandSpec, code: int, stderr: Path) -> str:
    """One line: how the program ended and the last lines of its stderr."""
    program = command.argv[0] if not command.shell else "the shell command"
    if code < 0:
        how = f"{program} was killed by {process_tree.signal_name(code)}"
    else:
        how = f"{program} exited with code {code}"
    tail = stderr_tail(stderr)
    return f"{how}; stderr: {tail}" if tail else f"{how}; stderr was empty"


def kept_outputs(
    command: CommandSpec, outputs: FolderOutputs, placed: Iterable[tuple[int, int]] = ()
) -> tuple[dict[str, bytes], dict[str, object]]:
    """The outputs a finished task keeps: what ``keep`` names (`campaign.execute.keep`; the
    inputs ``placed`` in its folder never), and what its record says of the patterns; over
    ``keep_limit`` the task fails."""
    if not command.keep:
        return {}, {}
    selection = keep.select(command.keep, outputs.folder, outputs.streams, placed)
    size = sum(path.stat().st_size for path in selection.paths.values())
    if size > command.keep_limit:
        raise ValueError(
            f"the outputs to keep are {size:,} bytes, over the limit of {command.keep_limit:,} "
            "bytes per task (model.keep_limit)"
        )
    return {name: path.read_bytes() for name, path in selection.paths.items()}, selection.notes()
