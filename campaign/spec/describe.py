"""A spec in words, as `campaign validate` and `campaign plan` print it: its params, factors,
design, replicates, precision target, metrics and output folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from campaign.spec.command_model import CommandSpec
from campaign.spec.input_file import InputFile
from campaign.spec.load import Factor, Precision, Spec
from campaign.spec.named_files import named_files, path_patterns
from campaign.spec.program import Program
from campaign.spec.selection import systems_share_seeds
from campaign.spec.types import DEFAULT_PERCENTILES


def describe_spec(spec: Spec) -> str:
    lines = [f"campaign {spec.name}: model {spec.model}"]
    if spec.command is not None:
        lines[0] += f": {' '.join(spec.command.argv)}"
        if spec.command.inputs:
            lines.append(f"  inputs: {describe_inputs(spec.command.inputs)}")
        lines.append(f"  {describe_programs(spec.command)}")
        named = (*named_files(spec.command), *path_patterns(spec.command))
        if named:
            lines.append(f"  files by path: {', '.join(named)} (digested; read on each worker)")
        if spec.command.env:
            lines.append(f"  env: {', '.join(f'{n}={v}' for n, v in spec.command.env)}")
    if spec.description:
        lines.append(f"  {spec.description.strip()}")
    for name, value in spec.params.items():
        lines.append(f"  param  {name} = {value!r}")
    lines.extend(f"  {line}" for line in describe_factors(spec))
    lines.extend(f"  {line}" for line in describe_design(spec))
    lines.extend(f"  {line}" for line in describe_size(spec))
    if spec.metrics:
        lines.append(f"  metrics: {', '.join(spec.metrics)}")
    if spec.percentiles != DEFAULT_PERCENTILES:
        lines.append(f"  percentiles of samples: {', '.join(map(str, spec.percentiles))}")
    lines.append(f"  output: {spec.output}")
    return "\n".join(lines)


def describe_inputs(inputs: tuple[InputFile, ...]) -> str:
    """The inputs by name; a folder's as the folder, with how many files and bytes it holds
    (each is digested at every plan and run, and sent to every worker)."""
    folders: dict[str, list[InputFile]] = {}
    names = []
    for item in inputs:
        if item.folder and item.folder not in folders:
            names.append(item.folder)
        if item.folder:
            folders.setdefault(item.folder, []).append(item)
        else:
            names.append(item.name)
    for folder, files in folders.items():
        size = sum(os.path.getsize(item.path) for item in files)
        count = "1 file" if len(files) == 1 else f"{len(files):,} files"
        names[names.index(folder)] = f"{folder}/ ({count}, {byte_size(size)})"
    return ", ".join(names)


def byte_size(size: float) -> str:
    """A size in bytes as people read it: 512 B, 1.5 kB, 2.0 MB (decimal units)."""
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} GB"


# a version manager's shim (pyenv, rbenv, asdf): a script starting the version its settings
# choose where it runs, which its digest does not say
SHIMS = "shims"
SHIM_NOTE = (
    "a version manager's shim: the version it starts is not digested, name the interpreter "
    "itself, e.g. the path `pyenv which python3` prints"
)


def describe_programs(command: CommandSpec) -> str:
    """Which program the command runs, as digested: with the inputs, or on PATH here; and
    those a launcher runs (``mpirun -n 2 mysim``)."""

    def found(program: Program) -> str:
        where = "with the inputs" if program.placed else f"on PATH here: {program.path}"
        if SHIMS in Path(program.path).parts[:-1]:
            where += f"; {SHIM_NOTE}"
        return f"{program.name} ({where})"

    running = "".join(f", running {found(program)}" for program in command.launched)
    if command.choices:
        named = ", ".join(f"{found(program)}" for _, program in command.choices)
        return f"program: {{{command.chosen_by}}} names one of {named}{running}"
    if command.program is None:
        return "program: none (the shell line starts with a builtin or shell syntax)"
    return f"program: {found(command.program)}{running}"


def describe_factors(spec: Spec) -> list[str]:
    """A line per factor: its range, or its levels (and whether it is paired)."""
    lines = []
    for factor in spec.factors:
        paired = " (paired)" if factor.name in spec.paired else ""
        if factor.range is not None:
            low, high = factor.range
            on = [
                w
                for w, used in (("integer", factor.integer), ("log scale", factor.scale == "log"))
                if used
            ]
            how = f" ({', '.join(on)})" if on else ""
            lines.append(f"factor {factor.name}{paired}: range {low:g} to {high:g}{how}")
            continue
        levels = describe_levels(factor)
        if factor.labels == ("low", "high"):  # a range only in a design of points
            levels += (
                " (labelled levels; a range {low, high} needs design: latin_hypercube or sobol)"
            )
        lines.append(f"factor {factor.name}{paired}: {len(factor.labels)} levels{levels}")
    return lines


def describe_levels(factor: Factor) -> str:
    """A factor's levels and their type, as a model or program receives them: ``(numbers):
    1.0, 1.5`` for a list (one type), ``label = value (type)`` each for a mapping."""
    if not factor.labelled:
        kinds = {value_kind(value) for value in factor.values}
        kind = f" ({kinds.pop()}s)" if len(kinds) == 1 else ""
        return kind + ": " + ", ".join(str(label) for label in factor.labels)
    shown = (
        f"{label} = {shorten(json.dumps(value) if isinstance(value, list | dict) else str(value))}"
        f" ({value_kind(value)})"
        for label, value in zip(factor.labels, factor.values)
    )
    return ": " + ", ".join(shown)


def value_kind(value: object) -> str:
    """A value's type in words."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "list"
    return "mapping" if isinstance(value, dict) else "null" if value is None else "value"


