"""The results file as tidy data: one row per task, failures apart, CSV and Parquet with
units, and the CF conventions checked by a CF checker."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.design.tasks import Design, cell_params
from campaign.models.check import mm1
from campaign.plan.plan import replay_rounds
from campaign.render.export import tidy
from campaign.results.assemble import assemble
from campaign.results.netcdf import write_netcdf
from campaign.results.table import failure_table
from campaign.spec.load import load_spec
from tests.conftest import finished_campaign

SPEC = """
name: tidy
model: mm1
params: {customers: 200, fail_above: 1.0}
factors:
  arrival_rate: [0.5, 0.7]
  service_rate: {fast: 2.0, slow: 1.0}
replicates: 5
seed: 3
output: out
"""


tidy_campaign = finished_campaign("tidy", SPEC)


@pytest.fixture(scope="module")
def failing(tidy_campaign):
    """The results.nc of a finished campaign where the model fails for some seeds (first
    interarrival > 1)."""
    return tidy_campaign / "results.nc"


def test_plain_to_dataframe_gives_one_row_per_task(failing):
    with xr.open_dataset(failing) as ds:
        frame = ds.to_dataframe()
        seeds, status = ds["seed"].values, ds["status"].values
    assert len(frame) == 2 * 2 * 5
    assert list(frame.index.names) == ["arrival_rate", "service_rate", "replicate"]
    rates = {"fast": 2.0, "slow": 1.0}
    failed = 0
    for (arrival, label, _), row in zip(frame.index, frame.itertuples(index=False)):
        params = {"customers": 200, "fail_above": 1.0, "arrival_rate": arrival}
        params["service_rate"] = rates[label]
        try:
            metrics = mm1(params, int(row.seed))
        except RuntimeError:
            failed += 1
            assert row.status == 2 and math.isnan(row.mean_wait)
            continue
        assert row.status == 1
        assert row.mean_wait == metrics["mean_wait"]
        assert row.utilization == metrics["utilization"]
    assert 0 < failed < 20 and failed == int((status == 2).sum())
    assert frame["seed"].to_numpy().tolist() == seeds.ravel().tolist()


def test_failures_live_in_their_own_group_one_row_each(failing):
    failures = xr.load_dataset(failing, group="failures")
    assert failures.equals(campaign.open_failures(failing))
    with xr.open_dataset(failing) as ds:
        where = np.argwhere(ds["status"].values == 2)
        levels = [
            (float(ds["arrival_rate"][a]), ds["service_rate"].values[s], int(r))
            for a, s, r in where
        ]
    table = failures.to_dataframe()
    assert list(zip(table["arrival_rate"], table["service_rate"], table["failure_replicate"])) == (
        levels
    )
    assert all(e.startswith("RuntimeError: first interarrival ") for e in table["failure_error"])
    assert all(e.endswith(" exceeds fail_above=1.0") for e in table["failure_error"])


def test_a_campaign_without_failures_has_one_row_per_task_too(tmp_path):
    design = Design(spec_file(tmp_path, SPEC.replace(", fail_above: 1.0", "")))
    records = run_in_process(design)
    dataset = assemble(design, records, 0.95)
    path = write_netcdf(dataset, tmp_path / "results.nc", failure_table(dataset, design, records))
    with xr.open_dataset(path) as reopened:
        assert len(reopened.to_dataframe()) == 20
    assert campaign.open_failures(path).sizes["failure"] == 0


def spec_file(folder, text):
    path = folder / "spec.yaml"
    path.write_text(text)
    return load_spec(path)


def run_in_process(design):
    """The design's records from the real model, run here (no cluster needed)."""
    records = {}
    for task in design.tasks():
        metrics = mm1(cell_params(design.spec, task.cell), task.seed)
        records[task.key] = {"key": task.key, "status": "ok", "metrics": metrics}
    return records


