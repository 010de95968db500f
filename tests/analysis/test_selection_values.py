"""A selection over a metric with infinite values: a system whose wait never ends (+inf) has
no mean or variance a procedure can use, so its group waits, as on an undefined (NaN) value,
and says so; it is never selected for an infinite mean, nor is Rinott's count made of it: a
group not past its first stage has none yet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import campaign
from campaign.analysis.selection import STATES, SelectionRule, select_group
from campaign.cli.main import main
from tests.analysis.small_campaigns import small_campaign

SPEC = """
name: starving
model: small_models:starving
params: {means: [0.0, 0.0, 1.0], starving: 1}
factors: {system: [0, 1, 2]}
select: {metric: value, goal: max, among: system, indifference: 0.5, first: 4, batch: 2,
         max_replicates: 10}
seed: 5
output: out
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory, scheduler_address) -> Path:
    return small_campaign(tmp_path_factory, scheduler_address, "starving", SPEC)


def test_an_infinite_value_holds_its_group_as_an_undefined_one_does(results, capsys):
    ds = campaign.open_results(results)
    assert ds["selection_state"].values.tolist() == [STATES["waiting"]] * 3
    assert ds["selection_replicates"].values.tolist() == [4, 4, 4]  # the first stage only
    report = campaign.select(ds)
    group = report.groups.iloc[0]
    assert (group["selected"], group["ending"], group["stages"], group["tasks"]) == (
        "",
        "waiting",
        0,
        12,
    )
    assert report.systems["state"].tolist() == ["waiting"] * 3
    assert main(["select", str(results)]) == 0
    out = capsys.readouterr().out
    assert "-9,223" not in out and "\n-         waiting       0    nan     12" in out


@pytest.mark.parametrize("goal, value", [("max", np.inf), ("min", -np.inf), ("max", -np.inf)])
def test_a_stage_with_an_infinite_value_decides_nothing(goal, value):
    values = np.random.default_rng(3).normal(0, 1, (3, 20))
    values[1, 5] = value  # in the second stage (replicates 4 and 5)
    finished = np.ones(values.shape, dtype=bool)
    rule = SelectionRule("kn", goal, indifference=0.01, first=4, batch=2, most=20)
    group = select_group(values, finished, ~finished, rule)
    assert group.stages == 1 and group.selected == -1 and not group.ending
    assert group.state.tolist() == [STATES["waiting"]] * 3


def test_a_group_not_past_its_first_stage_has_no_rinott_count(results, capsys):
    """Rinott's count comes from the first stage's deviations: a group waiting on it has none
    (blank, not 0), and the total counts none."""
    report = campaign.select(results)
    assert report.groups["rinott"].isna().all() and report.rinott == 0
    assert main(["select", str(results)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[5].split() == ["-", "waiting", "0", "nan", "12"]
    assert lines[6] == "tasks: 12 in all"
    assert main(["select", str(results), "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[1].endswith(",,waiting,0,,12,,,,0.95,kn")  # group_rinott and group_saved empty
    assert rows[0].endswith(",pcs,procedure")  # the guarantee, in every row


FAILING = """
name: failing
model: mm1
params: {customers: 300, fail_above: 4.0}
factors:
  arrival_rate: [0.5, 0.6, 0.7]
  service_rate: [1.0, 2.0]
select: {metric: mean_wait, goal: min, among: arrival_rate, indifference: 0.05, first: 5,
         batch: 5}
seed: 3
output: out
"""


def test_a_systems_mean_over_fewer_values_than_its_replicates_says_so(
    tmp_path, capsys, scheduler_address
):
    """Failed tasks hold a group; `select` showed `replicates 5` beside a mean over the 3
    values that finished (query's n 3), with nothing to say that the mean left 2 out."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(FAILING)
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    report = campaign.select(results)
    table = campaign.query(results, "mean_wait")
    systems = report.systems.astype({"arrival_rate": float})  # the systems' labels
    merged = systems.merge(table, on=["arrival_rate", "service_rate"])
    short = merged[merged["mean_wait_n"] < merged["replicates"]]
    assert len(short) > 0  # some systems had failed tasks
    np.testing.assert_allclose(merged["mean_wait"], merged["mean_wait_mean"])
    left_out = int((short["replicates"] - short["mean_wait_n"]).sum())
    note = (
        f"note: {len(short)} system(s) have a mean over fewer values than their replicates "
        f"({left_out} failed or missing tasks left out): `campaign query` counts each one's n"
    )
    assert note in report.notes
    assert main(["select", str(tmp_path / "out")]) == 0
    assert note in capsys.readouterr().out.splitlines()
