"""An external program as a campaign's model: the ``model:`` mapping of a spec, checked.

```yaml
model:
  command: [python3, sim.py, --load, "{load}", --seed, "{seed}"]
  inputs: [sim.py, data/platform.json]
```

Everything that can be checked without running the program is checked here, one line per
problem: the program is found (`campaign.spec.program`: the spec's folder, then PATH; the
first word of a shell line; each program a factor names), every input exists, every
placeholder of the command, of the templates and of ``env`` names a param, a factor or one of
`TASK_PLACEHOLDERS`, and every factor is used by a placeholder (a factor that cannot change
the run would give equal results under different labels) unless listed in ``labels``.
What runs on the worker is `campaign.execute.program_task`; the digests of the programs, the
inputs and ``env`` are the plan's (`campaign.plan.program_sources`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.spec.input_file import InputFile
from campaign.spec.named_files import paths_in_spec
from campaign.spec.placeholders import (
    SEEDING,
    TASK_PLACEHOLDERS,
    check_placeholders,
    placeholders,
    unquoted_placeholder,
)
from campaign.spec.program import Program, find_programs, parse_env
from campaign.spec.program_inputs import (
    check_arguments_listed,
    check_values_listed,
    parse_inputs,
    parse_name_list,
    with_program,
)
from campaign.spec.program_metrics import (
    DeclaredMetric,
    MetricsSource,
    SampleFile,
    parse_declare,
    parse_metrics_source,
)
from campaign.spec.schema_program import PROGRAM, RESOURCES

__all__ = ["CommandSpec", "DeclaredMetric", "MetricsSource", "SampleFile", "parse_command"]

Fail = Callable[[str], CampaignError]

COMMAND_MODEL = "command"  # `Spec.model` of a campaign whose model is a program
COMMAND_KEYS = PROGRAM.docs()  # each key of a program model and its description
SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?i?[bB]?)\s*")
UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
BINARY_UNITS = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}
KEEP_LIMIT = 100 * 10**6  # bytes kept per task unless keep_limit says otherwise


@dataclass(frozen=True)
class Resources:
    """What one task needs of a worker (Dask worker resources): cores and bytes of memory."""

    cores: int = 1
    memory: int = 0

    def dask(self) -> dict[str, float]:
        """The task's Dask resources (those it asks for at all)."""
        asked = {"cores": float(self.cores)}
        if self.memory:
            asked["memory"] = float(self.memory)
        return asked


@dataclass(frozen=True)
class CommandSpec:
    """A program as a model. Every field is hashable and picklable: the worker receives this
    (with ``files``, the digests the plan took) instead of a model name to import."""

    argv: tuple[str, ...]
    program: Program | None  # None: /bin/sh runs the line itself, or a placeholder names it
    inputs: tuple[InputFile, ...] = ()
    metrics: MetricsSource = MetricsSource()
    declare: tuple[DeclaredMetric, ...] = ()
    keep: tuple[str, ...] = ()
    keep_limit: int = KEEP_LIMIT
    shell: bool = False
    labels: tuple[str, ...] = ()
    resources: Resources | None = None
    version: tuple[str, ...] | None = None
    files: tuple[tuple[str, str], ...] = ()  # name -> digest of the program and inputs
    folder: str = ""  # the spec's folder on this machine (where the version command runs)
    env: tuple[tuple[str, str], ...] = ()  # set for the program ({name} placeholders filled)
    chosen_by: str = ""  # the factor or param whose values name the program
    choices: tuple[tuple[str, Program], ...] = ()  # its values -> the programs they name
    # what the plan digested of each program beside its own file: (program, name, digest)
    runtime: tuple[tuple[str, str, str], ...] = ()
    # a param's or factor's value naming an input, as a task's params hold it (made
    # absolute) -> the input's name: a placeholder gives the task's copy
    placed_values: tuple[tuple[str, str], ...] = ()
    # the programs a launcher runs (``mpirun -n 4 mysim``), found on PATH or by absolute path
    launched: tuple[Program, ...] = ()
    # a placeholder that differs between replicates reaches the program (`SEEDING`)
    seeded: bool = True
    # metrics a parser a remetric recorded computes from the kept outputs after the task:
    # declared, yet not asked of the program (`campaign.results.metric_parsers`)
    redefined: tuple[str, ...] = ()
    # the absolute paths the command, its templates and env name (`campaign.spec.named_files`)
    named_paths: tuple[str, ...] = ()

    def __str__(self) -> str:
        return COMMAND_MODEL

    @property
    def cores(self) -> int:
        return self.resources.cores if self.resources else 1

    @property
    def programs(self) -> tuple[Program, ...]:
        """Every program the command may run."""
        if self.program is not None:
            return (self.program,)
        return tuple(program for _, program in self.choices)

    def chosen_program(self, value: Any) -> Program | None:
        """The program a value of ``chosen_by`` names: as written, or as a path (a task's
        params hold a path of the spec's folder made absolute)."""
        for written, program in self.choices:
            if value in (written, program.path):
                return program
        if isinstance(value, str) and os.path.isabs(value):
            real = os.path.realpath(value)
            for _, program in self.choices:
                if os.path.realpath(program.path) == real:
                    return program
        return None

    @property
    def declared(self) -> dict[str, dict[str, str]]:
        """The declared metrics as a model declares them (units, long name, kind)."""
        return {metric.name: metric.documented() for metric in self.declare}

    def identity(self) -> dict[str, Any]:
        """What the stored results depend on besides the program's and inputs' contents."""
        return {
            "command": list(self.argv),
            "shell": self.shell,
            "templates": [i.name for i in self.inputs if i.template],
            "metrics": str(self.metrics),
            "cores": self.cores,
        }


