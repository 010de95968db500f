"""Check each key of a spec (already read from YAML) and build the `Spec`.

Everything that can be checked without the model is checked here: keys, types, names and
limits. Every problem is one `CampaignError` line naming the key, the bad value and what is
allowed, before anything runs. Each key has its parser; ``fail`` turns a message into the
error, prefixed with the spec file's path.
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
from typing import Any

from campaign.design import points as designs
from campaign.errors import CampaignError
from campaign.models import model_names
from campaign.results.names import metric_name_problem, name_clashes
from campaign.spec.command_model import (
    COMMAND_MODEL,
    CommandSpec,
    check_seeded,
    parse_command,
    parse_resources,
)
from campaign.spec.factors import Fail, design_kind, is_number, parse_design, parse_factors
from campaign.spec.names import campaign_name_problem
from campaign.spec.schema import PRECISION, SPEC
from campaign.spec.selection import parse_selection
from campaign.spec.types import (
    DEFAULT_PERCENTILES,
    DesignSpec,
    Factor,
    Precision,
    Selection,
    Spec,
)

# The keys of the top level and of precision:, with their descriptions (`campaign.spec.schema`)
KEYS = SPEC.docs()
REQUIRED = SPEC.required
PRECISION_KEYS = PRECISION.docs()

MAX_TASKS = 10_000_000  # cells x replicates: a design's seeds and keys stay a few GB at most


def parse_spec(data: Any, text: str = "", path: Path | None = None) -> Spec:
    """Validate already-parsed spec data (a mapping) into a `Spec`, without the model."""
    where = f"{path}: " if path else ""

    def fail(message: str) -> CampaignError:
        return CampaignError(where + message)

    check_keys(data, fail)
    name = parse_name(data["name"], fail)
    if not isinstance(data["model"], dict):
        parse_model_name(data["model"], fail)
    params = parse_params(data.get("params") or {}, fail)
    seed = parse_seed(data["seed"], fail)
    kind, options = design_kind(data.get("design", designs.FULL), fail)
    factors = parse_factors(data.get("factors") or {}, params, fail, kind in designs.POINT_KINDS)
    model, command = parse_model(data["model"], params, factors, path, fail)
    factor_names = [f.name for f in factors]
    resources = parse_resources(data.get("resources"), "resources", fail)
    if command is not None and command.resources is not None:
        if resources is not None:
            raise fail("give resources once: at the top or in model.resources, not both")
        resources = command.resources
    design, factors = parse_design(kind, options, factors, seed, fail)
    paired = parse_paired(data.get("paired") or [], factor_names, fail)
    precision, replicates = parse_replicates(data, fail)
    selection = None
    if "select" in data:
        selection = parse_selection(data["select"], factors, paired, design.kind, fail)
        replicates = selection.max_replicates
    what = "select.max_replicates" if selection else "precision.max_replicates" if precision else ""
    check_seeded(command, replicates, what or "replicates", fail)
    metrics = parse_metrics(data.get("metrics"), factor_names, fail)
    check_kept(metrics, precision, selection, fail)
    percentiles = parse_percentiles(data.get("percentiles"), fail)
    check_size(design, factors, replicates, what, fail)
    output = output_folder(data.get("output"), name, path, fail)
    description = data.get("description") or ""
    if not isinstance(description, str):
        raise fail(f"description: expected text, got {description!r}")
    spec = Spec(
        name=name,
        model=model,
        params=dict(params),
        factors=tuple(factors),
        paired=tuple(paired),
        replicates=replicates,
        seed=seed,
        metrics=metrics,
        output=output,
        precision=precision,
        text=text,
        path=path,
        description=description,
        digest=hashlib.sha256(text.encode()).hexdigest(),
        design=design,
        percentiles=percentiles,
        command=command,
        resources=resources,
        selection=selection,
    )
    return spec


def check_keys(data: Any, fail: Fail) -> None:
    """A mapping of the keys the spec's description allows, the required ones among them."""
    SPEC.check(data, fail)


def parse_name(name: Any, fail: Fail) -> str:
    problem = campaign_name_problem(name)
    if problem is not None:
        raise fail(f"name: {problem}")
    return name


