"""The spec's description (`campaign.spec.schema`) as a JSON Schema (draft 7), for editors:
the YAML language server completes keys, shows each one's description and default, and
marks an unknown key or a value of the wrong type as you type (`campaign schema` writes it).

The schema checks what a spec's shape can say (keys, types, ranges, allowed values); what
needs the model or the file system (a level the model refuses, a missing input) only
`campaign validate` can check.
"""

from __future__ import annotations

from typing import Any

from campaign.spec.schema import DESIGNS, PRECISION, RANGE, SELECT, SPEC
from campaign.spec.schema_model import Section
from campaign.spec.schema_program import DECLARE, METRICS_SOURCE, PROGRAM, RESOURCES

DRAFT = "http://json-schema.org/draft-07/schema#"
FILE_NAME = "campaign-spec.schema.json"
DEFINITIONS: dict[str, Section] = {
    "program": PROGRAM,
    "metrics_source": METRICS_SOURCE,
    "declare": DECLARE,
    "resources": RESOURCES,
    "precision": PRECISION,
    "select": SELECT,
    "range": RANGE,
}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a spec file."""
    definitions = {name: section_schema(section) for name, section in DEFINITIONS.items()}
    for kind, section in DESIGNS.items():
        definitions[f"design_{kind}"] = {
            "type": "object",
            "description": section.doc,
            "properties": {kind: section_schema(section)},
            "required": [kind],
            "additionalProperties": False,
        }
    return {
        "$schema": DRAFT,
        "title": "campaign spec",
        **section_schema(SPEC),
        "definitions": definitions,
    }


def section_schema(section: Section) -> dict[str, Any]:
    """One mapping's schema: its keys and nothing else, the required ones, and exactly one
    of its ``one_of`` keys."""
    properties = {}
    for key in section.keys:
        if key.section is not None:  # draft 7 ignores the siblings of a $ref: wrap it
            value = {"allOf": [{"$ref": f"#/definitions/{definition_of(key.section)}"}]}
        else:
            value = dict(key.value)
        entry = {"description": described(key.doc, key.default_text), **value}
        if key.has_default:
            entry["default"] = key.default
        properties[key.name] = entry
    schema: dict[str, Any] = {
        "type": "object",
        "description": section.doc,
        "properties": properties,
        "additionalProperties": False,
    }
    if section.required:
        schema["required"] = list(section.required)
    if section.one_of:
        schema["oneOf"] = [{"required": [name]} for name in section.one_of]
    return schema


def described(doc: str, default_text: str) -> str:
    return f"{doc} (default: {default_text})" if default_text else doc


def definition_of(section: Section) -> str:
    return next(name for name, known in DEFINITIONS.items() if known is section)