def parse_command(
    raw: dict[str, Any],
    params: dict[str, Any],
    factor_names: list[str],
    base: Path,
    fail: Fail,
    levels: Mapping[str, Sequence[Any]] | None = None,
) -> CommandSpec:
    """The ``model:`` mapping of a spec whose model is a program (``base``: the spec's folder;
    ``levels``: each factor's values, for a factor that names the program)."""
    PROGRAM.check(raw, fail)
    shell = raw.get("shell", False)
    if not isinstance(shell, bool):
        raise fail(f"model.shell: {shell!r} is not allowed; use true or false")
    argv = parse_argv(raw["command"], shell, fail)
    inputs = parse_inputs(raw.get("inputs"), raw.get("templates"), base, fail)
    values = {name: (value,) for name, value in params.items()} | dict(levels or {})
    found = find_programs(argv, shell, values, base, fail, {i.name for i in inputs})
    for program in (found.program, *(program for _, program in found.choices)):
        if program is not None and program.placed:
            inputs = with_program(inputs, program)
    env = parse_env(raw.get("env"), fail)
    names = {*params, *factor_names}
    clash = sorted(names & set(TASK_PLACEHOLDERS))
    if clash:
        raise fail(
            f"{clash[0]!r} names a param or factor and a placeholder of the task "
            f"({', '.join(TASK_PLACEHOLDERS)}): rename it"
        )
    used = check_placeholders(argv, inputs, names, fail, env)
    if not shell:
        check_arguments_listed(argv[1:], inputs, base, fail)
    placed_values = check_values_listed(
        params, levels or {}, used - {found.chosen_by}, inputs, base, fail
    )
    labels = parse_name_list(raw.get("labels"), "model.labels", fail)
    for label in labels:
        if label not in factor_names:
            raise fail(f"model.labels: {label!r} is not a factor; factors: {factor_names}")
    for factor in factor_names:
        if factor not in used and factor not in labels:
            raise fail(
                f"factor {factor!r} is used by no placeholder of the command or its templates, "
                f"so it cannot change the run: use {{{factor}}}, or list it in model.labels if "
                "it only labels the results"
            )
    for param in params:
        if param not in used:
            raise fail(
                f"param {param!r} is used by no placeholder of the command, its templates or "
                f"model.env, so the program never sees it: use {{{param}}}, or leave it out "
                "of params"
            )
    resources = parse_resources(raw.get("resources"), "model.resources", fail)
    declare = parse_declare(raw.get("declare"), fail)
    metrics = parse_metrics_source(raw.get("metrics", "stdout"), declare, fail, "metrics" in raw)
    return CommandSpec(
        argv=argv,
        program=found.program,
        inputs=inputs,
        metrics=metrics,
        declare=declare,
        keep=parse_keep(raw.get("keep"), fail),
        keep_limit=parse_size(raw.get("keep_limit", KEEP_LIMIT), "model.keep_limit", fail),
        shell=shell,
        labels=labels,
        resources=resources,
        version=parse_version(raw.get("version"), fail, {*names, *TASK_PLACEHOLDERS}),
        folder=os.path.abspath(base),
        env=env,
        chosen_by=found.chosen_by,
        choices=found.choices,
        launched=found.launched,
        placed_values=placed_values,
        seeded=bool(used & SEEDING),
        named_paths=paths_in_spec(argv, shell, inputs, env),
    )