def shorten(text: str, most: int = 40) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def describe_size(spec: Spec) -> list[str]:
    """Cells, replicates and tasks, and the precision target or selection that sets the
    replicates."""
    if spec.selection is not None:
        return describe_selection(spec)
    if spec.precision is None:
        return [
            f"design: {spec.cells} cells x {spec.replicates} replicates = {spec.tasks} tasks; "
            f"seed {spec.seed}"
        ]
    least = spec.precision.min_replicates
    return [
        f"design: {spec.cells} cells x {least} to {spec.replicates} replicates = "
        f"{spec.cells * least} to {spec.tasks} tasks; seed {spec.seed}",
        precision_target(spec.precision),
    ]


def describe_selection(spec: Spec) -> list[str]:
    """A selection's design and stages in words."""
    selection = spec.selection
    first, among = selection.first, selection.among
    others = [f.name for f in spec.factors if f.name != among]
    best = "smallest" if selection.goal == "min" else "largest"
    what = f"the cell with the {best} mean of {selection.metric}"
    if among is not None:
        at = f" at each {others[0]}" if len(others) == 1 else ""
        at = f" at each combination of {', '.join(others)}" if len(others) > 1 else at
        what = f"the level of {among} with the {best} mean of {selection.metric}{at}"
    zone = f"{selection.indifference:g}"
    if selection.relative:
        zone = f"{selection.indifference * 100:g}% of the best first-stage mean"
    stages = f"{selection.batch} more per stage until one system is left"
    if selection.procedure == "ocba":
        systems = (
            spec.cells
            if among is None
            else next(len(f.labels) for f in spec.factors if f.name == among)
        )
        stages = (
            f"then {selection.batch} x {systems} more per stage, split by OCBA's ratios, until "
            f"{selection.budget} tasks per group are spent"
        )
    elif selection.procedure == "gsp":
        stages = (
            f"then {selection.rounds} screening rounds of about {selection.batch} more per "
            "system (sized to its deviation) and a final Rinott stage, until one system is "
            "left or the final stage has run"
        )
    paired = systems_share_seeds(selection, [f.name for f in spec.factors], list(spec.paired))
    crn = "common random numbers" if paired else ""
    advice = f"paired: [{among or '...'}] for common random numbers"
    if selection.procedure == "gsp":  # which refuses them
        advice = "gsp assumes them"
    crn = crn or f"independent systems ({advice})"
    return [
        f"design: {spec.cells} cells x {first} to {spec.replicates} replicates = "
        f"{spec.cells * first} to {spec.tasks} tasks; seed {spec.seed}",
        f"select: {what}, by {selection.procedure}, indifference zone {zone}, probability of a "
        f"correct selection {selection.pcs:g}; {first} replicates first, {stages} (at most "
        f"{spec.replicates} each); {crn}",
    ]


