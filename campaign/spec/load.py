"""Load and validate a campaign spec file into a `Spec`.

Everything that can be checked without the model is checked here: YAML syntax, keys, types,
names and limits. Every problem is reported as one `CampaignError` line naming the key, the
bad value and what is allowed, before anything runs. The model itself is not imported: the
plan checks every cell against it (`campaign.plan.plan.check_model`).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from campaign.design import points as designs
from campaign.errors import CampaignError
from campaign.models import model_names
from campaign.results.names import (
    LAYOUT_NAMES,
    level_problem,
    metric_name_problem,
    name_clashes,
)

KEYS = {
    "name": "campaign name (letters, digits, - _ .)",
    "description": "free text",
    "model": "a built-in model or 'package.module:function'",
    "params": "mapping of fixed parameters",
    "factors": "mapping factor -> list of levels (or mapping label -> value, or a range "
    "{low, high} in a latin_hypercube or sobol design)",
    "design": "full (the default), {fractional: {generators: {d: a*b*c}}} or "
    "{fractional: {resolution: 4}}, {latin_hypercube: {points: N}}, {sobol: {points: N}}",
    "paired": "list of factors whose levels share seeds",
    "replicates": "integer >= 1",
    "precision": "target confidence-interval half-width instead of a fixed replicate count",
    "seed": "integer >= 0",
    "metrics": "list of metric names to keep",
    "output": "output folder (default outputs/<name> in the current folder)",
}
REQUIRED = ("name", "model", "seed")
PRECISION_KEYS = {
    "metrics": "metrics whose intervals must reach the target",
    "half_width": "target half-width (a finite number > 0)",
    "relative": "true: half_width is a fraction of |mean| (default); false: in metric units",
    "min_replicates": "replicates run before any interval is trusted (>= 2, default 5)",
    "max_replicates": "most replicates a cell may get",
    "confidence": "confidence level of the intervals that must meet the target (default 0.95)",
}


@dataclass(frozen=True)
class Precision:
    """Run replicates per cell until every interval of ``metrics`` is at most ``half_width``.

    Part of the spec, ``confidence`` included: the rounds a campaign makes follow from the
    spec and the stored results alone (see `campaign.analysis.stats.precision_rounds`).
    """

    metrics: tuple[str, ...]
    half_width: float
    relative: bool
    min_replicates: int
    max_replicates: int
    confidence: float = 0.95


NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
FACTOR_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED_NAMES = {*LAYOUT_NAMES, "cell"}
MAX_SPEC_BYTES = 1 << 20  # a spec is a page of text; this bounds reading it
MAX_SPEC_VALUES = 100_000  # values once YAML aliases are expanded (an alias bomb stops here)
MAX_SPEC_DEPTH = 50  # nesting of mappings and lists
MAX_TASKS = 10_000_000  # cells x replicates: a design's seeds and keys stay a few GB at most
MERGE_TAG = "tag:yaml.org,2002:merge"  # the YAML merge key '<<', not a key of its own


@dataclass(frozen=True)
class Factor:
    """A factor: its name, the labels stored as coordinates and the values models receive."""

    name: str
    labels: tuple[Any, ...]
    values: tuple[Any, ...]
    range: tuple[float, float] | None = None  # a range's labels are its design points' values

    @property
    def labelled(self) -> bool:
        return self.labels != self.values


@dataclass(frozen=True)
class DesignSpec:
    """Which cells run: ``kind`` one of `campaign.design.points.KINDS`; a fraction's generators
    (given, or the standard ones of ``resolution``); a Latin hypercube's or Sobol design's
    point counts (``sizes``: growing, the last one the design's)."""

    kind: str = designs.FULL
    fraction: designs.Fraction | None = None
    resolution: int | None = None
    sizes: tuple[int, ...] = ()

    @property
    def points(self) -> int:
        if self.fraction is not None:
            return 2 ** (len(self.fraction.names) - len(self.fraction.generators))
        return self.sizes[-1] if self.sizes else 0


@dataclass(frozen=True)
class Spec:
    name: str
    model: str
    params: dict[str, Any]
    factors: tuple[Factor, ...]
    paired: tuple[str, ...]
    replicates: int
    seed: int
    metrics: tuple[str, ...] | None
    output: Path
    precision: Precision | None = None
    text: str = ""
    path: Path | None = None
    description: str = ""
    digest: str = field(default="")
    design: DesignSpec = field(default_factory=DesignSpec)

    def factor(self, name: str) -> Factor:
        for factor in self.factors:
            if factor.name == name:
                return factor
        raise KeyError(name)

    @property
    def crossed(self) -> tuple[Factor, ...]:
        """The factors whose levels are crossed: every factor of a full factorial, the factors
        that are not ranges in a Latin hypercube or Sobol design, none in a fraction."""
        if self.design.kind == designs.FRACTIONAL:
            return ()
        return tuple(f for f in self.factors if f.range is None)

    @property
    def cells(self) -> int:
        crossed = math.prod(len(f.labels) for f in self.crossed)
        return crossed if self.design.kind == designs.FULL else crossed * self.design.points

    @property
    def tasks(self) -> int:
        return self.cells * self.replicates


def load_spec(path: str | Path) -> Spec:
    """Read a YAML spec file and validate it; relative paths are relative to the file."""
    path = Path(path)
    text = _read_text(path)
    try:
        data = yaml.load(text, Loader=_SpecLoader)
    except _SpecProblem as problem:
        raise CampaignError(f"{path}: line {problem.line}: {problem.message}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise CampaignError(f"{path}:{where} is not valid YAML: {problem}") from None
    except RecursionError:
        raise CampaignError(
            f"{path}: values are nested too deeply (at most {MAX_SPEC_DEPTH} levels)"
        ) from None
    return parse_spec(data, text=text, path=path)


def _read_text(path: Path) -> str:
    """The spec file's text: UTF-8, at most `MAX_SPEC_BYTES`."""
    try:
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise CampaignError(
                f"{path}: the spec is {size:,} bytes; a spec file may have at most "
                f"{MAX_SPEC_BYTES:,} bytes"
            )
        raw = path.read_bytes()
    except OSError as error:
        raise CampaignError(f"cannot read spec {path}: {error.strerror}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise CampaignError(
            f"{path}: line {line}: byte 0x{raw[error.start]:02x} is not UTF-8 text; save the "
            "spec as UTF-8"
        ) from None


class _SpecProblem(Exception):
    """A problem of the YAML document, at a line."""

    def __init__(self, node: yaml.Node, message: str):
        super().__init__(message)
        self.line = node.start_mark.line + 1
        self.message = message


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing duplicate keys and documents that expand too far.

    Aliases are counted where they are used, so a small document whose aliases nest into
    an enormous value (an alias bomb) is refused before any value is built.
    """

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        self._sizes: dict[int, int] = {}
        self._open: set[int] = set()
        self._expanded_size(node, 0)
        return self.construct_document(node)

    def _expanded_size(self, node: yaml.Node, depth: int) -> int:
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        if isinstance(node, yaml.ScalarNode):
            return 1
        if id(node) in self._open:
            raise _SpecProblem(node, "a YAML alias is used inside its own anchored value")
        if depth >= MAX_SPEC_DEPTH:
            raise _SpecProblem(node, f"values are nested more than {MAX_SPEC_DEPTH} levels deep")
        self._open.add(id(node))
        if isinstance(node, yaml.MappingNode):
            self._refuse_duplicate_keys(node)
            children = [child for pair in node.value for child in pair]
        else:
            children = node.value
        size = 1
        for child in children:
            size += self._expanded_size(child, depth + 1)
            if size > MAX_SPEC_VALUES:
                raise _SpecProblem(
                    node,
                    f"the spec expands to more than {MAX_SPEC_VALUES:,} values (YAML aliases "
                    "repeat their value wherever they are used); write a smaller spec",
                )
        self._open.discard(id(node))
        self._sizes[id(node)] = size
        return size

    def _refuse_duplicate_keys(self, node: yaml.MappingNode) -> None:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == MERGE_TAG:
                continue
            key = self.construct_object(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _SpecProblem(
                    key_node,
                    f"key {key!r} appears twice in one mapping (first on line {seen[key]}); "
                    "keep one",
                )
            seen[key] = line


def parse_spec(data: Any, text: str = "", path: Path | None = None) -> Spec:
    """Validate already-parsed spec data (a mapping) into a `Spec`, without the model."""
    where = f"{path}: " if path else ""

    def fail(message: str) -> CampaignError:
        return CampaignError(where + message)

    if not isinstance(data, dict):
        raise fail("a spec must be a mapping of keys: " + ", ".join(KEYS))
    for key in data:
        if key not in KEYS:
            raise fail(f"unknown key {key!r}; allowed keys: {', '.join(KEYS)}")
    for key in REQUIRED:
        if key not in data:
            raise fail(f"missing key {key!r} ({KEYS[key]})")

    name = data["name"]
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise fail(f"name: {name!r} is not allowed; use letters, digits, '-', '_' and '.'")

    model = data["model"]
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

    params = data.get("params") or {}
    if not isinstance(params, dict):
        raise fail(f"params: expected a mapping of parameter: value, got {params!r}")
    for key in params:
        if not isinstance(key, str):
            raise fail(f"params: parameter names must be strings, got {key!r}")

    seed = data["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise fail(f"seed: {seed!r} is not allowed; use an integer >= 0")

    kind, options = _design_kind(data.get("design", designs.FULL), fail)
    factors = _parse_factors(data.get("factors") or {}, params, fail, kind in designs.POINT_KINDS)
    factor_names = [f.name for f in factors]
    design, factors = _parse_design(kind, options, factors, seed, fail)

    paired = data.get("paired") or []
    if isinstance(paired, str):
        paired = [paired]
    if not isinstance(paired, list):
        raise fail(f"paired: expected a list of factor names, got {paired!r}")
    for item in paired:
        if item not in factor_names:
            allowed = ", ".join(factor_names) or "no factors are defined"
            raise fail(f"paired: {item!r} is not a factor; factors: {allowed}")

    precision = None
    if "precision" in data:
        if "replicates" in data:
            raise fail("give replicates (a fixed count) or precision (a target), not both")
        precision = _parse_precision(data["precision"], fail)
        replicates = precision.max_replicates
    elif "replicates" not in data:
        raise fail("missing key 'replicates' (integer >= 1) or 'precision' (a target)")
    else:
        replicates = data["replicates"]
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise fail(f"replicates: {replicates!r} is not allowed; use an integer >= 1")

    metrics = data.get("metrics")
    if metrics is not None:
        if isinstance(metrics, str):
            metrics = [metrics]
        if (
            not isinstance(metrics, list)
            or not metrics
            or not all(isinstance(m, str) and m for m in metrics)
        ):
            raise fail(f"metrics: expected a non-empty list of metric names, got {metrics!r}")
        for metric in metrics:
            problem = metric_name_problem(metric)
            if problem is not None:
                raise fail(f"metrics: {problem}")
        clashes = name_clashes(factor_names, metrics)
        if clashes:
            raise fail(f"metrics: {next(iter(clashes.values()))}; a results file cannot hold both")
        metrics = tuple(metrics)

    crossed = [f for f in factors if f.range is None and kind != designs.FRACTIONAL]
    cells = math.prod(len(f.labels) for f in crossed)
    if kind != designs.FULL:
        cells *= design.points
    if cells * replicates > MAX_TASKS:
        what = "precision.max_replicates" if precision else "replicates"
        raise fail(
            f"the design has {cells:,} cells x {replicates:,} replicates ({what}) = "
            f"{cells * replicates:,} tasks; at most {MAX_TASKS:,} tasks are allowed: use fewer "
            "levels or replicates, or split the campaign"
        )

    output_path = _output_folder(data.get("output"), name, path, fail)

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
        output=output_path,
        precision=precision,
        text=text,
        path=path,
        description=description,
        digest=hashlib.sha256(text.encode()).hexdigest(),
        design=design,
    )
    if precision is not None:
        _check_precision_metrics(spec)
    return spec


def _output_folder(output: Any, name: str, path: Path | None, fail) -> Path:
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


def _design_kind(raw: Any, fail) -> tuple[str, Any]:
    """The design's kind and its options, as written."""
    allowed = ", ".join(designs.KINDS)
    if isinstance(raw, str):
        kind, options = raw, None
    elif isinstance(raw, dict) and len(raw) == 1:
        ((kind, options),) = raw.items()
    else:
        raise fail(f"design: expected one of {allowed}, or a mapping kind: options, got {raw!r}")
    if kind not in designs.KINDS:
        raise fail(f"design: unknown design {kind!r}; designs: {allowed}")
    if kind == designs.FULL:
        if options not in (None, {}):
            raise fail(f"design.full: takes no options, got {options!r}")
        return kind, {}
    keys = {
        designs.FRACTIONAL: ("generators", "resolution"),
        designs.LATIN_HYPERCUBE: ("points",),
        designs.SOBOL: ("points",),
    }[kind]
    example = "generators: {d: a*b*c} or resolution: 4" if keys[0] == "generators" else "points: 20"
    if not isinstance(options, dict):
        raise fail(f"design.{kind}: expected a mapping ({example}), got {options!r}")
    for key in options:
        if key not in keys:
            raise fail(f"design.{kind}: unknown key {key!r}; allowed: {', '.join(keys)}")
    return kind, options


def _parse_design(
    kind: str, options: dict[str, Any], factors: list[Factor], seed: int, fail
) -> tuple[DesignSpec, list[Factor]]:
    """The design, and the factors with each range's labels set to its points' values."""
    where = f"design.{kind}"
    names = [f.name for f in factors]
    if kind == designs.FULL:
        return DesignSpec(), factors
    if kind == designs.FRACTIONAL:
        for factor in factors:
            if len(factor.labels) != 2:
                raise fail(
                    f"{where}: factor {factor.name} has {len(factor.labels)} levels; a two-level "
                    "fraction needs exactly two levels per factor (low first, then high)"
                )
        if len(factors) < 2:
            raise fail(f"{where}: a fraction needs at least two factors, got {len(factors)}")
        if ("generators" in options) == ("resolution" in options):
            raise fail(f"{where}: give generators (d: a*b*c) or resolution (3, 4, 5, ...), one")
        try:
            if "generators" in options:
                fraction = designs.parse_generators(options["generators"], names)
                return DesignSpec(kind, fraction), factors
            resolution = options["resolution"]
            if isinstance(resolution, bool) or not isinstance(resolution, int) or resolution < 3:
                raise fail(f"{where}.resolution: {resolution!r} is not allowed; use 3, 4, 5, ...")
            fraction = designs.standard_fraction(names, resolution)
        except designs.DesignError as error:
            key = "generators" if "generators" in options else "resolution"
            raise fail(f"{where}.{key}: {error}") from None
        return DesignSpec(kind, fraction, resolution), factors
    if "points" not in options:
        raise fail(f"{where}: missing key 'points' (how many design points, e.g. points: 20)")
    try:
        sizes = designs.check_sizes(kind, options["points"])
    except designs.DesignError as error:
        raise fail(f"{where}.points: {error}") from None
    ranges = [f for f in factors if f.range is not None]
    if not ranges:
        raise fail(
            f"{where}: no factor is a range; give at least one as {{low: number, high: number}}"
        )
    unit = designs.unit_points(kind, sizes, len(ranges), seed)
    columns = {f.name: designs.scale(unit[:, j], *f.range) for j, f in enumerate(ranges)}
    placed = []
    for factor in factors:
        if factor.range is not None:
            values = tuple(float(v) for v in columns[factor.name])
            factor = Factor(factor.name, values, values, factor.range)
        placed.append(factor)
    return DesignSpec(kind, sizes=sizes), placed


def _parse_range(name: str, levels: dict[str, Any], fail) -> Factor:
    """A factor given as a range {low, high} of a Latin hypercube or Sobol design."""
    low, high = levels["low"], levels["high"]
    for value in (low, high):
        if not _is_number(value) or not math.isfinite(value):
            raise fail(f"factors.{name}: range bound {value!r} is not allowed; use finite numbers")
    if not low < high:
        raise fail(f"factors.{name}: the range needs low < high, got low {low!r}, high {high!r}")
    return Factor(name, (), (), (float(low), float(high)))


def _parse_factors(raw: Any, params: dict[str, Any], fail, ranges: bool = False) -> list[Factor]:
    if not isinstance(raw, dict):
        raise fail(f"factors: expected a mapping of factor: [levels], got {raw!r}")
    factors = []
    for name, levels in raw.items():
        if not isinstance(name, str) or not FACTOR_PATTERN.match(name):
            raise fail(f"factors: {name!r} is not a valid factor name; use letters, digits and _")
        if name in RESERVED_NAMES:
            raise fail(
                f"factors: {name!r} is reserved; reserved names: "
                f"{', '.join(sorted(RESERVED_NAMES))}"
            )
        if name in params:
            raise fail(
                f"factors: {name!r} is also a fixed parameter in params; keep it in one place"
            )
        if ranges and isinstance(levels, dict) and set(levels) == {"low", "high"}:
            factors.append(_parse_range(name, levels, fail))
            continue
        if isinstance(levels, dict):
            if not levels:
                raise fail(f"factors.{name}: the level list is empty; give at least one level")
            labels = tuple(str(label) for label in levels)
            values = tuple(levels.values())
            if len(set(labels)) != len(labels):
                raise fail(f"factors.{name}: level labels repeat: {list(labels)}")
            for label in labels:
                problem = level_problem(label, False) or _label_problem(label)
                if problem is not None:
                    raise fail(f"factors.{name}: level label {label!r} {problem}")
            factors.append(Factor(name, labels, values))
            continue
        if not isinstance(levels, list):
            levels = [levels]
        if not levels:
            raise fail(f"factors.{name}: the level list is empty; give at least one level")
        kind = None
        for level in levels:
            level_kind = _scalar_kind(level)
            if level_kind is None:
                raise fail(
                    f"factors.{name}: level {level!r} is not allowed; levels are numbers, strings "
                    f"or booleans (for other values write a mapping label: value)"
                )
            if kind is not None and level_kind != kind:
                raise fail(
                    f"factors.{name}: level {level!r} is a {level_kind} but earlier levels are "
                    f"{kind}s; levels of one factor must share a type (or write a mapping "
                    f"label: value)"
                )
            kind = level_kind
            problem = _label_problem(level) if isinstance(level, str) else None
            if problem is not None:
                raise fail(f"factors.{name}: level {level!r} {problem}")
        if len(set(levels)) != len(levels):
            raise fail(f"factors.{name}: levels repeat: {levels}")
        floats = any(isinstance(level, float) for level in levels)
        for level in levels:
            problem = level_problem(level, floats)
            if problem is not None:
                raise fail(
                    f"factors.{name}: level {level!r} {problem}, so results cannot store it; "
                    "write it as a string (quoted) or as a mapping label: value"
                )
        factors.append(Factor(name, tuple(levels), tuple(levels)))
    return factors


def _parse_precision(raw: Any, fail) -> Precision:
    if not isinstance(raw, dict):
        raise fail(f"precision: expected a mapping with keys {', '.join(PRECISION_KEYS)}")
    for key in raw:
        if key not in PRECISION_KEYS:
            raise fail(f"precision: unknown key {key!r}; allowed: {', '.join(PRECISION_KEYS)}")
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
    if not _is_number(half_width) or not math.isfinite(half_width) or half_width <= 0:
        raise fail(f"precision.half_width: {half_width!r} is not allowed; use a finite number > 0")
    relative = raw.get("relative", True)
    if not isinstance(relative, bool):
        raise fail(f"precision.relative: {relative!r} is not allowed; use true or false")
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
    if not _is_number(confidence) or not 0 < confidence < 1:
        raise fail(
            f"precision.confidence: {confidence!r} is not allowed; use a number between 0 and 1"
        )
    return Precision(tuple(metrics), float(half_width), relative, low, high, float(confidence))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_precision_metrics(spec: Spec) -> None:
    """Refuse a precision metric the spec does not keep."""
    where = f"{spec.path or 'spec'}: precision.metrics"
    for metric in spec.precision.metrics:
        if spec.metrics and metric not in spec.metrics:
            raise CampaignError(
                f"{where}: {metric!r} is not among the kept metrics: {', '.join(spec.metrics)}"
            )


def _label_problem(label: str) -> str | None:
    """Why a level label cannot stand in a table row, or None: a control character."""
    character = next((c for c in label if unicodedata.category(c) == "Cc"), None)
    if character is None:
        return None
    return (
        f"holds a control character ({character!r}); a label is one line of text: "
        "write it without line breaks, tabs or other control characters"
    )


def _scalar_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        if isinstance(value, float) and math.isnan(value):
            return None
        return "number"
    if isinstance(value, str):
        return "string"
    return None