def check_seeded(command: CommandSpec | None, replicates: int, what: str, fail: Fail) -> None:
    """Refuse replicates of a program that never sees a seed: each replicate would run the
    same command, and their interval (+-0, or the spread of a clock-seeded generator that no
    rerun gives again) would state a precision no run measured. ``what``: the key that sets
    the replicates."""
    if command is None or command.seeded or replicates < 2:
        return
    count = f"{replicates} replicates" if what == "replicates" else f"up to {replicates} replicates"
    placeholders = ", ".join(f"{{{name}}}" for name in sorted(SEEDING))
    raise fail(
        f"{what}: {count} of a program that sees no seed would each run the same command "
        f"(none of {placeholders} is in model.command, model.env or a template); pass the "
        'task\'s seed to the program (say --seed, "{seed}"), or set replicates: 1 if the '
        "program is deterministic"
    )


def parse_argv(raw: Any, shell: bool, fail: Fail) -> tuple[str, ...]:
    """The command: a list of arguments (numbers become text); with shell, also one string."""
    if shell and isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise fail(
            "model.command: expected a list [program, argument, ...] (one item per argument), "
            f"got {raw!r}"
        )
    argv = []
    for item in raw:
        name = unquoted_placeholder(item)
        if name:
            raise fail(
                f"model.command: {{{name}}} unquoted is a YAML mapping, not an argument: "
                f'write "{{{name}}}"'
            )
        if isinstance(item, bool) or not isinstance(item, str | int | float) or item == "":
            raise fail(f"model.command: {item!r} is not an argument; use text or a number")
        argv.append(str(item))
    return tuple(argv)


def parse_keep(raw: Any, fail: Fail) -> tuple[str, ...]:
    """``keep:``: shell globs of paths inside the task's folder, and stdout and stderr."""
    patterns = parse_name_list(raw, "model.keep", fail)
    for pattern in patterns:
        if pattern.startswith("/") or any(p in ("", ".", "..") for p in pattern.split("/")):
            raise fail(
                f"model.keep: {pattern!r} must name files inside the task's folder (a relative "
                "path or glob such as out/*.csv or **/*.log; stdout, stderr)"
            )
    return patterns


def parse_resources(raw: Any, key: str, fail: Fail) -> Resources | None:
    """``{cores: N, memory: 8GB}``: what one task needs of a worker."""
    if raw is None:
        return None
    RESOURCES.check(raw, fail, key)
    if not raw:
        raise fail(f"{key}: expected {{cores: N, memory: SIZE}}, got {raw!r}")
    cores = raw.get("cores", 1)
    if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
        raise fail(f"{key}.cores: {cores!r} is not allowed; use an integer >= 1")
    memory = parse_size(raw["memory"], f"{key}.memory", fail) if "memory" in raw else 0
    return Resources(cores, memory)


def parse_size(raw: Any, key: str, fail: Fail) -> int:
    """A size in bytes: a count, or 8GB, 512MiB, 100MB, 2kB."""
    if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0:
        return raw
    match = SIZE.fullmatch(raw) if isinstance(raw, str) else None
    unit = match[2].lower().removesuffix("b") if match else ""
    if match is None or (unit not in UNITS and unit not in BINARY_UNITS):
        raise fail(f"{key}: {raw!r} is not a size; use bytes or e.g. 8GB, 512MiB")
    size = int(float(match[1]) * {**UNITS, **BINARY_UNITS}[unit])
    if size <= 0:
        raise fail(f"{key}: {raw!r} is not allowed; use a size > 0")
    return size


def parse_version(raw: Any, fail: Fail, names: Iterable[str] = ()) -> tuple[str, ...] | None:
    """The version command; a placeholder naming a param, a factor or a task's value
    (``names``) is refused: the command runs once per plan, where no task's values are."""
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(a, str) and a for a in raw):
        raise fail(f"model.version: expected a command [program, --version], got {raw!r}")
    named = [name for argument in raw for name in placeholders(argument) if name in set(names)]
    if named:
        raise fail(
            f"model.version: {{{named[0]}}} is not filled: the version command runs once per "
            "plan, in the spec's folder, not per task or per level; name the program "
            "([./sim, --version])"
        )
    return tuple(raw)