def precision_target(precision: Precision) -> str:
    """The precision target in words."""
    return (
        f"precision: interval half-width at most {precision_bound(precision)} at "
        f"{precision.confidence * 100:g}% confidence, for {', '.join(precision.metrics)}"
    )


def precision_bound(precision: Precision) -> str:
    """The half-width a precision target allows: absolute, or a share of |mean|."""
    if precision.relative:
        return f"{precision.half_width * 100:g}% of |mean|"
    return f"{precision.half_width:g}"


SAMPLES = {
    "latin_hypercube": "Latin hypercube",
    "sobol": "Sobol sequence (scrambled)",
    "saltelli": "Saltelli sample of a scrambled Sobol sequence",
    "morris": "Morris trajectories",
}


def describe_design(spec: Spec) -> list[str]:
    """A design other than the full factorial in words: a fraction's generators, defining
    relation and aliases; how Latin hypercube or Sobol points are drawn."""
    design = spec.design
    if design.fraction is not None:
        return describe_fraction(spec)
    if design.kind == "full":
        return []
    what = SAMPLES.get(design.kind, "Sobol sequence (scrambled)")
    ranges = ", ".join(f.name for f in spec.factors if f.range is not None)
    sizes = " then ".join(map(str, design.sizes))
    crossed = ", ".join(f.name for f in spec.crossed)
    if design.kind == "saltelli":
        order = "first, total and second order" if design.second_order else "first and total order"
        what += f" ({design.samples} base samples; Sobol indices of {order})"
    elif design.kind == "morris":
        what += f" ({design.samples} trajectories on {design.levels} levels)"
    line = f"{design.kind}: {what}, {sizes} points over {ranges}, drawn from seed {spec.seed}"
    points = design.sizes[-1]
    if design.kind == "sobol" and points & (points - 1):
        line += f" (not a power of 2: a Sobol sequence is balanced at 2^m points, not {points})"
    if design.kind == "saltelli" and design.samples & (design.samples - 1):
        line += (
            " (not a power of 2: a Sobol sequence is balanced at 2^m base samples, not "
            f"{design.samples})"
        )
    return [line + (f"; crossed with {crossed}" if crossed else "")]


def describe_fraction(spec: Spec) -> list[str]:
    """A fractional factorial: its generators, defining relation, aliases and pairing."""
    design = spec.design
    fraction = design.fraction
    asked = f" (the smallest standard one of resolution >= {design.resolution})"
    lines = [
        f"fractional: {fraction.title}{asked if design.resolution else ''}",
        f"  generators: {fraction.generator_text() or 'none (the full factorial)'}",
        f"  defining relation: {fraction.relation_text()}",
    ]
    aliases = fraction.alias_lines()
    lines.append(
        "  aliases (main effects and two-factor interactions):"
        if aliases
        else "  aliases: no main effect or two-factor interaction is aliased with another"
    )
    lines.extend(f"    {line}" for line in aliases)
    if spec.paired:
        lines.append(f"  {paired_runs(spec)}")
    return lines


def paired_runs(spec: Spec) -> str:
    """How many runs of a fraction share seeds through its paired factors: runs share a seed
    when they differ in paired factors only, which a fraction may never have."""
    runs = spec.design.fraction.runs
    unpaired = [i for i, f in enumerate(spec.factors) if f.name not in spec.paired]
    groups = len(np.unique(runs[:, unpaired], axis=0)) if unpaired else 1
    if groups == len(runs):
        return (
            f"paired: no two runs of the fraction differ in {', '.join(spec.paired)} alone, "
            "so no run shares its seeds with another"
        )
    return f"paired: the {len(runs)} runs share seeds in {groups} groups"
