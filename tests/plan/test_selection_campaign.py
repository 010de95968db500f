"""Selection campaigns on a real Dask cluster: the stages a run decides are those its stored
results replay to (`campaign select`), an interrupted run ends as an undisturbed one, and
common random numbers (paired seeds) save tasks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.analysis.selection import STATES
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.render.report import write_report
from tests.conftest import finished_campaign, ledger_keys, run_and_kill

SPEC = """
name: select-check
model: normal
params: {{means: [0.0, 0.4, 0.8, 2.0], sds: [1.0, 1.0, 2.0, 1.5], correlation: 0.5}}
factors:
  system: [0, 1, 2, 3]
  tag: [a, b, c]
paired: [system]
select: {{metric: value, goal: max, among: system, indifference: 0.5, first: 6, batch: 4}}
seed: 7
output: {output}
"""

selected = finished_campaign("select", SPEC.format(output="out"))


def test_the_stages_of_a_run_are_those_its_results_replay(selected):
    ds = campaign.open_results(selected)
    report = campaign.select(ds)
    given = ds["selection_replicates"].transpose("tag", "system").values.ravel()
    assert report.systems["replicates"].tolist() == given.tolist()
    state = ds["selection_state"].transpose("tag", "system").values.ravel()
    names = {code: name.replace("_", " ") for name, code in STATES.items()}
    assert report.systems["state"].tolist() == [names[code] for code in state]
    # the best system (mean 2.0, the others 1.2 or more below) in every group, all decided
    assert report.groups["selected"].tolist() == ["3", "3", "3"]
    assert report.groups["ending"].tolist() == ["one left"] * 3
    # every system ran replicates 0..n-1 of its stages and nothing beyond
    for tag in ds["tag"].values:
        for system in ds["system"].values:
            status = ds["status"].sel(tag=tag, system=system).values
            count = int(ds["selection_replicates"].sel(tag=tag, system=system))
            assert status[:count].tolist() == [1] * count and not status[count:].any()
            assert int(ds["value_n"].sel(tag=tag, system=system)) == count
    total = int(given.sum())
    assert len(ledger_keys(selected)) == total == report.tasks
    assert (ds.attrs["tasks"], ds.attrs["tasks_ok"]) == (total, total)
    # the eliminated ones stopped at the stage that eliminated them: first + stage x batch
    eliminated = report.systems[report.systems["state"] == "eliminated"]
    assert (eliminated["replicates"] == 6 + 4 * eliminated["stage"]).all()
    assert report.rinott > report.tasks


def test_campaign_select_prints_each_group(selected, capsys):
    assert main(["select", str(selected)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "select: the level of system with the largest mean of value, at each tag"
    assert lines[1] == (
        "guarantee: the best is selected with probability >= 0.95 whenever its mean is at "
        "least 0.5 better than every other's, for normal outputs (KN, Kim & Nelson 2001; "
        "common random numbers: paired seeds)"
    )
    report = campaign.select(selected)
    for row in report.groups.to_dict("records"):
        assert f"{row['tag']}    3         one left" in out
    assert f"tasks: {report.tasks:,} in all; Rinott's count {report.rinott:,}" in out
    assert main(["select", str(selected), "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == (
        "tag,system,state,stage,replicates,value,group_selected,group_ending,group_stages,"
        "group_delta,group_tasks,group_rinott,group_saved,group_apcs,pcs,procedure"
    )
    assert len(rows) == 1 + 12


def test_a_csv_or_json_of_stale_selection_results_says_so_on_stderr(selected, tmp_path, capsys):
    """results.nc of a spec edited since: the CSV or JSON holds the data alone, and stderr says
    its numbers are the earlier spec's, as under the text table."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(output="out").replace("first: 6", "first: 4"))
    results = xr.load_dataset(selected / "results.nc")
    results.attrs["spec_file"] = str(spec)
    results.to_netcdf(tmp_path / "results.nc")
    note = f"results.nc was written from {spec} as it was before an edit"
    for fmt in ("csv", "json"):
        assert main(["select", str(tmp_path), "--format", fmt]) == 0
        out, err = capsys.readouterr()
        assert "results.nc" not in out and err.startswith(f"campaign: {note}"), err
        assert len(err.splitlines()) == 1
    assert main(["select", str(tmp_path)]) == 0
    assert note in capsys.readouterr().out


