"""Spec loading: valid specs parse; each kind of mistake gets one line naming key and allowed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from campaign.errors import CampaignError
from campaign.spec import load_spec

VALID = """
name: demo
model: mm1
params:
  service_rate: 1.0
  customers: 100
factors:
  arrival_rate: [0.5, 0.8]
  label: {low: 1, high: 2}
paired: [label]
replicates: 3
seed: 7
metrics: [mean_wait]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_valid_spec_parses_every_key(tmp_path):
    # 'label' is not an mm1 parameter, so skip the model check for this structural test.
    spec = load_spec(write(tmp_path, VALID), check_model=False)
    assert spec.name == "demo" and spec.model == "mm1"
    assert spec.params == {"service_rate": 1.0, "customers": 100}
    assert [f.name for f in spec.factors] == ["arrival_rate", "label"]
    assert spec.factor("arrival_rate").values == (0.5, 0.8)
    assert spec.factor("label").labels == ("low", "high")
    assert spec.factor("label").values == (1, 2)
    assert spec.paired == ("label",)
    assert (spec.replicates, spec.seed, spec.metrics) == (3, 7, ("mean_wait",))
    assert spec.cells == 4 and spec.tasks == 12
    assert spec.output == Path("outputs/demo")
    assert spec.text == textwrap.dedent(VALID)


def test_explicit_output_is_relative_to_the_spec_file(tmp_path):
    spec = load_spec(write(tmp_path, VALID + "output: results/here\n"), check_model=False)
    assert spec.output == tmp_path / "results" / "here"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ("colour: red", "unknown key 'colour'; allowed keys: name, description, model"),
        ("factors: {arrival_rate: []}", "factors.arrival_rate: the level list is empty"),
        ("factors: {arrival_rate: [0.5, fast]}", "level 'fast' is a string but earlier levels"),
        ("factors: {arrival_rate: [[1, 2]]}", "level [1, 2] is not allowed; levels are numbers"),
        ("model: nosuchmodel", "model: unknown model 'nosuchmodel'; built-in models:"),
        ("model: 'nosuchpackage.mod:run'", "cannot import module 'nosuchpackage.mod'"),
        ("replicates: 0", "replicates: 0 is not allowed; use an integer >= 1"),
        ("replicates: ten", "replicates: 'ten' is not allowed; use an integer >= 1"),
        ("paired: [speed]", "paired: 'speed' is not a factor; factors: arrival_rate"),
        ("seed: -1", "seed: -1 is not allowed; use an integer >= 0"),
        ("factors: {replicate: [1]}", "factors: 'replicate' is reserved"),
        ("factors: {customers: [1, 2]}", "'customers' is also a fixed parameter"),
        ("factors: {arrival_rate: [0.5, 0.5]}", "factors.arrival_rate: levels repeat"),
    ],
)
def test_invalid_spec_names_key_value_and_allowed(tmp_path, edit, expected):
    base = {
        "name": "name: demo",
        "model": "model: mm1",
        "params": "params: {service_rate: 1.0, customers: 100}",
        "factors": "factors: {arrival_rate: [0.5, 0.8]}",
        "replicates": "replicates: 2",
        "seed": "seed: 1",
    }
    key = edit.split(":")[0]
    base[key] = edit
    path = write(tmp_path, "\n".join(base.values()) + "\n")
    with pytest.raises(CampaignError) as info:
        load_spec(path)
    message = str(info.value)
    assert expected in message
    assert "\n" not in message
    assert str(path) in message


def test_missing_required_key(tmp_path):
    path = write(tmp_path, "name: x\nmodel: mm1\nreplicates: 1\n")
    with pytest.raises(CampaignError, match=r"missing key 'seed' \(integer >= 0\)"):
        load_spec(path)


def test_model_refuses_bad_params_naming_the_cell(tmp_path):
    path = write(
        tmp_path,
        """
        name: demo
        model: mm1
        params: {service_rate: 1.0}
        factors: {arrival_rate: [0.5, 1.5]}
        replicates: 1
        seed: 1
        """,
    )
    with pytest.raises(CampaignError) as info:
        load_spec(path)
    assert "cell arrival_rate=1.5" in str(info.value)
    assert "0 < arrival_rate < service_rate" in str(info.value)


def test_model_refuses_unknown_param(tmp_path):
    path = write(
        tmp_path, "name: d\nmodel: mm1\nparams: {arival_rate: 0.5}\nreplicates: 1\nseed: 1\n"
    )
    with pytest.raises(CampaignError, match="unknown parameter 'arival_rate' for model mm1"):
        load_spec(path)


def test_yaml_syntax_error_gives_the_line(tmp_path):
    path = write(tmp_path, "name: d\nfactors: [a\nseed: 1\n")
    with pytest.raises(CampaignError, match="is not valid YAML"):
        load_spec(path)
