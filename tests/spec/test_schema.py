"""The spec's one description (campaign/spec/schema.py) is what the parser checks keys
against and what the JSON Schema editors read says: every spec of the project and every
example of the documentation passes the schema, a wrong key or type is refused by both, and
an unknown key in any mapping is refused by the parser with exactly the keys the
description lists."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from campaign.errors import CampaignError
from campaign.spec.json_schema import json_schema
from campaign.spec.keys import parse_spec
from campaign.spec.load import read_yaml
from campaign.spec.schema import DESIGNS, PRECISION, SELECT, SPEC
from campaign.spec.schema_program import DECLARE, PROGRAM, RESOURCES

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted((ROOT / "specs").rglob("*.yaml"))
SCHEMA = json_schema()
VALIDATOR = jsonschema.Draft7Validator(SCHEMA)
YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.MULTILINE | re.DOTALL)
BASE = {"name": "s", "model": "mm1", "seed": 1, "replicates": 2}
PROGRAM_BASE = {"name": "s", "model": {"command": ["true", "{seed}"], "labels": ["x"]}, "seed": 1,
                "replicates": 2, "factors": {"x": [1, 2]}}  # fmt: skip


def schema_errors(data) -> list[str]:
    return [error.message for error in VALIDATOR.iter_errors(data)]


def partial(schema: dict) -> dict:
    """A schema that takes part of a spec: its keys checked, none required."""
    schema = copy.deepcopy(schema)
    schema.pop("required", None)
    schema.pop("oneOf", None)
    return schema


def test_the_schema_is_a_json_schema():
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert set(SCHEMA["properties"]) == set(SPEC.names)
    assert SCHEMA["required"] == ["name", "model", "seed"]


@pytest.mark.parametrize(
    "path", SPECS, ids=[p.relative_to(ROOT / "specs").as_posix() for p in SPECS]
)
def test_every_spec_of_the_project_passes_the_schema(path):
    data = read_yaml(path.read_text(), str(path))
    if not isinstance(data, dict) or "model" not in data:
        pytest.skip(f"{path.name} is no spec")  # a data file beside a spec
    assert schema_errors(data) == []


def documented_examples() -> list[tuple[str, dict]]:
    """Each YAML block of README.md and the site's pages that is a spec or part of one."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = []
    for page in pages:
        if "_build" in page.parts or "_generated" in page.parts:
            continue
        for at, block in enumerate(YAML_BLOCK.findall(page.read_text())):
            data = read_yaml(block, page.name)
            if isinstance(data, dict):
                found.append((f"{page.relative_to(ROOT)}#{at}", data))
    return found


def test_every_documented_example_passes_the_schema():
    """A whole spec against the schema; a part of one (a precision: block, a program's
    model:) against the schema of the mapping it belongs in, no key required there."""
    top = partial(SCHEMA) | {"definitions": SCHEMA["definitions"]}
    program = partial(SCHEMA["definitions"]["program"]) | {"definitions": SCHEMA["definitions"]}
    checked = 0
    for where, data in documented_examples():
        if {"name", "model", "seed"} <= set(data):
            errors = schema_errors(data)
        elif set(data) <= set(SPEC.names):
            errors = [e.message for e in jsonschema.Draft7Validator(top).iter_errors(data)]
        elif set(data) <= set(PROGRAM.names):
            errors = [e.message for e in jsonschema.Draft7Validator(program).iter_errors(data)]
        else:
            continue  # a cluster file, TLS settings: not a spec
        assert errors == [], where
        checked += 1
    assert checked >= 10


