"""The model contract: what a model declares so that the engine never needs to know it.

A model is a plain picklable function ``run(params, seed) -> {metric: float}`` and a
`Model` declaring around it:

- ``params``: a `Params` table of `Param` (name, kind, default, unit, one-line doc). From it
  come validation (one ``ValueError`` line naming the parameter and what is allowed), the
  defaults, ``campaign models show NAME`` and the model's documentation table.
- ``parse``: the model's own reading of params into a frozen dataclass, for the rules one
  parameter alone cannot state (two that exclude each other, a range that depends on another).
  It starts from `Params.values`, so defaults are typed once, in the table.
- ``metrics``: ``{name: {"units": str, "long_name": str}}``; ``{k}`` in a name stands for a
  number (``makespan_job{k}`` documents ``makespan_job1``, ``makespan_job2``...). A metric
  with ``"kind": "sample"`` is a 1-D array of numbers per task (every job's wait), kept as
  its quantiles, its size and the spec's percentiles (``wait_p95``); one with
  ``"kind": "breakdown"`` is named by a dimension (``job_class``) and maps each of its labels
  to metrics (``{"narrow_short": {"mean_wait": 12.0}, ...}``).
- ``headline``: the metrics rankings and reports use by default (smaller is better).
- ``inputs(params)``: the paths of the files a run reads (traces), so runs sharing them are
  batched together and sent where they are already loaded, and so their digests go with the
  results: a file rewritten in place never hides behind results stored before.
- ``commands``: commands of the model's own (``campaign NAME ...``), such as a tool for its
  input files.
- ``example``: the params of a small run that takes a second or less, for the checks every
  model passes (tests/models) and for its documentation.

Models import this module, never the engine; the engine reads only a `Model`.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RunFunction = Callable[[Mapping[str, object], int], Mapping[str, float]]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a parameter that has none: a spec must give it."""


def text_of(value: object) -> str:
    """A value as a spec would write it (YAML spelling for true, false, null)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float) and math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(text_of(v) for v in value) + "]"
    return str(value)


# -- kinds: what one parameter accepts ----------------------------------------------------------
class Kind:
    """What a parameter accepts: ``allowed`` says it in words, ``convert`` checks one value and
    returns it as the model uses it, raising ``ValueError`` (the text does not matter: the
    table words the error from ``allowed``)."""

    allowed: str = "any value"

    def convert(self, value: object) -> object:
        return value


def _real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class Number(Kind):
    """A real number (an integer with ``integer=True``) within optional bounds; NaN and
    infinities are refused unless a bound is infinite and ``infinite=True``."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    infinite: bool = False

    @property
    def allowed(self) -> str:
        noun = "an integer" if self.integer else "a number"
        low, high = self.low, self.high
        if low is not None and high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            words = f"{noun} in {left}{text_of(low)}, {text_of(high)}{right}"
        elif low is not None:
            words = f"{noun} {'>' if self.low_open else '>='} {text_of(low)}"
        elif high is not None:
            words = f"{noun} {'<' if self.high_open else '<='} {text_of(high)}"
        else:
            words = noun
        return f"{words} or .inf" if self.infinite else words

    def convert(self, value: object) -> object:
        if not _real(value) or math.isnan(value):
            raise ValueError
        if math.isinf(value) and not self.infinite:
            raise ValueError
        if self.integer and not math.isinf(value) and value != int(value):
            raise ValueError
        low, high = self.low, self.high
        if low is not None and (value < low or (self.low_open and value == low)):
            raise ValueError
        if high is not None and (value > high or (self.high_open and value == high)):
            raise ValueError
        if self.integer and not math.isinf(value):
            return int(value)
        return float(value)


def Integer(low: float | None = None, high: float | None = None, **options: Any) -> Number:
    """A whole number: 3 and 3.0 are accepted (YAML writes both), 2.5 and "3" are not."""
    return Number(low, high, integer=True, **options)


@dataclass(frozen=True)
class Flag(Kind):
    """true or false (not 0, 1 or a string)."""

    allowed: str = "true or false"

    def convert(self, value: object) -> object:
        if not isinstance(value, bool):
            raise ValueError
        return value


@dataclass(frozen=True)
class Choice(Kind):
    """One of the listed values; the declared value is returned (8.0 gives 8, a NumPy string
    a str)."""

    values: tuple[object, ...] = ()

    def __init__(self, *values: object) -> None:
        object.__setattr__(self, "values", tuple(values))

    @property
    def allowed(self) -> str:
        if len(self.values) == 1:
            return (
                repr(self.values[0]) if isinstance(self.values[0], str) else text_of(self.values[0])
            )
        return "one of " + ", ".join(text_of(v) for v in self.values)

    def convert(self, value: object) -> object:
        if isinstance(value, bool) or isinstance(value, list | dict):
            raise ValueError
        for declared in self.values:
            if value == declared and isinstance(value, str) == isinstance(declared, str):
                return declared
        raise ValueError


