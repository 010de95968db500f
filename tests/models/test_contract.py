"""The model contract: the parameter table, and the checks every registered model passes."""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest

from campaign.models import BUILTIN, load_model, registered
from campaign.models.contract import (
    Choice,
    Either,
    Flag,
    Integer,
    Kind,
    ListOf,
    Model,
    Null,
    Number,
    Param,
    Params,
)
from campaign.results.names import metric_values
from tests.conftest import load_script

REPO = Path(__file__).resolve().parents[2]

TABLE = Params(
    "toy",
    Param("rate", Number(0, low_open=True), doc="arrival rate", unit="1/s"),
    Param("size", Integer(1, 64), 8, "processors"),
    Param("policy", Choice("fcfs", "easy"), "easy", "queue policy"),
    Param("kill", Flag(), True, "kill at the estimate"),
    Param("cap", Either(Integer(1, infinite=True), Null("unlimited")), None, "copies"),
    Param("sizes", ListOf(Integer(1), "machine sizes"), [4, 4], "machines"),
    Param("offset", Number(0), None, "offset", unit="s", default_text="half the period"),
)


def test_values_fill_defaults_and_convert_as_declared():
    values = TABLE.values({"rate": 2, "size": 16.0, "cap": math.inf, "sizes": [np.int64(3)]})
    assert values == {
        "rate": 2.0,
        "size": 16,
        "policy": "easy",
        "kill": True,
        "cap": math.inf,
        "sizes": (3,),
        "offset": None,
    }
    assert type(values["size"]) is int and type(values["sizes"][0]) is int
    assert TABLE.values({"rate": 1, "cap": None, "offset": None})["cap"] is None
    assert TABLE.defaults() == {
        "size": 8,
        "policy": "easy",
        "kill": True,
        "cap": None,
        "sizes": [4, 4],
        "offset": None,
    }


@pytest.mark.parametrize(
    ("params", "error"),
    [
        (
            {"rate": 1, "colour": 2},
            "unknown parameter 'colour' for model toy; "
            "allowed: rate, size, policy, kill, cap, sizes, offset",
        ),
        ({}, "parameter 'rate' is required for model toy: a number > 0"),
        ({"rate": 0}, "parameter 'rate' must be a number > 0 (1/s), got 0"),
        ({"rate": math.nan}, "parameter 'rate' must be a number > 0 (1/s), got nan"),
        ({"rate": True}, "parameter 'rate' must be a number > 0 (1/s), got True"),
        ({"rate": "1"}, "parameter 'rate' must be a number > 0 (1/s), got '1'"),
        ({"rate": 1, "size": 2.5}, "parameter 'size' must be an integer in [1, 64], got 2.5"),
        ({"rate": 1, "size": 65}, "parameter 'size' must be an integer in [1, 64], got 65"),
        ({"rate": 1, "policy": "sjf"}, "parameter 'policy' must be one of fcfs, easy, got 'sjf'"),
        ({"rate": 1, "kill": 1}, "parameter 'kill' must be true or false, got 1"),
        (
            {"rate": 1, "cap": 0},
            "parameter 'cap' must be an integer >= 1 or .inf or null (unlimited), got 0",
        ),
        ({"rate": 1, "sizes": []}, "parameter 'sizes' must be a list of machine sizes, got []"),
        ({"rate": 1, "sizes": [4, 0]}, "parameter 'sizes' must be a list of machine sizes, got"),
        ({"rate": 1, "offset": -1}, "parameter 'offset' must be a number >= 0 (s), got -1"),
    ],
)
def test_a_bad_value_is_one_line_saying_what_is_allowed(params, error):
    with pytest.raises(ValueError) as caught:
        TABLE.values(params)
    assert str(caught.value).startswith(error) and "\n" not in str(caught.value)