WRONG = [
    ({"replicate": 2}, "unknown key 'replicate' (did you mean 'replicates'?)"),
    ({"seed": "7"}, "seed: '7' is not allowed"),
    ({"replicates": 0}, "replicates: 0 is not allowed"),
    ({"paired": 3}, "paired: expected a list"),
    ({"metrics": []}, "metrics: expected a non-empty list"),
    ({"percentiles": [50, 101]}, "percentiles: 101 is not allowed"),
    ({"resources": {"cpus": 2}}, "resources: unknown key 'cpus'; allowed: cores, memory"),
    ({"resources": {"cores": 0}}, "resources.cores: 0 is not allowed"),
    ({"factors": {"x": {"low": 0, "high": 1}}, "design": {"sobol": {"n": 8}}},
     "design.sobol: unknown key 'n'; allowed: points"),
    ({"design": "taguchi"}, "design: unknown design 'taguchi'"),
]  # fmt: skip
WRONG_PRECISION = [
    ({"metrics": ["mean_wait"], "half_width": "5%", "max_replicates": 9},
     "precision.half_width: '5%' is not allowed"),
    ({"metrics": ["mean_wait"], "half_width": 0.1, "max_replicates": 9, "tolerance": 1},
     "precision: unknown key 'tolerance'; allowed: metrics, half_width"),
]  # fmt: skip
WRONG_SELECT = [
    ({"goal": "smallest"}, "select.goal: 'smallest' is not allowed"),
    ({"procedure": "kn2"}, "select.procedure: 'kn2' is not allowed"),
    ({"pcs": "high"}, "select.pcs: 'high' is not allowed"),
    ({"delta": 1}, "select: unknown key 'delta'; allowed: metric, goal, among"),
]
WRONG_PROGRAM = [
    ({"inputz": ["sim"]}, "model: unknown key 'inputz' (did you mean 'inputs'?)"),
    ({"shell": "yes"}, "model.shell: 'yes' is not allowed"),
    ({"keep_limit": "lots"}, "model.keep_limit: 'lots' is not a size"),
    ({"declare": {"w": {"unit": "s"}}}, "model.declare.w: unknown key 'unit' (did you mean"),
    ({"declare": {"w": {"kind": "list"}}}, "model.declare.w.kind: 'list' is not allowed"),
    ({"metrics": {"stdout": True}}, "model.metrics: {'stdout': True} is not allowed"),
]


def wrong_specs():
    for change, message in WRONG:
        yield BASE | change, message
    for change, message in WRONG_PRECISION:
        spec = {k: v for k, v in BASE.items() if k != "replicates"} | {"precision": change}
        yield spec, message
    select = {"metric": "mean_wait", "goal": "min", "indifference": 1.0, "among": "x"}
    for change, message in WRONG_SELECT:
        spec = {k: v for k, v in BASE.items() if k != "replicates"}
        yield spec | {"factors": {"x": [1, 2]}, "select": select | change}, message
    for change, message in WRONG_PROGRAM:
        yield PROGRAM_BASE | {"model": PROGRAM_BASE["model"] | change}, message


@pytest.mark.parametrize(("spec", "message"), list(wrong_specs()))
def test_a_wrong_key_or_type_is_refused_by_the_parser_and_the_schema(spec, message):
    assert schema_errors(spec), "the JSON Schema let it pass"
    with pytest.raises(CampaignError) as refused:
        parse_spec(spec, path=None)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_the_right_specs_of_those_cases_pass_both():
    """The bases the wrong specs are made from pass, so each refusal is the change's."""
    for spec in (BASE, PROGRAM_BASE):
        assert schema_errors(spec) == []
        parse_spec(spec)


MAPPINGS = [  # (a spec whose mapping has the key "zzz", the section that mapping is)
    (BASE | {"zzz": 1}, SPEC),
    ({**BASE, "replicates": None, "precision": {"zzz": 1}}, PRECISION),
    ({**BASE, "replicates": None, "factors": {"x": [1, 2]}, "select": {"zzz": 1}}, SELECT),
    (PROGRAM_BASE | {"model": PROGRAM_BASE["model"] | {"zzz": 1}}, PROGRAM),
    (PROGRAM_BASE | {"model": {**PROGRAM_BASE["model"], "declare": {"w": {"zzz": 1}}}}, DECLARE),
    (BASE | {"resources": {"zzz": 1}}, RESOURCES),
    *((BASE | {"factors": {"x": {"low": 0, "high": 1}}, "design": {kind: {"zzz": 1}}}, section)
      for kind, section in DESIGNS.items()),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "section"), MAPPINGS, ids=[s.where or "top" for _, s in MAPPINGS])
def test_the_parser_allows_exactly_the_described_keys(spec, section):
    spec = {key: value for key, value in spec.items() if value is not None}
    with pytest.raises(CampaignError) as refused:
        parse_spec(spec)
    assert f"unknown key 'zzz'; {section.allowed_word}: {', '.join(section.names)}" in str(
        refused.value
    )


def test_campaign_schema_prints_the_schema(tmp_path):
    printed = subprocess.run(
        [sys.executable, "-m", "campaign", "schema"], capture_output=True, text=True, check=True
    )
    assert json.loads(printed.stdout) == SCHEMA
    written = subprocess.run(
        [sys.executable, "-m", "campaign", "schema", "-o", str(tmp_path / "s.json")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert written.stdout == f"wrote {tmp_path / 's.json'}\n"
    assert json.loads((tmp_path / "s.json").read_text()) == SCHEMA
