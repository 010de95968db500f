"""A CSV or JSON table with intervals says their level and method in every row (``ci_level``,
``ci_method``, last), so a table passed on alone still tells a 90 % interval from a 95 % one."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import xarray as xr

import campaign
from campaign.analysis.sensitivity import Sensitivity
from campaign.render.sensitivity import render_sensitivity


def results() -> xr.Dataset:
    """Two paired strategies at two loads, 6 replicates, intervals at 90 %."""
    rng = np.random.default_rng(1)
    values = rng.normal(10.0, 1.0, (2, 2, 6)) + np.array([0.0, 1.0])[:, None, None]
    dims = ("strategy", "load", "replicate")
    return xr.Dataset(
        {"wait": (dims, values), "status": (dims, np.ones(values.shape, "i1"))},
        {"strategy": ["a", "b"], "load": [1.0, 2.0], "replicate": np.arange(6)},
        attrs={"confidence": 0.9, "paired": "strategy"},
    )


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_query_compare_and_rank_name_the_level_and_method_of_their_intervals():
    data = results()
    query = campaign.query(data, "wait")
    plain = campaign.table(query, "csv").splitlines()[0].split(",")
    assert plain[-2:] == ["ci_level", "ci_method"]
    assert plain[:-2] == list(query.columns)  # the other columns as they were
    for row in rows(campaign.table(query, "csv")):
        assert (row["ci_level"], row["ci_method"]) == ("0.9", "Student t over replicates")
    asked = campaign.query(data, "wait", by="load", confidence=0.8, pivot="strategy")
    (first, *_) = json.loads(campaign.table(asked, "json"))
    assert (first["ci_level"], first["ci_method"]) == (0.8, "Student t over replicates")
    paired = campaign.compare(data, "strategy", "a", "wait")
    for row in rows(campaign.table(paired, "csv")):
        method = "Student t over paired differences; ratio: delta method"
        assert (row["ci_level"], row["ci_method"]) == ("0.9", method)
    welch = campaign.compare(data, "strategy", "a", "wait", paired=False, confidence=0.99)
    (first, *_) = json.loads(campaign.table(welch, "json"))
    assert (first["ci_level"], first["ci_method"]) == (0.99, "Welch; ratio: delta method")
    ranking = campaign.rank(data, "strategy", "wait")
    for row in rows(campaign.table(ranking, "csv")):
        assert (row["ci_level"], row["ci_method"]) == ("0.9", "Student t over paired replicates")
    unpaired = campaign.rank(data.assign_attrs(paired=""), "strategy", "wait")
    (first, *_) = json.loads(campaign.table(unpaired, "json"))
    assert first["ci_method"] == "Student t over replicates"


def test_sensitivity_tables_name_the_bootstrap_or_the_regression():
    table = pd.DataFrame({"factor": ["x1", "x2"], "S1": [0.3, 0.4], "S1_conf": [0.05, 0.06]})
    common = dict(
        design="saltelli", points=64, replicates=1, valued=(1, 1), left_out=[], noise_share=0.0
    )
    sobol = Sensitivity("y", "sobol", table=table, confidence=0.9, resamples=500, **common)
    regression = Sensitivity("z", "regression", table=table, confidence=0.95, **common)
    for row in rows(render_sensitivity([sobol], "csv")):
        assert (row["ci_level"], row["ci_method"]) == ("0.9", "bootstrap, 500 resamples (normal)")
    both = json.loads(render_sensitivity([sobol, regression], "json"))
    assert [(r["metric"], r["ci_level"], r["ci_method"]) for r in both] == [
        ("y", 0.9, "bootstrap, 500 resamples (normal)"),
        ("y", 0.9, "bootstrap, 500 resamples (normal)"),
        ("z", 0.95, "Student t of the regression"),
        ("z", 0.95, "Student t of the regression"),
    ]
