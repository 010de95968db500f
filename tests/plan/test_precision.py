"""Precision targets: replicates are added per cell, in rounds, until its interval is narrow
enough; the rounds follow from the spec and the stored results alone."""

from __future__ import annotations

import html
import os
import sys
import textwrap

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import campaign
from campaign.analysis.stats import StoppingRule, precision_rounds, stopping_rule
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.plan.plan import make_plan
from campaign.spec.load import parse_spec
from tests.conftest import ledger_keys, run_and_kill


def test_stopping_rule_cases():
    rng = np.random.default_rng(0)
    narrow = 10 + rng.normal(0, 0.01, 8)
    wide = 10 + rng.normal(0, 5.0, 8)
    few = np.array([1.0, 2.0, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan])
    values = np.stack([narrow, wide, few])
    rule = StoppingRule(0.05, True, 5, 100, 0.95)
    need, met = stopping_rule(values, np.array([8, 8, 2]), rule)
    assert met.tolist() == [True, False, False]
    assert need[0] == 8  # met: no more replicates
    assert need[2] == 4  # too few values: at most twice as many
    half = stats.t.ppf(0.975, 7) * wide.std(ddof=1) / np.sqrt(8)
    estimate = int(np.ceil(8 * (half / (0.05 * abs(wide.mean()))) ** 2))
    assert need[1] == min(max(estimate, 9), 16)  # at most doubling per round
    need, _ = stopping_rule(values, np.array([8, 8, 2]), StoppingRule(0.05, True, 5, 10, 0.95))
    assert need[1] == 10  # never beyond max_replicates


RULE = StoppingRule(half_width=0.1, relative=False, min_replicates=3, max_replicates=12)


def replay(values, finished, failed=None, rule=RULE):
    failed = np.zeros_like(finished) if failed is None else failed
    return precision_rounds([values], finished, failed, rule)


def test_rounds_are_replayed_from_the_stored_results():
    constant = np.full(12, 1.0)  # std 0: met at once
    alternating = np.tile([0.0, 10.0], 6)  # never narrow enough: 3 -> 6 -> 12, the maximum
    values = np.stack([constant, alternating, constant, constant])
    finished = np.ones((4, 12), dtype=bool)
    finished[2, 2:] = False  # its first round is not complete: still running
    failed = np.zeros((4, 12), dtype=bool)
    failed[3, 1] = True  # a failure in its first round holds its next decision
    rounds = replay(values, finished, failed)
    assert rounds.target.tolist() == [3, 12, 3, 3]
    assert rounds.met.tolist() == [True, False, False, False]
    assert rounds.at_max.tolist() == [False, True, False, False]
    assert rounds.waiting.tolist() == [False, False, False, True]
    assert rounds.running.tolist() == [False, False, True, False]
    # the alternating cell half-way through its third round: still running, target 12
    finished[1, 8:] = False
    rounds = replay(values, finished, failed)
    assert rounds.target[1] == 12 and rounds.running[1]


def test_a_decision_never_looks_beyond_the_round_it_closes():
    rng = np.random.default_rng(4)
    rule = StoppingRule(half_width=0.1, relative=False, min_replicates=3, max_replicates=40)
    values = 5 + rng.normal(0, 0.12, (6, 40))
    finished = np.ones((6, 40), dtype=bool)
    full = replay(values, finished, rule=rule)
    assert full.met.all() and len(set(full.target.tolist())) >= 3
    for cell, target in enumerate(full.target):
        # results beyond a cell's rounds (other values, or none at all) change nothing
        changed = values.copy()
        changed[cell, target:] = 1e6
        cut = finished.copy()
        cut[cell, target:] = False
        for other_values, other_finished in ((changed, finished), (values, cut)):
            again = replay(other_values, other_finished, rule=rule)
            assert again.target.tolist() == full.target.tolist()
            assert again.met.tolist() == full.met.tolist()