CAPPED = """
name: capped
model: normal
params: {means: [0.0, 0.05], sds: [10.0, 10.0]}
factors:
  system: [0, 1]
  tag: [a, b]
paired: [system]
select: {metric: value, goal: max, among: system, indifference: 0.05, first: 4, batch: 2,
         max_replicates: 8}
seed: 3
output: out
"""


def test_groups_ended_at_max_replicates_are_named_in_the_guarantee_and_save_nothing(
    run_campaign, capsys
):
    """Noise far above the zone: no group decides before max_replicates, so the guarantee
    line says it does not hold there and no tasks are counted saved against Rinott's."""
    output = run_campaign("capped", CAPPED)
    report = campaign.select(output)
    assert report.groups["ending"].tolist() == ["max_replicates"] * 2
    assert report.groups["saved"].isna().all()
    assert report.guarantee[1].endswith(
        "(KN, Kim & Nelson 2001; common random numbers: paired seeds); it does not hold for "
        "2 of the 2 groups ended at max_replicates before deciding"
    )
    assert main(["select", str(output)]) == 0
    out = capsys.readouterr().out
    assert "it does not hold for 2 of the 2 groups ended at max_replicates" in out
    assert f"tasks: {report.tasks:,} in all; Rinott's count {report.rinott:,}\n" in out
    for fmt in ("csv", "json"):  # the data alone on stdout, where it does not hold on stderr
        assert main(["select", str(output), "--format", fmt]) == 0
        assert capsys.readouterr().err == (
            "campaign: the guarantee does not hold for 2 of the 2 groups ended at "
            "max_replicates before deciding\n"
        )


def test_the_report_has_a_selection_section(selected, tmp_path):
    ds = campaign.open_results(selected)
    page = write_report(ds, tmp_path).read_text()
    section = page[page.index('id="selection"') :]
    assert "Selection of the best system" in section
    assert "guarantee: the best is selected with probability &gt;= 0.95 whenever" in section
    assert section.count("<td>selected</td>") + section.count('">selected</td>') == 3


def test_select_refuses_results_without_a_selection(paper_results, capsys):
    assert main(["select", str(paper_results)]) == 2
    err = capsys.readouterr().err
    assert err == (  # the positional argument results, not an option --results
        "campaign: error: results holds no selection: its spec has no select: block (campaign "
        "select reads the stages of a selection campaign)\n"
    )
    with pytest.raises(CampaignError, match="holds no selection"):
        campaign.select(paper_results)


def assert_same_results(path, clean):
    resumed = xr.load_dataset(path)
    assert sorted(resumed.data_vars) == sorted(clean.data_vars)
    assert resumed.sizes == clean.sizes
    for name, variable in clean.data_vars.items():
        assert np.array_equal(
            resumed[name].values, variable.values, equal_nan=variable.dtype.kind == "f"
        ), name
    assert resumed.attrs["selection"] == clean.attrs["selection"]


