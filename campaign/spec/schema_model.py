"""The shape of the spec's description (`campaign.spec.schema`): a `Section` is a mapping of
a spec (the top level, ``precision:``, ``select:``, a program's ``model:``, ...) and holds a
`Key` for each key it may have, with the JSON Schema of its value, its default, whether it
is required and a one-line description.

The spec parser checks each mapping's keys against its section (`Section.check`: an
unknown key or a missing required one is one line listing the allowed keys); the JSON
Schema (`campaign.spec.json_schema`) and the reference page of the documentation are
written from the same sections, so the three cannot disagree on which keys there are.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from campaign.errors import CampaignError

Fail = Callable[[str], CampaignError]


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()  # a key with no default: required, or absent means "none"


@dataclass(frozen=True)
class Key:
    """One key of a mapping: its value's JSON Schema (``value``) or, for a mapping of keys
    of its own, its `Section`; its default as YAML would write it (`NO_DEFAULT`: none), or
    in words when it follows from other keys (``default_text``)."""

    name: str
    doc: str
    value: dict[str, Any] = field(default_factory=dict)
    default: Any = NO_DEFAULT
    required: bool = False
    section: Section | None = None
    default_text: str = ""

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def words(self) -> str:
        """The value's type and allowed values in words (``integer >= 1``)."""
        return f"a mapping ({self.section.title})" if self.section else words(self.value)


@dataclass(frozen=True)
class Section:
    """A mapping of a spec: ``where`` names it in errors and on the reference page
    (``select``, ``model.declare.METRIC``); ``one_of``: keys of which exactly one is given."""

    where: str
    title: str
    doc: str
    keys: tuple[Key, ...]
    one_of: tuple[str, ...] = ()
    allowed_word: str = "allowed"  # "allowed keys" at the top level, as its errors say

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(key.name for key in self.keys)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(key.name for key in self.keys if key.required)

    def docs(self) -> dict[str, str]:
        """Key -> its one-line description."""
        return {key.name: key.doc for key in self.keys}

    def key(self, name: str) -> Key:
        return next(key for key in self.keys if key.name == name)

    def check(self, raw: Any, fail: Fail, where: str | None = None) -> dict[str, Any]:
        """``raw`` as a mapping of this section's keys, its required keys among them; else
        one line naming the mapping (``where``, default the section's), the key and the
        allowed keys (with the nearest allowed key when one is close to a misspelt one)."""
        where = self.where if where is None else where
        prefix = f"{where}: " if where else ""
        allowed = ", ".join(self.names)
        if not isinstance(raw, dict):
            what = "a spec must be" if not where else "expected"
            raise fail(f"{prefix}{what} a mapping of keys: {allowed}; got {type_name(raw)}")
        for name in raw:
            if name not in self.names:
                near = difflib.get_close_matches(str(name), self.names, n=1, cutoff=0.75)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise fail(f"{prefix}unknown key {name!r}{hint}; {self.allowed_word}: {allowed}")
        for key in self.keys:
            if key.required and key.name not in raw:
                raise fail(f"{prefix}missing key {key.name!r} ({key.doc}; {key.words()})")
        return raw


def type_name(value: Any) -> str:
    """What a YAML value is, in the words of the spec's description."""
    if value is None:
        return "nothing (null)"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "text"}
    names |= {list: "a list", dict: "a mapping"}
    return names.get(type(value), type(value).__name__) + ("" if value == "" else f" {value!r}")


def words(schema: dict[str, Any]) -> str:
    """A JSON Schema of a value in words: ``integer >= 1``, ``one of kn, kn++``,
    ``text, or list of text``."""
    if "title" in schema:  # what a reference to a definition stands for
        return schema["title"]
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if alternatives:
        return ", or ".join(words(alternative) for alternative in alternatives)
    if "const" in schema:
        return f"{schema['const']}"
    if "enum" in schema:
        return "one of " + ", ".join(_yaml(v) for v in schema["enum"])
    kind = schema.get("type", "")
    kinds = kind if isinstance(kind, list) else [kind]
    text = " or ".join(TYPE_WORDS.get(k, k) for k in kinds if k) or "anything"
    if "items" in schema:
        text += " of " + words(schema["items"])
    if "minimum" in schema and "maximum" in schema:
        bounds = [f"from {_yaml(schema['minimum'])} to {_yaml(schema['maximum'])}"]
    else:
        bounds = [f"{sign} {_yaml(schema[n])}" for n, sign in BOUNDS.items() if n in schema]
    if schema.get("multipleOf") == 2:
        bounds.append("even")
    if bounds:
        text += " " + " and ".join(bounds)
    return text


TYPE_WORDS = {
    "string": "text",
    "integer": "integer",
    "number": "number",
    "boolean": "true or false",
    "array": "list",
    "object": "mapping",
    "null": "nothing",
}
BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}


def _yaml(value: Any) -> str:
    """A value as a spec writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# The JSON Schemas of values that sections share.
TEXT = {"type": "string", "minLength": 1}
NAMES = {  # an empty list is none (paired: [], inputs: [])
    "anyOf": [TEXT, {"type": "array", "items": TEXT, "uniqueItems": True}],
    "title": "a name, or a list of names",
}
SOME_NAMES = {
    "anyOf": [TEXT, {"type": "array", "items": TEXT, "minItems": 1, "uniqueItems": True}],
    "title": "a name, or a list of at least one name",
}
FLAG = {"type": "boolean"}
COMMAND = {
    "anyOf": [TEXT, {"type": "array", "items": TEXT, "minItems": 1}],
    "title": "a command: [program, argument, ...]",
}
SIZE = {  # bytes, or 8GB, 512MiB, 100MB, 2kB
    "title": "bytes, or a size such as 8GB or 512MiB",
    "anyOf": [
        {"type": "integer", "minimum": 1},
        {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*([kKmMgGtT]i?)?[bB]?\s*$"},
    ],
}
LEVEL = {"type": ["string", "number", "boolean"]}


def count(least: int) -> dict:
    return {"type": "integer", "minimum": least}


def positive() -> dict:
    return {"type": "number", "exclusiveMinimum": 0}


def one_of(*values: str) -> dict:
    return {"type": "string", "enum": list(values)}