def parse_model(
    model: Any, params: dict[str, Any], factors: list[Factor], path: Path | None, fail: Fail
) -> tuple[str, CommandSpec | None]:
    """A registered model's name or 'package.module:function' (imported later, by the plan),
    or a program (`campaign.spec.command_model`): the model's name and the program, if any."""
    if isinstance(model, dict):
        base = path.parent if path else Path.cwd()
        names = [f.name for f in factors]
        levels = {f.name: f.values for f in factors}
        return COMMAND_MODEL, parse_command(model, params, names, base, fail, levels)
    return parse_model_name(model, fail), None


def parse_model_name(model: Any, fail: Fail) -> str:
    if not isinstance(model, str) or not model:
        raise fail(
            f"model: {model!r} is not allowed; use a registered model "
            f"({', '.join(model_names())}) or 'package.module:function'"
        )
    if ":" not in model and model not in model_names():
        raise fail(
            f"model: unknown model {model!r}; registered models: "
            f"{', '.join(model_names())}, or 'package.module:function'"
        )
    return model


def parse_params(params: Any, fail: Fail) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise fail(f"params: expected a mapping of parameter: value, got {params!r}")
    for key in params:
        if not isinstance(key, str):
            raise fail(f"params: parameter names must be strings, got {key!r}")
    return params


def parse_seed(seed: Any, fail: Fail) -> int:
    if not is_count(seed) or seed < 0:
        raise fail(f"seed: {seed!r} is not allowed; use an integer >= 0")
    return seed


def parse_paired(paired: Any, factor_names: list[str], fail: Fail) -> list[str]:
    if isinstance(paired, str):
        paired = [paired]
    if not isinstance(paired, list):
        raise fail(f"paired: expected a list of factor names, got {paired!r}")
    check_distinct("paired", paired, fail)
    for item in paired:
        if item not in factor_names:
            allowed = ", ".join(factor_names) or "no factors are defined"
            raise fail(f"paired: {item!r} is not a factor; factors: {allowed}")
    return paired


def parse_replicates(data: dict[str, Any], fail: Fail) -> tuple[Precision | None, int]:
    """The precision target (None for a fixed count) and the most replicates a cell may get."""
    precision = None
    if "select" in data:
        for other in ("precision", "replicates"):
            if other in data:
                raise fail(
                    f"give {other} or select (a selection in stages, which sets the replicates), "
                    "not both"
                )
        return None, 1
    if "precision" in data:
        if "replicates" in data:
            raise fail("give replicates (a fixed count) or precision (a target), not both")
        precision = parse_precision(data["precision"], fail)
        replicates = precision.max_replicates
    elif "replicates" not in data:
        raise fail(
            "missing key 'replicates' (integer >= 1), 'precision' (a target) or 'select' (a "
            "selection of the best system)"
        )
    else:
        replicates = data["replicates"]
    if not is_count(replicates) or replicates < 1:
        raise fail(f"replicates: {replicates!r} is not allowed; use an integer >= 1")
    return precision, replicates


def parse_metrics(metrics: Any, factor_names: list[str], fail: Fail) -> tuple[str, ...] | None:
    """The metrics to keep (None: every metric the model returns)."""
    if metrics is None:
        return None
    if isinstance(metrics, str):
        metrics = [metrics]
    if not is_name_list(metrics):
        raise fail(f"metrics: expected a non-empty list of metric names, got {metrics!r}")
    check_distinct("metrics", metrics, fail)
    for metric in metrics:
        problem = metric_name_problem(metric)
        if problem is not None:
            raise fail(f"metrics: {problem}")
    clashes = name_clashes(factor_names, metrics)
    if clashes:
        raise fail(f"metrics: {next(iter(clashes.values()))}; a results file cannot hold both")
    return tuple(metrics)


def parse_percentiles(percentiles: Any, fail: Fail) -> tuple[int, ...]:
    """The percentiles kept of each sample: whole numbers 0..100, where samples are stored."""
    if percentiles is None:
        return DEFAULT_PERCENTILES
    allowed = "a non-empty list of distinct whole percentiles from 0 to 100, such as [50, 95, 99]"
    if not isinstance(percentiles, list) or not percentiles:
        raise fail(f"percentiles: expected {allowed}, got {percentiles!r}")
    for value in percentiles:
        whole = isinstance(value, int | float) and not isinstance(value, bool)
        if not whole or value != int(value) or not 0 <= value <= 100:
            raise fail(
                f"percentiles: {value!r} is not allowed; expected {allowed} (samples are kept "
                "at every whole percentile)"
            )
    if len(set(percentiles)) != len(percentiles):
        raise fail(f"percentiles: values repeat: {percentiles}")
    return tuple(int(value) for value in percentiles)