def test_export_csv_keeps_every_value_and_the_units_beside(failing, tmp_path):
    out = tmp_path / "tasks.csv"
    assert main(["export", str(failing.parent), "-o", str(out)]) == 0
    frame = pd.read_csv(out, keep_default_na=False, na_values=[""])
    dataset = campaign.open_results(failing)
    expected = tidy(dataset, campaign.open_failures(failing))
    assert list(frame.columns) == [
        "arrival_rate",
        "service_rate",
        "replicate",
        "seed",
        "status",
        "mean_wait",
        "max_wait",
        "utilization",
        "error",
    ]
    assert len(frame) == 20
    assert frame["seed"].tolist() == dataset["seed"].values.ravel().tolist()
    for metric in ("mean_wait", "max_wait", "utilization"):  # exact, NaN where failed
        assert np.array_equal(
            frame[metric].to_numpy(), dataset[metric].values.ravel(), equal_nan=True
        )
    failed = frame["status"] == "failed"
    assert failed.sum() == int((dataset["status"] == 2).sum())
    assert (frame.loc[~failed, "status"] == "ok").all()
    assert frame["error"].fillna("").tolist() == expected["error"].tolist()
    assert frame.loc[failed, "error"].str.contains("exceeds fail_above=1.0").all()
    units = pd.read_csv(tmp_path / "tasks.units.csv", keep_default_na=False)
    assert units.to_dict("records") == [
        {"column": "arrival_rate", "units": "", "long_name": "factor arrival_rate"},
        {"column": "service_rate", "units": "", "long_name": "factor service_rate"},
        {"column": "replicate", "units": "1", "long_name": "replicate index"},
        {"column": "seed", "units": "", "long_name": "random seed of the task"},
        {"column": "status", "units": "", "long_name": "task status: ok, failed or missing"},
        {"column": "mean_wait", "units": "s", "long_name": "mean waiting time in queue"},
        {"column": "max_wait", "units": "s", "long_name": "maximum waiting time in queue"},
        {
            "column": "utilization",
            "units": "1",
            "long_name": "total service time / total interarrival time",
        },
        {"column": "error", "units": "", "long_name": "error message of a failed task"},
    ]


def test_export_parquet_carries_units_as_column_metadata(failing, capsys):
    assert main(["export", str(failing), "--format", "parquet"]) == 0
    out = failing.with_suffix(".parquet")
    assert capsys.readouterr().out == f"wrote {out}\n"
    table = pq.read_table(out)
    assert table.schema.field("mean_wait").metadata == {
        b"units": b"s",
        b"long_name": b"mean waiting time in queue",
    }
    assert table.schema.field("replicate").metadata[b"units"] == b"1"
    assert b'"model": "mm1"' in table.schema.metadata[b"campaign"]
    frame = table.to_pandas()
    dataset = campaign.open_results(failing)
    pd.testing.assert_frame_equal(
        frame, tidy(dataset, campaign.open_failures(failing)), check_dtype=False
    )
    assert frame["seed"].tolist() == dataset["seed"].values.ravel().tolist()


def test_a_parquet_export_names_the_results_it_was_made_from(failing, tmp_path):
    """Kept beside a paper after results.nc was written again (more replicates), the table
    says which results it holds: results.nc's own digest and time of writing."""
    out = tmp_path / "kept" / "tasks.parquet"
    assert campaign.export(failing, out) == [out]
    provenance = json.loads(pq.read_table(out).schema.metadata[b"campaign"])
    attrs = campaign.open_results(failing).attrs
    assert provenance["results_digest"] == attrs["results_digest"]
    assert provenance["results_digest"].startswith("blake2b:")
    assert provenance["created"] == attrs["created"]
    assert provenance["spec_digest"] == attrs["spec_digest"]


def test_export_refuses_a_format_it_cannot_tell(failing, tmp_path, capsys):
    assert main(["export", str(failing), "-o", str(tmp_path / "t.txt")]) == 2
    assert capsys.readouterr().err == (
        f"campaign: error: -o {tmp_path / 't.txt'}: cannot tell the format from the suffix; "
        "give --format csv or parquet\n"
    )
    assert not (tmp_path / "t.txt").exists()
    with pytest.raises(campaign.CampaignError) as caught:  # from Python: its out, not "path"
        campaign.export(failing, tmp_path / "t.txt")
    assert str(caught.value) == (
        f"out {tmp_path / 't.txt'}: cannot tell the format from the suffix; give fmt csv or parquet"
    )


@pytest.mark.parametrize(("name", "fmt"), [("t.csv", "parquet"), ("t.parquet", "csv")])
def test_export_refuses_a_format_its_file_name_contradicts(failing, tmp_path, capsys, name, fmt):
    """``-o t.csv --format parquet`` wrote Parquet bytes into t.csv."""
    path = tmp_path / name
    assert main(["export", str(failing), "-o", str(path), "--format", fmt]) == 2
    assert capsys.readouterr().err == (
        f"campaign: error: --format {fmt} and -o {path} (a {path.suffix} file) disagree; give "
        "a file name with the format's suffix, or leave --format out\n"
    )
    assert not path.exists()