@pytest.mark.parametrize(
    ("precision", "message"),
    [
        (
            {"metrics": ["w"], "half_width": 0, "max_replicates": 9},
            "precision.half_width: 0 is not allowed",
        ),
        (
            {"metrics": ["w"], "half_width": float("nan"), "max_replicates": 9},
            "precision.half_width: nan is not",
        ),
        (
            {"metrics": ["w"], "half_width": float("inf"), "max_replicates": 9},
            "precision.half_width: inf is not",
        ),
        (
            {"metrics": ["w"], "half_width": -0.1, "max_replicates": 9},
            "precision.half_width: -0.1 is not allowed",
        ),
        (
            {"metrics": ["w"], "half_width": True, "max_replicates": 9},
            "precision.half_width: True is not allowed",
        ),
        ({"metrics": [], "half_width": 0.1, "max_replicates": 9}, "precision.metrics: expected"),
        ({"metrics": [""], "half_width": 0.1, "max_replicates": 9}, "precision.metrics: expected"),
        (
            {"metrics": ["w", "w"], "half_width": 0.1, "max_replicates": 9},
            "precision.metrics: metrics repeat",
        ),
        (
            {"metrics": ["w"], "half_width": 0.1, "min_replicates": 1, "max_replicates": 9},
            "precision.min_replicates: 1 is not allowed; use an integer >= 2",
        ),
        (
            {"metrics": ["w"], "half_width": 0.1, "max_replicates": 3},
            "precision.max_replicates: 3 is not allowed; use an integer >= min_replicates (5)",
        ),
        (
            {"metrics": ["w"], "half_width": 0.1, "max_replicates": 9.5},
            "precision.max_replicates: 9.5 is not allowed",
        ),
        (
            {"metrics": ["w"], "half_width": 0.1, "max_replicates": 9, "confidence": 1.5},
            "precision.confidence: 1.5 is not allowed; use a number between 0 and 1",
        ),
        (
            {"metrics": ["w"], "half_width": 0.1, "max_replicates": 9, "tol": 1},
            "precision: unknown key 'tol'",
        ),
    ],
)
def test_precision_errors(precision, message):
    data = {"name": "p", "model": "mm1", "seed": 1, "precision": precision}
    with pytest.raises(CampaignError) as info:
        parse_spec(data)
    assert message in str(info.value)
    with pytest.raises(CampaignError, match="replicates .* or precision .*, not both"):
        parse_spec({**data, "replicates": 3})


def test_precision_yaml_nan_is_refused_in_one_line_before_anything_runs(write_spec, capsys):
    path = write_spec(
        """
        name: nan
        model: mm1
        factors: {arrival_rate: [0.5]}
        precision: {metrics: [mean_wait], half_width: .nan, max_replicates: 9}
        seed: 1
        output: out
        """
    )
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"campaign: error: {path}: precision.half_width: nan is not allowed; "
        f"use a finite number > 0\n"
    )
    assert not (path.parent / "out").exists()


def test_misspelt_precision_metric_of_a_declaring_model_is_refused_by_validate(write_spec, capsys):
    text = """
        name: typo
        model: mm1
        factors: {arrival_rate: [0.5]}
        precision: {metrics: [mean_wiat], half_width: 0.1, max_replicates: 9}
        seed: 1
        output: out
        """
    path = write_spec(text)
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"campaign: error: {path}: precision.metrics: 'mean_wiat' is not a metric of model "
        f"mm1; its metrics: mean_wait, max_wait, utilization\n"
    )
    precision = {"metrics": ["max_wait"], "half_width": 0.1, "max_replicates": 9}
    data = {"name": "k", "model": "mm1", "seed": 1, "metrics": ["mean_wait"]}
    with pytest.raises(CampaignError, match="'max_wait' is not among the kept metrics: mean_wait"):
        parse_spec({**data, "precision": precision})


NUMBER_PER_TASK = "not one number per task; a target needs a metric with one number per task"