def check_size(
    design: DesignSpec,
    factors: list[Factor],
    replicates: int,
    what: str,
    fail: Fail,
) -> None:
    """Refuse a design of more than `MAX_TASKS` tasks before its seeds and keys are made
    (``what``: the key that set ``replicates``, when not ``replicates``)."""
    crossed = [f for f in factors if f.range is None and design.kind != designs.FRACTIONAL]
    cells = math.prod(len(f.labels) for f in crossed)
    if design.kind != designs.FULL:
        cells *= design.points
    if cells * replicates > MAX_TASKS:
        what = what or "replicates"
        raise fail(
            f"the design has {cells:,} cells x {replicates:,} replicates ({what}) = "
            f"{cells * replicates:,} tasks; at most {MAX_TASKS:,} tasks are allowed: use fewer "
            "levels or replicates, or split the campaign"
        )


def output_folder(output: Any, name: str, path: Path | None, fail: Fail) -> Path:
    """The absolute output folder: ``output`` relative to the spec file (``~`` expanded), or
    by default ``outputs/<name>`` in the current folder."""
    if output is None:
        return Path.cwd() / "outputs" / name
    if not isinstance(output, str) or not output.strip():
        raise fail(f"output: expected a folder path, got {output!r}")
    try:
        folder = Path(output).expanduser()
    except RuntimeError:
        raise fail(f"output: cannot expand the home folder in {output!r}") from None
    base = path.parent if path else Path.cwd()
    return Path(os.path.abspath(base / folder))


def parse_precision(raw: Any, fail: Fail) -> Precision:
    PRECISION.check(raw, fail)
    metrics = raw.get("metrics")
    if isinstance(metrics, str):
        metrics = [metrics]
    if (
        not isinstance(metrics, list)
        or not metrics
        or not all(isinstance(m, str) and m for m in metrics)
    ):
        raise fail(f"precision.metrics: expected a list of metric names, got {metrics!r}")
    if len(set(metrics)) != len(metrics):
        raise fail(f"precision.metrics: metrics repeat: {metrics}")
    half_width = raw.get("half_width")
    if not is_number(half_width) or not math.isfinite(half_width) or half_width <= 0:
        raise fail(f"precision.half_width: {half_width!r} is not allowed; use a finite number > 0")
    relative = raw.get("relative", True)
    if not isinstance(relative, bool):
        raise fail(f"precision.relative: {relative!r} is not allowed; use true or false")
    if relative and half_width >= 1:
        raise fail(
            f"precision.half_width: {half_width!r} is a share of |mean| (relative: true), "
            f"{100 * half_width:g}% of it; use a number below 1 (0.05 for 5%), or relative: "
            "false for a target in the metric's units"
        )
    low = raw.get("min_replicates", 5)
    high = raw.get("max_replicates")
    if isinstance(low, bool) or not isinstance(low, int) or low < 2:
        raise fail(f"precision.min_replicates: {low!r} is not allowed; use an integer >= 2")
    if isinstance(high, bool) or not isinstance(high, int) or high < low:
        raise fail(
            f"precision.max_replicates: {high!r} is not allowed; use an integer >= "
            f"min_replicates ({low})"
        )
    confidence = raw.get("confidence", 0.95)
    if not is_number(confidence) or not 0 < confidence < 1:
        raise fail(
            f"precision.confidence: {confidence!r} is not allowed; use a number between 0 and 1"
        )
    return Precision(tuple(metrics), float(half_width), relative, low, high, float(confidence))


def check_distinct(key: str, names: list[Any], fail: Fail) -> None:
    if len(set(map(repr, names))) != len(names):
        raise fail(f"{key}: names repeat: {names}; give each name once")


def is_count(value: Any) -> bool:
    """An integer, and not a boolean (YAML's true is no count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_name_list(names: Any) -> bool:
    """A non-empty list of non-empty strings."""
    return isinstance(names, list) and bool(names) and all(isinstance(n, str) and n for n in names)


def check_kept(
    metrics: tuple[str, ...] | None,
    precision: Precision | None,
    selection: Selection | None,
    fail: Fail,
) -> None:
    """Refuse a precision or selection metric the spec does not keep."""
    needed = [("precision.metrics", m) for m in (precision.metrics if precision else ())]
    needed += [("select.metric", selection.metric)] if selection else []
    for key, metric in needed:
        if metrics and metric not in metrics:
            raise fail(f"{key}: {metric!r} is not among the kept metrics: {', '.join(metrics)}")