def test_export_of_a_precision_campaign_has_each_cells_replicates_only(tmp_path):
    text = SPEC.replace(", fail_above: 1.0", "").replace(
        "replicates: 5",
        "precision: {metrics: [mean_wait], half_width: 0.2, min_replicates: 3, max_replicates: 12}",
    )
    design = Design(spec_file(tmp_path, text))
    records = run_in_process(design)
    dataset = assemble(design, records, 0.95, rounds=replay_rounds(design, records))
    given = dataset["precision_replicates"].values
    assert len(set(given.ravel())) > 1  # cells got different numbers of replicates
    frame = tidy(dataset)
    assert len(frame) == int(given.sum())
    counts = frame.groupby(["arrival_rate", "service_rate"], sort=False).size()
    assert counts.tolist() == given.ravel().tolist()
    assert (frame["status"] == "ok").all()


def test_results_follow_the_cf_conventions(failing):
    """The IOOS compliance checker's CF 1.11 suite finds no error.

    Two findings remain, both limits of the checker, not of the file: it names the
    cell_methods of the summaries ("realization: mean") as unmatched, though CF 7.3 allows a
    standard name there and the replicate coordinate has the standard name realization; and
    its monotonicity check cannot compare text coordinates (the level labels of service_rate).
    Its check of same-named dimensions across groups crashes on any file of two groups or more
    (the groups `failures` and `resources` here): it looks up a dimension "time" in each.
    """
    from compliance_checker.cf.cf_1_11 import CF1_11Check
    from compliance_checker.runner import CheckSuite

    suite = CheckSuite()
    suite.checkers = {"cf:1.11": CF1_11Check}
    opened = suite.load_dataset(str(failing))
    try:
        results, crashed = suite.run_all(opened, ["cf:1.11"], [])["cf:1.11"]
    finally:
        opened.close()
    assert set(crashed) <= {
        "check_coordinate_variables_strict_monotonicity",
        "check_invalid_same_named_dimension_across_groups",
    }
    failed = []
    for result in results:
        value = result.value
        if not (value if isinstance(value, bool) else value[0] == value[1]):
            failed.append(result)
    assert [(r.name, r.weight) for r in failed] == [("§7.3 Cell Methods", 2)]
    messages = failed[0].msgs
    assert messages and all(
        m.endswith(
            "'s cell_methods name component realization does not match a dimension, "
            "area or auxiliary coordinate"
        )
        for m in messages
    )
    with xr.open_dataset(failing) as ds:
        assert ds["replicate"].attrs["standard_name"] == "realization"
        assert ds["mean_wait_mean"].attrs["cell_methods"] == "realization: mean"
        assert ds.attrs["Conventions"] == "CF-1.11"


def test_export_refuses_a_folder_or_a_file_in_the_way(failing, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    for out, message in (
        (tmp_path, f"-o {tmp_path} is a folder; give a file such as {tmp_path / 'results.csv'}"),
        (blocker / "t.csv", f"-o {blocker / 't.csv'}: {blocker} is a file, not a folder"),
    ):
        assert main(["export", str(failing), "-o", str(out)]) == 2
        assert capsys.readouterr().err == f"campaign: error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_export_to_standard_output_writes_the_csv_there_and_its_units_on_stderr(
    failing, tmp_path, capsys, monkeypatch
):
    """``-o -`` wrote a file named "-" (and "-.units.csv"): the CSV now goes to stdout, the
    units the sidecar would carry to stderr; Parquet, binary, is refused in one line."""
    monkeypatch.chdir(tmp_path)
    assert main(["export", str(failing), "-o", "-"]) == 0
    captured = capsys.readouterr()
    dataset = campaign.open_results(failing)
    expected = tidy(dataset, campaign.open_failures(failing))
    frame = pd.read_csv(io.StringIO(captured.out), keep_default_na=False, na_values=[""])
    assert list(frame.columns) == list(expected.columns)
    assert np.array_equal(
        frame["mean_wait"].to_numpy(), expected["mean_wait"].to_numpy(), equal_nan=True
    )
    assert captured.err == (
        "campaign: units (standard output has no NAME.units.csv beside it): replicate [1], "
        "mean_wait [s], max_wait [s], utilization [1]\n"
    )
    assert main(["export", str(failing), "-o", "-", "--format", "parquet"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: -o -: parquet is binary and goes to a file; give -o FILE.parquet, "
        "or --format csv for standard output\n"
    )
    assert list(tmp_path.iterdir()) == []