@pytest.mark.parametrize(
    "metric, why",
    [
        ("wait", f"'wait' of model jobs is a sample (a 1-D array per task), {NUMBER_PER_TASK}"),
        (
            "job_class",
            f"'job_class' of model jobs is a breakdown (numbers per job_class), {NUMBER_PER_TASK}",
        ),
        (  # derived from a sample: said in words that say so
            "wait_p95",
            "'wait_p95' is the size or a percentile of the sample 'wait' of model jobs, which "
            "results derive from each task's sample; a target needs a metric the model returns, "
            "one number per task",
        ),
    ],
)
def test_a_precision_metric_that_is_a_sample_breakdown_or_percentile_is_refused_by_validate(
    write_spec, capsys, metric, why
):
    path = write_spec(
        f"""
        name: sample-target
        model: jobs
        params: {{workload: synthetic, jobs: 50, processors: 16}}
        precision: {{metrics: [{metric}], half_width: 0.1, max_replicates: 9}}
        seed: 1
        output: out
        """
    )
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == f"campaign: error: {path}: precision.metrics: {why}\n"
    assert main(["run", str(path)]) == 2
    assert not (path.parent / "out").exists()


def test_an_absolute_target_over_metrics_of_different_units_is_refused_by_validate(
    write_spec, capsys
):
    """``half_width: 10, relative: false`` over mean_wait (s) and utilization (1) asked for 10
    seconds of one and 10 of a fraction that never exceeds 1: the second was always met."""
    text = """
        name: units
        model: mm1
        factors: {arrival_rate: [0.5]}
        precision: {metrics: [mean_wait, max_wait, utilization], half_width: 10,
                    relative: false, max_replicates: 9}
        seed: 1
        output: out
        """
    path = write_spec(text)
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"campaign: error: {path}: precision.half_width: 10 is in each metric's units "
        "(relative: false), but their units differ: mean_wait s, max_wait s, utilization 1; "
        "list metrics of one unit in precision.metrics, or use relative: true (a share of "
        "each mean)\n"
    )
    assert main(["run", str(path)]) == 2
    assert not (path.parent / "out").exists()
    same = write_spec(text.replace(", utilization]", "]"))
    assert main(["validate", str(same)]) == 0


