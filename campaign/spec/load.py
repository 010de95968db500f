"""Read a campaign spec file (YAML) into a `Spec`.

The file is read with guards: at most `MAX_SPEC_BYTES`, UTF-8, no duplicate keys, no YAML
alias bomb (aliases are counted where they are used), nesting at most `MAX_SPEC_DEPTH`
deep. Numbers with an exponent are read as YAML 1.2 reads them (``1e6``, ``1.0e6`` and
``2.5E-3`` are floats; YAML 1.1, PyYAML's default, wants a dot and a signed exponent and
reads the first two as strings). Each key is then checked by `campaign.spec.keys`, without
the model: the plan checks every cell against it (`campaign.plan.plan.check_model`). Every
problem is one `CampaignError` line, before anything runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from campaign.errors import CampaignError
from campaign.spec.keys import KEYS, MAX_TASKS, PRECISION_KEYS, parse_spec
from campaign.spec.types import DesignSpec, Factor, Precision, Spec

__all__ = [
    "KEYS",
    "MAX_TASKS",
    "PRECISION_KEYS",
    "DesignSpec",
    "Factor",
    "Precision",
    "Spec",
    "load_spec",
    "parse_spec",
    "spec_from_text",
]

MAX_SPEC_BYTES = 1 << 20  # a spec is a page of text; this bounds reading it
MAX_SPEC_VALUES = 100_000  # values once YAML aliases are expanded (an alias bomb stops here)
MAX_SPEC_DEPTH = 50  # nesting of mappings and lists
MERGE_TAG = "tag:yaml.org,2002:merge"  # the YAML merge key '<<', not a key of its own


def load_spec(path: str | Path) -> Spec:
    """Read a YAML spec file and validate it; relative paths are relative to the file."""
    path = Path(path)
    return spec_from_text(read_text(path), path, str(path))


def spec_from_text(text: str, path: Path | None = None, where: str = "spec") -> Spec:
    """A spec from its text (a file's, or the one a results file or campaign.json keeps),
    read as `load_spec` reads a file; ``where`` names it in errors."""
    return parse_spec(read_yaml(text, where), text=text, path=path)


def read_yaml(text: str, path: str) -> Any:
    """The spec's YAML document, read with `SpecLoader`'s guards."""
    try:
        return yaml.load(text, Loader=SpecLoader)
    except SpecProblem as problem:
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


def read_text(path: Path) -> str:
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


class SpecProblem(Exception):
    """A problem of the YAML document, at a line."""

    def __init__(self, node: yaml.Node, message: str):
        super().__init__(message)
        self.line = node.start_mark.line + 1
        self.message = message


class SpecLoader(yaml.SafeLoader):
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
            raise SpecProblem(node, "a YAML alias is used inside its own anchored value")
        if depth >= MAX_SPEC_DEPTH:
            raise SpecProblem(node, f"values are nested more than {MAX_SPEC_DEPTH} levels deep")
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
                raise SpecProblem(
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
                raise SpecProblem(
                    key_node,
                    f"key {key!r} appears twice in one mapping (first on line {seen[key]}); "
                    "keep one",
                )
            seen[key] = line


# YAML 1.2's floats that YAML 1.1 reads as strings: an exponent without a dot before it or
# without a sign (1e6, 1.0e6, 2.5E3); those with both (1.0e+6) are floats in either
EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$")
SpecLoader.add_implicit_resolver("tag:yaml.org,2002:float", EXPONENT_FLOAT, list("-+.0123456789"))


# YAML 1.1's numbers that YAML 1.2 reads otherwise: a leading 0 (octal: 010 is 8, where 1.2
# reads 10), 0b binary and base 60 (12:30 is 750; 1.2 reads both as strings)
LEGACY_NUMBER = re.compile(
    r"^[-+]?(?:0[0-7_]+|0b[01_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)$"
)


def _refuse_legacy(loader: SpecLoader, node: yaml.ScalarNode, construct: Any) -> Any:
    """The number of ``node``, refusing one YAML 1.1 and 1.2 read differently (a model would
    get 8 for 010): one line saying what it is read as and how to write it."""
    value = construct(loader, node)
    text = str(node.value)
    if LEGACY_NUMBER.match(text):
        plain = text.lstrip("+-").replace("_", "")
        decimal = int(text.replace("_", "")) if plain.isdigit() else None
        if decimal is None:  # 0b11, 12:30: text in YAML 1.2
            raise SpecProblem(
                node,
                f"{text} is the number {value!r} in YAML 1.1 and text in YAML 1.2; write "
                f"{value!r} if that is meant, or {text!r} in quotes for text",
            )
        if decimal != value:  # 010: octal in YAML 1.1 (00 is 0 in either)
            raise SpecProblem(
                node,
                f"{text} is the octal number {value} in YAML 1.1 and {decimal} in YAML 1.2; "
                f"write {value} or {decimal} as meant, or {text!r} in quotes for text",
            )
    return value


for _tag, _construct in (
    ("tag:yaml.org,2002:int", yaml.SafeLoader.construct_yaml_int),
    ("tag:yaml.org,2002:float", yaml.SafeLoader.construct_yaml_float),
):
    SpecLoader.add_constructor(
        _tag, lambda loader, node, construct=_construct: _refuse_legacy(loader, node, construct)
    )
