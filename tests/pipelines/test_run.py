"""End to end on a real Dask cluster: results, reuse, refusal, failures, determinism."""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.models.check import mm1, mm1_mean_wait
from campaign.plan.plan import make_plan

MM1 = """
name: mm1-test
model: mm1
params: {{service_rate: 1.0, customers: {customers}}}
factors:
  arrival_rate: {rates}
replicates: {replicates}
seed: 99
output: out
"""


def spec_text(rates="[0.5, 0.8]", replicates=3, customers=2000):
    return MM1.format(rates=rates, replicates=replicates, customers=customers)


def test_results_hold_raw_values_summary_and_provenance(write_spec, scheduler_address):
    path = write_spec(spec_text())
    ds = campaign.run(path, scheduler=scheduler_address, progress=False)
    assert ds["mean_wait"].dims == ("arrival_rate", "replicate")
    assert ds["status"].values.tolist() == [[1, 1, 1], [1, 1, 1]]
    # every raw value is exactly what the model returns for that task's seed
    for rate in (0.5, 0.8):
        for r in range(3):
            seed = int(ds["seed"].sel(arrival_rate=rate, replicate=r))
            direct = mm1({"service_rate": 1.0, "customers": 2000, "arrival_rate": rate}, seed)
            assert float(ds["mean_wait"].sel(arrival_rate=rate, replicate=r)) == direct["mean_wait"]
    values = ds["mean_wait"].values
    assert np.array_equal(ds["mean_wait_mean"].values, values.mean(axis=1))
    assert np.allclose(ds["mean_wait_std"].values, values.std(axis=1, ddof=1), rtol=1e-14)
    assert ds["mean_wait_n"].values.tolist() == [3, 3]
    assert ds["mean_wait"].attrs["units"] == "s"
    assert ds.attrs["spec"] == path.read_text()
    assert ds.attrs["base_seed"] == "99" and ds.attrs["model"] == "mm1"
    assert "distributed" in json.loads(ds.attrs["versions"])
    # the file reopens with plain xarray, with the same numbers
    reopened = xr.open_dataset(path.parent / "out" / "results.nc")
    xr.testing.assert_identical(reopened.load(), ds)
    reopened.close()


def test_rerun_with_more_levels_and_replicates_runs_only_the_new_tasks(
    write_spec, scheduler_address
):
    path = write_spec(spec_text())
    first = campaign.run(path, scheduler=scheduler_address, progress=False)
    path.write_text(spec_text(rates="[0.5, 0.6, 0.8]", replicates=4))
    plan = make_plan(path)
    assert (plan.done, len(plan.missing)) == (6, 6)
    second = campaign.run(path, scheduler=scheduler_address, progress=False)
    records = plan.ledger.load()
    runs = {}
    for record in records.values():
        runs.setdefault(record["run"], set()).add(record["key"])
    assert sorted(len(keys) for keys in runs.values()) == [6, 6]
    assert {t.key for t in plan.design.tasks(plan.missing)} in runs.values()
    old = first["mean_wait"]
    new = second["mean_wait"].sel(arrival_rate=[0.5, 0.8], replicate=[0, 1, 2])
    assert np.array_equal(old.values, new.values)


def test_edit_that_changes_meaning_is_refused_and_new_sets_results_aside(
    write_spec, scheduler_address, capsys
):
    path = write_spec(spec_text())
    campaign.run(path, scheduler=scheduler_address, progress=False)
    path.write_text(spec_text(customers=3000))
    code = main(["run", str(path), "--scheduler", scheduler_address, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "param 'customers' was 2000, now 3000" in err and "--new" in err
    assert err.count("\n") == 1
    code = main(["run", str(path), "--scheduler", scheduler_address, "--quiet", "--new"])
    assert code == 0
    assert list((path.parent / "out").glob("ledger.old-*/*.jsonl"))


def test_model_errors_are_recorded_at_once_and_do_not_stop_the_campaign(
    write_spec, scheduler_address, capsys
):
    path = write_spec(
        """
        name: failing
        model: mm1
        params: {service_rate: 1.0, customers: 200, fail_above: 1.0}
        factors: {arrival_rate: [0.5]}
        replicates: 12
        seed: 3
        output: out
        """
    )
    code = main(["run", str(path), "--scheduler", scheduler_address, "--quiet", "--retries", "2"])
    out = capsys.readouterr().out
    ds = campaign.open_results(path.parent / "out")
    status = ds["status"].values[0]
    # a task fails exactly when the model, called directly with its seed, raises
    params = {"service_rate": 1.0, "customers": 200, "fail_above": 1.0, "arrival_rate": 0.5}
    expected = []
    for seed in ds["seed"].values[0]:
        try:
            mm1(params, int(seed))
            expected.append(1)
        except RuntimeError:
            expected.append(2)
    assert status.tolist() == expected
    failed = expected.count(2)
    assert 0 < failed < 12
    assert code == 1 and f"{failed} failed" in out
    failures = campaign.open_failures(path.parent / "out")
    assert failures.sizes["failure"] == failed
    assert failures["failure_replicate"].values.tolist() == np.flatnonzero(status == 2).tolist()
    assert all("exceeds fail_above=1.0" in e for e in failures["failure_error"].values)
    assert len(ds.to_dataframe()) == 12  # one row per task, failed ones included
    assert np.isnan(ds["mean_wait"].values[0][status == 2]).all()
    records = make_plan(path).ledger.load().values()
    # a model's exception comes back the same with the same seed: --retries does not apply
    assert {r["attempts"] for r in records if r["status"] == "failed"} == {1}
    assert {r["attempts"] for r in records if r["status"] == "ok"} == {1}
    assert main(["status", str(path)]) == 1
    listing = capsys.readouterr().out
    assert listing.count("failed: arrival_rate=0.5 replicate") == failed


def test_same_spec_gives_bit_identical_results_with_one_or_two_workers(write_spec, tmp_path):
    one = campaign.run(write_spec(spec_text(), "one.yaml"), workers=1, progress=False)
    text = spec_text().replace("output: out", "output: out2")
    two = campaign.run(write_spec(text, "two.yaml"), workers=2, progress=False)
    for name in ("mean_wait", "max_wait", "utilization", "seed", "status"):
        assert np.array_equal(one[name].values, two[name].values)
        assert one[name].values.tobytes() == two[name].values.tobytes()


def test_intervals_cover_the_true_mm1_mean_wait_at_the_nominal_rate(write_spec, scheduler_address):
    """100 cells x 10 replicates: coverage of 95% intervals is Binomial(100, 0.95)."""
    path = write_spec(
        """
        name: coverage
        model: mm1
        params: {customers: 5000}
        factors:
          arrival_rate: [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55]
          service_rate: [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9]
        replicates: 10
        seed: 2026
        output: out
        """
    )
    ds = campaign.run(path, scheduler=scheduler_address, progress=False)
    lam = ds["arrival_rate"].values[:, None]
    mu = ds["service_rate"].values[None, :]
    truth = mm1_mean_wait(lam, mu)
    covered = (ds["mean_wait_ci_low"].values <= truth) & (truth <= ds["mean_wait_ci_high"].values)
    # P(X <= 88) and P(X = 100) are both below 1% for X ~ Binomial(100, 0.95): too narrow
    # intervals (z instead of t, std instead of standard error) or too wide ones both fail.
    assert 89 <= int(covered.sum()) <= 99