def test_campaign_runs_until_every_interval_meets_the_target(write_spec, scheduler_address, capsys):
    path = write_spec(
        """
        name: precise
        model: mm1
        params: {service_rate: 1.0, customers: 1000}
        factors: {arrival_rate: [0.3, 0.8]}
        precision: {metrics: [mean_wait], half_width: 0.05, min_replicates: 5,
                    max_replicates: 300}
        seed: 8
        output: out
        """
    )
    code = main(["run", str(path), "--scheduler", scheduler_address, "--quiet"])
    out = capsys.readouterr().out
    ds = campaign.open_results(path.parent / "out")
    relative = (ds["mean_wait_ci_high"] - ds["mean_wait_mean"]) / ds["mean_wait_mean"]
    assert (relative <= 0.05).all()
    assert ds["precision_met"].values.tolist() == [1, 1]
    assert ds["precision_state"].values.tolist() == [1, 1]
    n = ds["mean_wait_n"].values
    assert ds["precision_replicates"].values.tolist() == n.tolist()
    assert 5 <= n[0] < n[1] < 300
    # every cell ran replicates 0..n-1 and nothing beyond; the file has no unused replicates
    for cell, count in enumerate(n):
        assert ds["status"].values[cell, :count].tolist() == [1] * count
        assert (ds["status"].values[cell, count:] == 0).all()
    assert ds.sizes["replicate"] == n.max()
    total = int(n.sum())
    assert (ds.attrs["tasks"], ds.attrs["tasks_missing"]) == (total, 0)
    summary = f"precision: 2 cells met the target with {n[0]} to {n[1]} replicates"
    assert code == 0
    assert f"{total} tasks ok, 0 failed, 0 missing\n{summary}\n" in out
    assert main(["status", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"precise: {total} tasks: {total} done, 0 failed, 0 missing" in out
    assert f"\n{summary}\n" in out
    assert main(["plan", str(path)]) == 0
    assert f"plan: {total} done, 0 failed (will be retried), 0 missing; 0 tasks would run\n" in (
        capsys.readouterr().out
    )
    # a rerun finds every target met and runs nothing
    again = campaign.run(path, scheduler=scheduler_address, progress=False)
    assert make_plan(path).done == total
    assert np.array_equal(again["mean_wait"].values, ds["mean_wait"].values, equal_nan=True)


def test_cells_stopped_at_max_replicates_end_a_successful_campaign(
    write_spec, scheduler_address, capsys
):
    path = write_spec(
        """
        name: capped
        model: mm1
        params: {service_rate: 1.0, customers: 2000}
        factors: {arrival_rate: [0.1, 0.95]}
        precision: {metrics: [mean_wait], half_width: 0.2, min_replicates: 4,
                    max_replicates: 30}
        seed: 2
        output: out
        """
    )
    code = main(["run", str(path), "--scheduler", scheduler_address, "--quiet"])
    out = capsys.readouterr().out
    ds = campaign.open_results(path.parent / "out")
    assert ds["precision_state"].values.tolist() == [1, 2]  # met, stopped at the maximum
    met_count, most = ds["precision_replicates"].values.tolist()
    assert most == 30 and met_count < 30
    assert ds["mean_wait_n"].values.tolist() == [met_count, 30]
    assert code == 0
    total = met_count + 30
    assert f"{total} tasks ok, 0 failed, 0 missing\n" in out
    assert (
        f"precision: 1 cell met the target with {met_count} replicates; "
        f"1 cell stopped at max_replicates (30) without meeting it\n"
    ) in out
    assert main(["status", str(path)]) == 0
    assert f"capped: {total} tasks: {total} done, 0 failed, 0 missing" in capsys.readouterr().out
    # a table of the cell that never met the target says so under it, in every format
    note = (
        "1 cell in these rows stopped at max_replicates without meeting the precision target "
        "(half-width at most 0.2 x |mean| at 95% confidence, for mean_wait): its interval is "
        "wider than the target (precision_state in results.nc)"
    )
    table = campaign.query(ds, ["mean_wait", "max_wait"])
    assert table.attrs["precision_unmet"] == 1
    assert main(["query", str(path.parent / "out"), "--metric", "max_wait"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[lines.index(note) - 1].startswith("mean ± half-width of the 95% confidence")
    assert main(["query", str(path.parent / "out"), "--format", "markdown"]) == 0
    assert note in capsys.readouterr().out
    argv = ["query", str(path.parent / "out"), "--where", "arrival_rate=0.1"]
    assert main(argv) == 0
    assert "max_replicates" not in capsys.readouterr().out
    assert main(["report", str(path.parent / "out")]) == 0
    page = (path.parent / "out" / "report.html").read_text()
    assert html.escape(note) in page


def test_a_target_on_other_intervals_than_the_summarys_is_said_under_it(
    write_spec, scheduler_address, capsys
):
    path = write_spec(
        """
        name: ninety
        model: mm1
        params: {service_rate: 1.0, customers: 500}
        factors: {arrival_rate: [0.3, 0.6]}
        precision: {metrics: [mean_wait], half_width: 0.3, confidence: 0.9, min_replicates: 4,
                    max_replicates: 40}
        seed: 5
        output: out
        """
    )
    note = (
        "  (the target is on 90% intervals, the summary shows 95% ones: `campaign query "
        f"{path.parent / 'out'} --confidence 0.9` shows the target's)"
    )
    assert main(["run", str(path), "--scheduler", scheduler_address, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "precision: 2 cells met the target with " in out
    assert note not in out  # by default the results are at the target's level
    argv = ["run", str(path), "--scheduler", scheduler_address, "--quiet", "--confidence", "0.95"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[lines.index(note) - 1].startswith("precision: 2 cells met the target with ")


# -- interrupted campaigns end exactly like undisturbed ones ----------------------------------

KILLED = """
name: precise-kill
model: busy
factors:
  duration_ms: [20, 21, 22]
precision: {{metrics: [value], half_width: 0.15, min_replicates: 5, max_replicates: 400}}
seed: 11
output: {output}
"""


def assert_same_results(path, clean):
    resumed = xr.load_dataset(path)
    assert sorted(resumed.data_vars) == sorted(clean.data_vars)
    assert resumed.sizes == clean.sizes
    for name, variable in clean.data_vars.items():
        assert np.array_equal(
            resumed[name].values, variable.values, equal_nan=variable.dtype.kind == "f"
        ), name


def test_precision_campaign_killed_twice_ends_as_an_undisturbed_run(
    tmp_path, scheduler_address, capsys
):
    clean_spec = tmp_path / "clean.yaml"
    clean_spec.write_text(KILLED.format(output="clean"))
    clean = campaign.run(clean_spec, scheduler=scheduler_address, progress=False)
    total = int(clean["precision_replicates"].sum())
    assert clean.sizes["replicate"] > 40 and total > 120  # several rounds per cell

    spec = tmp_path / "spec.yaml"
    spec.write_text(KILLED.format(output="killed"))
    output = tmp_path / "killed"
    command = [sys.executable, "-m", "campaign", "run", str(spec), "--workers", "2"]
    first = len(run_and_kill(command, output, after=25))
    second = len(run_and_kill(command, output, after=first + 40))
    assert second < total, "the kill came too late to test a resume"
    # the rerun, in this process on the shared cluster: a process of its own is not the point
    assert main(["run", str(spec), "--scheduler", scheduler_address, "--quiet"]) == 0
    assert f"{total} tasks ok, 0 failed, 0 missing" in capsys.readouterr().out
    assert len(ledger_keys(output)) == total  # nothing beyond the undisturbed run's tasks
    assert_same_results(output / "results.nc", clean)


FLAKY_MODEL = '''
"""A test model: a normal draw per seed; fails for some seeds while FLAKY is set."""

import os

import numpy as np


def run(params, seed):
    rng = np.random.default_rng(seed)
    value = float(params["mean"] + params["spread"] * rng.standard_normal())
    if os.environ.get("FLAKY") and rng.random() < 0.15:
        raise RuntimeError("transient failure")
    return {"value": value}
'''

FLAKY = """
name: flaky
model: flaky_model:run
params: {{mean: 1.0}}
factors:
  spread: [0.02, 0.1, 0.2]
precision: {{metrics: [{metric}], half_width: 0.05, min_replicates: 5, max_replicates: 200}}
seed: 21
output: {output}
"""


@pytest.fixture
def run_with_model(tmp_path, monkeypatch, capsys):
    """`campaign run SPEC --workers 2 --quiet` in this process (a process's start is not the
    point), each with its embedded cluster, whose worker processes import the test model and
    see FLAKY as the test sets it: the code and what it printed."""
    (tmp_path / "flaky_model.py").write_text(FLAKY_MODEL)  # declares no metrics
    monkeypatch.syspath_prepend(str(tmp_path))
    paths = [str(tmp_path), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, paths)))
    monkeypatch.delitem(sys.modules, "flaky_model", raising=False)
    monkeypatch.delenv("FLAKY", raising=False)

    def run(spec):
        capsys.readouterr()
        code = main(["run", str(spec), "--workers", "2", "--quiet"])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_failed_tasks_retried_by_a_rerun_end_as_an_undisturbed_run(
    tmp_path, monkeypatch, run_with_model
):
    clean_spec = tmp_path / "clean.yaml"
    clean_spec.write_text(FLAKY.format(metric="value", output="clean"))
    code, _, err = run_with_model(clean_spec)
    assert code == 0, err

    spec = tmp_path / "spec.yaml"
    spec.write_text(FLAKY.format(metric="value", output="flaky"))
    monkeypatch.setenv("FLAKY", "1")
    code, out, err = run_with_model(spec)
    assert code == 1, err
    assert "waiting on failed tasks (a rerun retries them)" in out
    ds = xr.load_dataset(tmp_path / "flaky" / "results.nc")
    assert (ds["status"] == 2).any()
    assert (ds["precision_state"] == 3).any()  # a failure holds its cell's next round
    monkeypatch.delenv("FLAKY")
    code, _, err = run_with_model(spec)
    assert code == 0, err
    assert_same_results(
        tmp_path / "flaky" / "results.nc", xr.load_dataset(tmp_path / "clean" / "results.nc")
    )


def test_misspelt_precision_metric_stops_after_the_first_task(tmp_path, run_with_model):
    spec = tmp_path / "typo.yaml"
    spec.write_text(FLAKY.format(metric="valeu", output="typo"))
    code, _, err = run_with_model(spec)
    assert code == 2
    assert err == (
        f"campaign: error: {spec}: precision.metrics: 'valeu' is not a metric model "
        f"flaky_model:run returns; it returned: value\n"
    )
    assert len(ledger_keys(tmp_path / "typo")) == 1


def test_precision_confidence_is_part_of_the_spec(write_spec, scheduler_address):
    text = textwrap.dedent(
        """
        name: conf
        model: mm1
        params: {service_rate: 1.0, customers: 500}
        factors: {arrival_rate: [0.5]}
        precision: {metrics: [mean_wait], half_width: 0.1, max_replicates: 100, confidence: CONF}
        seed: 3
        output: OUT
        """
    )
    counts = []
    for confidence in (0.8, 0.99):
        path = write_spec(
            text.replace("CONF", str(confidence)).replace("OUT", f"out{confidence}"),
            f"{confidence}.yaml",
        )
        ds = campaign.run(path, scheduler=scheduler_address, progress=False, confidence=0.95)
        assert ds["precision_met"].attrs["confidence"] == confidence
        counts.append(int(ds["precision_replicates"].item()))
    assert counts[0] < counts[1]


def test_replicates_beyond_a_loosened_target_are_not_among_the_costs(
    write_spec, scheduler_address, capsys
):
    spec = """
        name: loosened
        model: mm1
        params: {service_rate: 1.0, customers: 300}
        factors: {arrival_rate: [0.3, 0.8]}
        precision: {metrics: [mean_wait], half_width: %s, min_replicates: 3,
                    max_replicates: 40}
        seed: 8
        output: %s
        """
    path = write_spec(spec % (0.05, "out"))
    campaign.run(path, scheduler=scheduler_address, progress=False)
    path = write_spec(spec % (0.5, "out"))  # loosened: fewer replicates make the target
    results = campaign.run(path, scheduler=scheduler_address, progress=False)
    fresh = campaign.run(
        write_spec(spec % (0.5, "fresh"), "fresh.yaml"), scheduler=scheduler_address, progress=False
    )
    n = fresh["mean_wait_n"].values
    assert results["mean_wait_n"].values.tolist() == n.tolist()
    assert len(ledger_keys(path.parent / "out")) > n.sum()  # more stored than the rounds hold
    for folder in ("out", "fresh"):
        costs = xr.load_dataset(path.parent / folder / "results.nc", group="resources")
        assert costs.sizes["task"] == n.sum()
        counted = np.bincount(costs["task_cell"].values, minlength=2)
        assert counted.tolist() == n.tolist()
        assert (costs["task_replicate"].values < n[costs["task_cell"].values]).all()
    capsys.readouterr()
    assert main(["status", str(path)]) == 0
    status = capsys.readouterr().out
    assert f"loosened: {n.sum()} tasks: {n.sum()} done, 0 failed, 0 missing" in status
    assert f"  cost: {n.sum()} finished tasks took " in status


def test_percentiles_of_a_campaign_that_keeps_no_sample_are_refused(write_spec, capsys):
    """``percentiles:`` of mm1 (no sample) or of jobs keeping only mean_wait were ignored."""
    path = write_spec(
        """
        name: no-sample
        model: mm1
        factors: {arrival_rate: [0.5]}
        replicates: 2
        percentiles: [50, 90]
        seed: 1
        output: out
        """
    )
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"campaign: error: {path}: percentiles: model mm1 returns no sample (a 1-D array per "
        "task), so no percentiles are kept; leave percentiles out\n"
    )
    jobs = """
        name: no-kept-sample
        model: jobs
        params: {workload: synthetic, jobs: 50, processors: 16}
        replicates: 2
        metrics: [mean_wait]
        percentiles: [50, 90]
        seed: 1
        output: out
        """
    path = write_spec(jobs)
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err.startswith(
        f"campaign: error: {path}: percentiles: none of the kept metrics (mean_wait) is a "
        "sample, so no percentiles are kept; keep a sample of model jobs in metrics: ("
    )
    assert (
        main(["validate", str(write_spec(jobs.replace("[mean_wait]", "[mean_wait, wait]")))]) == 0
    )
