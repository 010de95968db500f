"""Every table of results that lack tasks says so: results.nc written before tasks its ledger
holds finished (``incomplete``) is named under compare's, rank's and effects'
tables as under query's; with CSV or JSON, what the numbers lack (those tasks, the values each
analysis left out) goes to stderr."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import xarray as xr

import campaign
from campaign.cli.main import main

BEHIND = "was written before tasks that the ledger beside it holds finished"
LACKED = {  # what each table says of the failed task's value, which its numbers lack
    "query": "campaign: 1 tasks failed in these cells: left out of the means and n",
    "compare": "campaign: note: 1 value left out, its replicate lacking the value of the level",
    "rank": "campaign: 1 replicates left out of the interval",
    "effects": "campaign: left out: 1 value of a failed task",
}


def stale_results() -> xr.Dataset:
    """Two paired strategies at two loads, 5 replicates, one task failed, results.nc behind."""
    rng = np.random.default_rng(2)
    dims = ("strategy", "load", "replicate")
    values = rng.normal(10.0, 1.0, (2, 2, 5)) + np.array([0.0, 2.0])[:, None, None]
    status = np.ones(values.shape, "i1")
    values[1, 1, 4], status[1, 1, 4] = np.nan, 2
    seeds = np.broadcast_to(np.arange(10).reshape(1, 2, 5), values.shape)
    return xr.Dataset(
        {"wait": (dims, values), "status": (dims, status), "seed": (dims, seeds.copy())},
        {"strategy": ["a", "b"], "load": [1.0, 2.0], "replicate": np.arange(5)},
        attrs={"confidence": 0.95, "paired": "strategy", "incomplete": BEHIND},
    )


def test_every_analysis_of_stale_results_says_so_under_its_table():
    data = stale_results()
    note = f"results.nc {BEHIND}"
    assert note in campaign.table(campaign.query(data, "wait")).splitlines()
    for result in (
        campaign.compare(data, "strategy", "a", "wait"),
        campaign.rank(data, "strategy", "wait"),
        campaign.effects(data, "wait"),
    ):
        for fmt in ("text", "markdown"):
            assert note in campaign.table(result, fmt).replace("\n  ", " "), (result, fmt)
    fresh = data.assign_attrs(incomplete="")
    assert "results.nc" not in campaign.table(campaign.compare(fresh, "strategy", "a", "wait"))


def test_csv_and_json_hold_the_data_and_stderr_what_it_lacks(tmp_path, capsys):
    path = tmp_path / "results.nc"
    stale_results().to_netcdf(path)
    note = f"campaign: results.nc {BEHIND}"
    commands = {
        "query": ["query", str(path)],
        "compare": ["compare", str(path), "--factor", "strategy", "--baseline", "a"],
        "rank": ["query", str(path), "--rank", "strategy", "--metric", "wait"],
        "effects": ["effects", str(path), "--metric", "wait"],
    }
    for name, argv in commands.items():
        if name == "compare":
            argv = [*argv, "--metric", "wait"]
        for fmt in ("csv", "json"):
            assert main([*argv, "--format", fmt]) == 0
            out, err = capsys.readouterr()
            rows = json.loads(out) if fmt == "json" else list(csv.DictReader(io.StringIO(out)))
            assert rows and "results.nc" not in out, (name, fmt)
            said = err.splitlines()
            assert note in said, (name, fmt, err)
            assert any(line.startswith(LACKED[name]) for line in said), err
            assert len(said) == 2 or name != "effects", err  # the others: every warning, below


def test_compare_csv_and_json_say_on_stderr_every_warning_its_text_table_shows(tmp_path, capsys):
    path = tmp_path / "results.nc"
    stale_results().to_netcdf(path)
    argv = ["compare", str(path), "--factor", "strategy", "--baseline", "a", "--metric", "wait"]
    assert main(argv) == 0
    text = capsys.readouterr().out.splitlines()
    for fmt in ("csv", "json"):
        assert main([*argv, "--format", fmt]) == 0
        said = capsys.readouterr().err.splitlines()
        assert [f"campaign: {line}" for line in text[-len(said) :]] == said
        assert any("too few for an interval" in line for line in said), said


def noisy_results() -> xr.Dataset:
    """Three paired strategies at two loads, 3 replicates, one value NaN (its task finished)."""
    rng = np.random.default_rng(3)
    dims = ("strategy", "load", "replicate")
    values = rng.normal(10.0, 1.0, (3, 2, 3)) + np.array([0.0, 2.0, 4.0])[:, None, None]
    values[2, 0, 1] = np.nan
    seeds = np.broadcast_to(np.arange(6).reshape(1, 2, 3), values.shape)
    return xr.Dataset(
        {"wait": (dims, values), "status": (dims, np.ones(values.shape, "i1"))}
        | {"seed": (dims, seeds.copy())},
        {"strategy": ["a", "b", "c"], "load": [1.0, 2.0], "replicate": np.arange(3)},
        attrs={"confidence": 0.95, "paired": "strategy"},
    )


def test_query_and_rank_csv_and_json_say_on_stderr_every_warning_their_text_shows(tmp_path, capsys):
    """Too few replicates, NaN values, replicates left out, the Friedman test: each line under
    the text table (but a ranking's legend, which says what its columns are) is said on
    stderr with CSV and JSON, as compare's are."""
    path = tmp_path / "results.nc"
    noisy_results().to_netcdf(path)
    expected = {
        "query": ["values NaN", "rest on 2 replicate(s)"],
        "rank": ["replicates left out", "rest on 2 replicates", "Friedman test"],
    }
    for name, argv in {
        "query": ["query", str(path)],
        "rank": ["query", str(path), "--rank", "strategy", "--metric", "wait"],
    }.items():
        assert main(argv) == 0
        text = capsys.readouterr().out.replace("\n  ", " ")
        for fmt in ("csv", "json"):
            assert main([*argv, "--format", fmt]) == 0
            err = capsys.readouterr().err
            said = [line.removeprefix("campaign: ") for line in err.splitlines()]
            assert all(line in text for line in said), (name, said)
            for words in expected[name]:
                assert any(words in line for line in said), (name, fmt, words, said)
            assert not any(line.startswith("D_means:") for line in said), said


def test_an_export_or_a_figure_of_stale_results_says_so_beside_the_files(tmp_path, capsys):
    """The table of every task lacks those finished since results.nc was written: `export`
    says so on stderr (its Parquet file in its metadata), not in the CSV itself; `plot`
    says so of its figure."""
    import pyarrow.parquet as pq

    path = tmp_path / "results.nc"
    stale_results().to_netcdf(path)
    assert main(["export", str(path), "-o", str(tmp_path / "tasks.csv")]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == f"wrote {tmp_path / 'tasks.csv'}"
    assert err.splitlines() == [f"campaign: results.nc {BEHIND}"]
    said = []
    campaign.export(path, tmp_path / "tasks.parquet", say=said.append)
    assert said == [f"results.nc {BEHIND}"]
    metadata = json.loads(pq.read_schema(tmp_path / "tasks.parquet").metadata[b"campaign"])
    assert metadata["incomplete"] == BEHIND
    png = tmp_path / "wait.png"  # a figure of them, the same
    assert main(["plot", str(path), "--metric", "wait", "--out", str(png)]) == 0
    assert capsys.readouterr().err.splitlines() == [f"campaign: results.nc {BEHIND}"]
    assert campaign.plot(path, "wait", out=png, say=said.append) == png
    assert said == [f"results.nc {BEHIND}"] * 2
    stale_results().assign_attrs(incomplete="").to_netcdf(path)
    assert campaign.export(path, tmp_path / "again.csv", say=said.append)
    assert campaign.plot(path, "wait", out=png, say=said.append) and len(said) == 2