def test_the_documentation_table_is_written_from_the_declaration():
    assert TABLE.markdown().splitlines()[:4] == [
        "| parameter | allowed | default | unit | meaning |",
        "|---|---|---|---|---|",
        "| `rate` | a number > 0 | required | 1/s | arrival rate |",
        "| `size` | an integer in [1, 64] | 8 |  | processors |",
    ]
    assert "| `offset` | a number >= 0 | half the period | s | offset |" in TABLE.markdown()


def test_a_declaration_with_undocumented_metrics_is_refused():
    def run(params, seed):
        return {"x": 1.0}

    with pytest.raises(ValueError, match="metric 'x' must be a snake_case name declared with"):
        Model("toy", run, metrics={"x": {"units": "s"}})
    with pytest.raises(ValueError, match="headline metric 'y' is not declared"):
        Model("toy", run, metrics={"x": {"units": "s", "long_name": "x"}}, headline=("y",))


# -- every registered model -------------------------------------------------------------------
MODELS = sorted(registered())


def declared(metric: str, metrics: dict) -> bool:
    return any(
        re.fullmatch(re.sub(r"\\\{[a-z]+\\\}", r"\\d+", re.escape(k)), metric) for k in metrics
    )


@pytest.fixture(params=MODELS)
def model(request, workloads) -> Model:
    return load_model(request.param)


def test_a_model_declares_its_params_metrics_with_units_and_an_example(model):
    assert isinstance(model, Model) and model.summary and model.checks and model.example
    for name, doc in model.metrics.items():
        assert doc["units"] and doc["long_name"], name
    assert set(model.headline) <= set(model.metrics)
    model.check(model.example)


def test_same_seed_same_metrics_each_declared_with_units(model):
    first, again = model(model.example, 11), model(dict(model.example), 11)
    assert list(first) == list(again)
    stored, stored_again = metric_values(first), metric_values(again)
    assert list(stored) == list(stored_again)
    assert np.array_equal(list(stored.values()), list(stored_again.values()), equal_nan=True)
    samples, breakdowns = set(model.samples), set(model.breakdowns)
    assert all(type(v) is float for n, v in first.items() if n not in samples | breakdowns)
    for name in breakdowns:  # declared breakdowns: label -> metric -> float
        assert all(type(v) is float for per in first[name].values() for v in per.values())
    for name in samples:  # declared samples: 1-D arrays of floats
        assert isinstance(first[name], np.ndarray) and first[name].ndim == 1, name
        assert first[name].dtype == np.float64, name
    undeclared = [name for name in first if not declared(name, model.metrics)]
    assert not undeclared


def test_an_unknown_param_is_one_line_naming_it_and_the_allowed_ones(model):
    with pytest.raises(ValueError) as caught:
        model.check({**model.example, "no_such_param": 1})
    message = str(caught.value)
    assert "'no_such_param'" in message and "allowed:" in message and "\n" not in message


def test_every_declared_param_refuses_a_bad_value_in_one_line(model):
    for param in model.params or ():
        if type(param.kind) is Kind:  # accepts any value (a label)
            continue
        with pytest.raises(ValueError) as caught:
            model.check({**model.example, param.name: {"not": "a value"}})
        message = str(caught.value)
        assert message.startswith(f"parameter {param.name!r} must be {param.kind.allowed}")
        assert "\n" not in message
    for param in model.params or ():
        if param.required:
            without = {k: v for k, v in model.example.items() if k != param.name}
            with pytest.raises(ValueError, match=f"parameter '{param.name}' is required"):
                model.check(without)


def test_the_readme_tables_of_the_models_are_up_to_date():
    """Each built-in model package with a params table carries the generated tables in its
    README.md (scripts/model_docs.py writes them)."""
    docs = load_script("model_docs")
    packages = set()
    for name, reference in BUILTIN.items():
        origin = importlib.util.find_spec(reference.partition(":")[0]).origin
        if origin.endswith("__init__.py") and load_model(name).params is not None:
            packages.add(name)
    assert set(docs.readmes()) == packages
    assert docs.main(["--check"]) == 0