@dataclass(frozen=True)
class Text(Kind):
    """A string, such as a file name; ``allowed`` says which."""

    allowed: str = "a string"

    def convert(self, value: object) -> object:
        if not isinstance(value, str) or not value:
            raise ValueError
        return str(value)


@dataclass(frozen=True)
class Null(Kind):
    """null, standing for something (``meaning``: "unlimited", "all feasible sites")."""

    meaning: str = ""

    @property
    def allowed(self) -> str:
        return f"null ({self.meaning})" if self.meaning else "null"

    def convert(self, value: object) -> object:
        if value is not None:
            raise ValueError
        return None


@dataclass(frozen=True)
class ListOf(Kind):
    """A non-empty list whose every item is of ``item``'s kind; returned as a tuple."""

    item: Kind = field(default_factory=Kind)
    what: str = ""  # how the list reads: "machine counts"

    @property
    def allowed(self) -> str:
        return f"a list of {self.what}" if self.what else f"a list, each {self.item.allowed}"

    def convert(self, value: object) -> object:
        if not isinstance(value, list | tuple) or not value:
            raise ValueError
        return tuple(self.item.convert(v) for v in value)


@dataclass(frozen=True)
class Either(Kind):
    """The first of several kinds that accepts the value."""

    kinds: tuple[Kind, ...] = ()

    def __init__(self, *kinds: Kind) -> None:
        object.__setattr__(self, "kinds", tuple(kinds))

    @property
    def allowed(self) -> str:
        words = [kind.allowed for kind in self.kinds]
        return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]

    def convert(self, value: object) -> object:
        for kind in self.kinds:
            try:
                return kind.convert(value)
            except ValueError:
                continue
        raise ValueError


@dataclass(frozen=True)
class Custom(Kind):
    """A kind one function checks and converts: ``allowed`` says what it accepts."""

    allowed: str = "any value"
    check: Callable[[object], object] = lambda value: value

    def convert(self, value: object) -> object:
        return self.check(value)


# -- the parameter table ------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One parameter. A default of None that the kind does not accept means the model decides
    (``default_text`` says how: "the trace's MaxProcs"). A null value means the default, unless
    the kind accepts null (`Null`: "at every arrival"), where it is that value."""

    name: str
    kind: Kind
    default: object = REQUIRED
    doc: str = ""
    unit: str = ""
    default_text: str | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def default_words(self) -> str:
        if self.required:
            return "required"
        if self.default_text is not None:
            return self.default_text
        return text_of(self.default)

    @property
    def takes_null(self) -> bool:
        """Whether null is a value of its own here (else it stands for the default)."""
        try:
            self.kind.convert(None)
        except (ValueError, TypeError):
            return False
        return True

    def convert(self, value: object) -> object:
        """The value as the model uses it, or one ValueError naming the parameter."""
        try:
            return self.kind.convert(value)
        except ValueError as error:
            unit = f" ({self.unit})" if self.unit and self.unit != "1" else ""
            detail = f": {error}" if str(error) else ""
            raise ValueError(
                f"parameter {self.name!r} must be {self.kind.allowed}{unit}, got {value!r}{detail}"
            ) from None


class Params:
    """The parameter table of a model: validation, defaults and documentation in one place."""

    def __init__(self, model: str, *params: Param) -> None:
        self.model = model
        self.params = {param.name: param for param in params}
        if len(self.params) != len(params):
            raise ValueError(f"model {model}: a parameter is declared twice")

    def __iter__(self):
        return iter(self.params.values())

    def __getitem__(self, name: str) -> Param:
        return self.params[name]

    def __contains__(self, name: object) -> bool:
        return name in self.params

    @property
    def names(self) -> list[str]:
        return list(self.params)

    def defaults(self) -> dict[str, object]:
        """The default of every parameter that has one."""
        return {p.name: p.default for p in self if not p.required}

    def values(self, params: Mapping[str, object]) -> dict[str, object]:
        """Every parameter's value (given, else its default), checked and converted.

        A null value (YAML ``null`` or nothing) stands for the default, unless the parameter's
        kind takes null as a value of its own. Raises one
        ``ValueError`` for the first problem: an unknown parameter (the allowed names listed),
        a missing required one, or a value its kind refuses.
        """
        unknown = [name for name in params if name not in self.params]
        if unknown:
            raise ValueError(
                f"unknown parameter {sorted(map(str, unknown))[0]!r} for model {self.model}; "
                f"allowed: {', '.join(self.params)}"
            )
        out: dict[str, object] = {}
        for param in self:
            given = params.get(param.name)
            if given is not None or (param.name in params and param.takes_null):
                out[param.name] = param.convert(params[param.name])
            elif param.required:
                raise ValueError(
                    f"parameter {param.name!r} is required for model {self.model}: "
                    f"{param.kind.allowed}"
                )
            elif param.default is None:
                out[param.name] = None
            else:
                out[param.name] = param.convert(param.default)
        return out

    def markdown(self) -> str:
        """The documentation table: parameter, allowed values, default, unit, meaning."""
        rows = ["| parameter | allowed | default | unit | meaning |", "|---|---|---|---|---|"]
        for p in self:
            cells = [f"`{p.name}`", p.kind.allowed, p.default_words, p.unit, p.doc]
            rows.append("| " + " | ".join(markdown_cell(c) for c in cells) + " |")
        return "\n".join(rows)


def markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# -- the declaration ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Command:
    """A command of a model's own: ``campaign NAME ARGS...`` calls ``main(ARGS)`` (an exit code)."""

    name: str
    help: str
    main: Callable[[list[str]], int]