def test_an_interrupted_selection_ends_as_an_undisturbed_run(selected, tmp_path, scheduler_address):
    clean = xr.load_dataset(selected / "results.nc")  # the same spec, run undisturbed
    total = int(clean["selection_replicates"].sum())
    assert total > 150 and clean["selection_state"].values.max() == STATES["eliminated"]

    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(output="killed"))
    output = tmp_path / "killed"
    command = [sys.executable, "-m", "campaign", "run", str(spec)]
    # SIGKILL the whole embedded cluster in the second stage or later, then finish the run
    stored = len(run_and_kill([*command, "--workers", "2"], output, after=60))
    assert stored < total, "the kill came too late to test a resume"
    rerun = subprocess.run(
        [*command, "--scheduler", scheduler_address, "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert f"{total} tasks ok, 0 failed, 0 missing" in rerun.stdout
    assert "selection: systems 3 selected, 9 eliminated" in rerun.stdout
    assert len(ledger_keys(output)) == total  # nothing beyond the undisturbed run's tasks
    assert_same_results(output / "results.nc", clean)


CRN = """
name: crn
model: normal
params: {{means: [0.0, 0.0, 1.0], sds: [1.0, 1.0, 1.0], correlation: 0.9}}
factors:
  system: [0, 1, 2]
  tag: [0, 1, 2, 3, 4, 5]
paired: [{paired}]
select: {{metric: value, goal: max, among: system, indifference: 0.5, first: 6, batch: 2}}
seed: 5
output: out-{name}
"""


def test_paired_seeds_save_kn_tasks(tmp_path, scheduler_address):
    """Systems correlated by 0.9 under one seed: with the systems paired, KN's variances of
    the differences are a tenth of the independent ones', and its stages end sooner; the
    best (1.0 above two at 0.0) is selected either way."""
    tasks = {}
    for name, paired in (("paired", "system"), ("independent", "")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(CRN.format(name=name, paired=paired))
        ds = campaign.run(path, scheduler=scheduler_address, progress=False)
        report = campaign.select(ds)
        assert report.groups["selected"].tolist() == ["2"] * 6, name
        tasks[name] = report.tasks
    assert tasks["paired"] < 0.5 * tasks["independent"], tasks


def test_the_share_saved_counts_only_the_groups_that_decided():
    import pandas as pd

    from campaign.analysis.selection_report import SelectionReport
    from campaign.render.selection import saved_words

    def words(endings):
        groups = pd.DataFrame(
            {"ending": endings, "tasks": [100, 40, 60][: len(endings)], "rinott": 1000}
        )
        return saved_words(SelectionReport(None, groups, pd.DataFrame(), [], []))

    assert words(["one left", "one left", "one left"]) == " (93.3% saved)"  # 1 - 200 / 3000
    assert words(["max_replicates", "one left", "one left"]) == (
        " (95.0% saved in the 2 groups that decided)"  # 1 - 100 / 2000
    )
    assert words(["max_replicates", "max_replicates"]) == ""
    # a group still running, or waiting on a failed task, has saved nothing yet
    assert words(["one left", "waiting", "running"]) == " (90.0% saved in the 1 group that decided)"
    assert words(["waiting", "running"]) == ""


def test_a_group_that_has_not_decided_shows_no_share_saved():
    """A group waiting on a failed task in its fourth stage (50 tasks so far, Rinott's count
    121) has saved nothing yet: its saved (%) is blank, not 58.7."""
    from campaign.analysis.selection import GroupSelection
    from campaign.analysis.selection_report import group_row

    group = GroupSelection(
        replicates=np.array([20, 10, 20]),
        state=np.array([STATES["waiting"], STATES["eliminated"], STATES["waiting"]]),
        stage=np.array([-1, 1, -1]),
        means=np.full(3, np.nan),
        stages=3,
        delta=0.5,
        rinott=121,
    )
    row = group_row(group, ["0", "1", "2"])
    assert (row["ending"], row["tasks"], row["rinott"]) == ("waiting", 50, 121)
    assert np.isnan(row["saved"])
    group.state[:] = [STATES["running"], STATES["eliminated"], STATES["running"]]
    assert np.isnan(group_row(group, ["0", "1", "2"])["saved"])
    group.state[:] = [STATES["eliminated"], STATES["eliminated"], STATES["selected"]]
    group.ending, group.selected = "one left", 2
    assert group_row(group, ["0", "1", "2"])["saved"] == pytest.approx(1 - 50 / 121)
