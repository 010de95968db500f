"""JSON output is JSON: an infinite value (a p99 wait of jobs that never start) is the string
"Infinity", which every parser takes, where the bare ``Infinity`` that Python writes is refused
by JavaScript and read by jq as 1.8e308; the same number as the CSV's ``inf``."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import campaign


def refuse(constant: str):
    pytest.fail(f"{constant} is not JSON")


def test_infinite_and_undefined_means_are_json_and_the_csvs_numbers():
    values = np.array([[1.0, 2.0, np.inf, 4.0], [5.0, -np.inf, 7.0, 9.0], [np.nan] * 4])
    dims = ("s", "replicate")
    dataset = xr.Dataset(
        {"y": (dims, values), "status": (dims, np.ones(values.shape, "i1"))},
        {"s": ["a", "b", "c"], "replicate": np.arange(4)},
        attrs={"confidence": 0.95},
    )
    result = campaign.query(dataset, "y")
    records = json.loads(campaign.table(result, "json"), parse_constant=refuse)
    assert [r["y_mean"] for r in records] == ["Infinity", "-Infinity", None]
    rows = list(csv.DictReader(io.StringIO(campaign.table(result, "csv"))))
    assert [r["y_mean"] for r in rows] == ["inf", "-inf", ""]
    read = pd.read_json(io.StringIO(campaign.table(result, "json")))
    assert read["y_mean"].tolist()[:2] == [np.inf, -np.inf] and np.isnan(read["y_mean"][2])