SCALAR = "scalar"
SAMPLE = "sample"
BREAKDOWN = "breakdown"
"""A metric's ``kind``: a number per task (the default); a sample (a 1-D array, every job's
wait say), which results keep as quantiles with percentiles as metrics; or a breakdown, named
by its dimension (``job_class``): ``{label: {metric: number}}``, which results keep as
``<metric>_by_<dimension>`` on that extra dimension."""

METRIC_NAME = re.compile(r"[a-z][a-z0-9_]*(\{[a-z]+\}[a-z0-9_]*)*")


@dataclass(frozen=True)
class Model:
    """A model's declaration: the engine reads this and calls ``run``, nothing else."""

    name: str
    run: RunFunction
    summary: str = ""
    params: Params | None = None
    parse: Callable[[Mapping[str, object]], object] | None = None
    metrics: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    headline: tuple[str, ...] = ()
    inputs: Callable[[Mapping[str, object]], Sequence[str]] | None = None
    commands: tuple[Command, ...] = ()
    example: Mapping[str, object] = field(default_factory=dict)
    strict: bool = field(default=True, repr=False)  # a plain function's attributes are not

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", {k: dict(v) for k, v in self.metrics.items()})
        if not self.strict:
            return
        for name, doc in self.metrics.items():
            keys = set(doc) - {"kind"}
            if not METRIC_NAME.fullmatch(name) or keys != {"units", "long_name"}:
                raise ValueError(
                    f"model {self.name}: metric {name!r} must be a snake_case name declared "
                    f"with units and long_name, got {dict(doc)!r}"
                )
            if doc.get("kind", SCALAR) not in (SCALAR, SAMPLE, BREAKDOWN):
                raise ValueError(
                    f"model {self.name}: metric {name!r} has kind {doc['kind']!r}; allowed: "
                    f"{SCALAR!r} (a number, the default), {SAMPLE!r} (a 1-D array of numbers) "
                    f"or {BREAKDOWN!r} (a mapping label -> metric -> number)"
                )
        unknown = [m for m in self.headline if m not in self.metrics]
        if unknown:
            raise ValueError(f"model {self.name}: headline metric {unknown[0]!r} is not declared")

    @property
    def samples(self) -> list[str]:
        """The metrics declared as samples."""
        return [name for name, doc in self.metrics.items() if doc.get("kind") == SAMPLE]

    @property
    def breakdowns(self) -> list[str]:
        """The dimensions of the breakdowns the model declares (``job_class``)."""
        return [name for name, doc in self.metrics.items() if doc.get("kind") == BREAKDOWN]

    def __call__(self, params: Mapping[str, object], seed: int) -> Mapping[str, float]:
        return self.run(params, seed)

    @property
    def checks(self) -> bool:
        """Whether the model can refuse params before anything runs."""
        return self.parse is not None or self.params is not None

    def check(self, params: Mapping[str, object]) -> None:
        """Raise one ValueError naming a bad, missing or unknown parameter."""
        if self.parse is not None:
            self.parse(params)
        elif self.params is not None:
            self.params.values(params)

    def heavy_inputs(self, params: Mapping[str, object]) -> tuple[str, ...]:
        return () if self.inputs is None else tuple(self.inputs(params))

    @classmethod
    def from_function(cls, function: RunFunction, name: str) -> Model:
        """A plain function as a model: its optional ``check``, ``metrics`` and ``inputs``
        attributes are its declaration (for a quick experiment, ``model: module:function``)."""
        doc = (function.__doc__ or "").strip()
        return cls(
            name=name,
            run=function,
            summary=doc.splitlines()[0] if doc else "",
            parse=getattr(function, "check", None),
            metrics=dict(getattr(function, "metrics", None) or {}),
            inputs=getattr(function, "inputs", None),
            strict=False,
        )
