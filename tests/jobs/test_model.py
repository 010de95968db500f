"""The ``jobs`` model contract, the workloads folder commands and a real KTH-SP2 slice."""

from __future__ import annotations

import math
import pickle

import pytest

from campaign.models.jobs import MODEL, run, schedule
from campaign.models.rigid.feasibility import InfeasibleSchedule, check_feasible
from campaign.models.rigid.workloads import archive_url, list_traces, locate, main
from campaign.results.names import metric_values

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
SYNTHETIC = {"workload": "synthetic", "jobs": 300, "load": 1.2}


def same(a: dict, b: dict) -> bool:
    """Bit-identical metrics as a record stores them (NaN equal to NaN)."""
    a, b = metric_values(a), metric_values(b)
    return a.keys() == b.keys() and all(repr(a[k]) == repr(b[k]) for k in a)


def test_run_is_deterministic_and_documented():
    first = run(SYNTHETIC, 11)
    assert same(first, run(SYNTHETIC, 11))
    assert not same(first, run(SYNTHETIC, 12))
    assert set(first) == set(MODEL.metrics)
    for name, doc in MODEL.metrics.items():
        assert doc["units"] and doc["long_name"], name
    assert first["jobs"] == 300 and first["processors"] == 128
    scalars = [name for name in first if name not in (*MODEL.samples, *MODEL.breakdowns)]
    assert all(isinstance(first[name], float) for name in scalars)
    assert same(pickle.loads(pickle.dumps(run))(SYNTHETIC, 11), first)


def test_schedulers_share_the_workload_of_a_seed():
    easy = schedule({**SYNTHETIC, "scheduler": "easy"}, 5)
    fcfs = schedule({**SYNTHETIC, "scheduler": "fcfs"}, 5)
    assert (easy.workload.submit == fcfs.workload.submit).all()
    check_feasible(easy)
    check_feasible(fcfs)
    assert (
        run({**SYNTHETIC, "scheduler": "easy"}, 5)["mean_wait"]
        <= run({**SYNTHETIC, "scheduler": "fcfs"}, 5)["mean_wait"]
    )


def test_load_packs_arrivals():
    low = schedule({**SYNTHETIC, "load": 0.5}, 3).workload.submit
    high = schedule({**SYNTHETIC, "load": 2.0}, 3).workload.submit
    assert high[-1] * 4 == pytest.approx(low[-1])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"workload": "synthetic", "speed": 2}, "unknown parameter 'speed'"),
        ({}, "exactly one of 'trace'"),
        ({"workload": "synthetic", "scheduler": "lifo"}, "'scheduler' must be one of fcfs, easy"),
        ({"workload": "synthetic", "estimate": "oracle"}, "'estimate' must be one of user, exact"),
        ({"workload": "synthetic", "load": 0}, "'load' must be a number > 0"),
        ({"workload": "synthetic", "jobs": 2.5}, "'jobs' must be an integer >= 1"),
        (
            {"workload": "synthetic", "kill_at_estimate": "yes"},
            "'kill_at_estimate' must be true or false",
        ),
        ({"workload": "synthetic", "window": "random"}, "'window' applies to traces"),
        ({"workload": "replay"}, "'workload' must be one of synthetic"),
        ({"trace": "no-such-trace.swf"}, "trace 'no-such-trace.swf' not found"),
    ],
)
def test_check_names_the_bad_parameter(params, message, tmp_path, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(tmp_path))
    with pytest.raises(ValueError, match=message):
        MODEL.check(params)
    with pytest.raises(ValueError, match=message):
        run(params, 1)


def test_feasibility_checker_catches_broken_schedules():
    good = schedule(SYNTHETIC, 1)
    check_feasible(good)
    early = good.start.copy()
    early[5] = good.workload.submit[5] - 1
    broken = type(good)(**{**good.__dict__, "start": early})
    with pytest.raises(InfeasibleSchedule, match="before its submission"):
        check_feasible(broken)
    crowded = type(good)(**{**good.__dict__, "processors": (1,)})
    with pytest.raises(InfeasibleSchedule, match="wider than site|uses"):
        check_feasible(crowded)
    long = good.runtime.copy()
    long[0] += 1
    over = type(good)(**{**good.__dict__, "runtime": long, "end": good.end + (long - good.runtime)})
    with pytest.raises(InfeasibleSchedule, match="past its kill limit|actual runtime"):
        check_feasible(over)


def test_workloads_folder_commands(workloads, capsys, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    assert KTH in [path.name for path in list_traces()]
    assert locate(KTH) == workloads / KTH
    assert main(["list"]) == 0
    assert KTH in capsys.readouterr().out
    assert main(["show", KTH]) == 0
    out = capsys.readouterr().out
    assert "MaxProcs: 100" in out and "  jobs: 3000\n" in out and "digest: sha256:" in out
    assert main(["show", "missing.swf"]) == 1
    assert "not found" in capsys.readouterr().err


def test_default_workloads_folder_is_a_user_cache(monkeypatch, tmp_path):
    from campaign.models.rigid.workloads import workloads_folder

    monkeypatch.delenv("CAMPAIGN_WORKLOADS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert workloads_folder() == tmp_path / "campaign" / "workloads"


def test_archive_address_of_a_trace_name():
    assert archive_url(KTH) == ("https://www.cs.huji.ac.il/labs/parallel/workload/l_kth_sp2/" + KTH)
    assert archive_url("LLNL-Thunder-2007-1.1-cln.swf.gz").endswith(
        "/l_llnl_thunder/LLNL-Thunder-2007-1.1-cln.swf.gz"
    )
    with pytest.raises(ValueError, match="cannot derive an archive address"):
        archive_url("mytrace.txt")


@pytest.mark.parametrize("scheduler", ["fcfs", "easy", "conservative", "accasim_easy"])
@pytest.mark.parametrize("kill", [True, False])
def test_kth_slice_is_feasible_for_every_scheduler(workloads, monkeypatch, scheduler, kill):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    params = {
        "trace": KTH,
        "jobs": 1500,
        "window": "random",
        "scheduler": scheduler,
        "kill_at_estimate": kill,
    }
    result = schedule(params, 2)
    check_feasible(result)
    assert len(result.workload) == 1500
    assert result.processors == (100,)
    metrics = run(params, 2)
    assert metrics["jobs"] == 1500 and not math.isnan(metrics["mean_bsld"])
    assert 0 < metrics["utilization"] <= 1
    if not kill:
        assert metrics["jobs_killed"] == 0


def test_random_windows_are_different_real_periods(workloads, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    params = {"trace": KTH, "jobs": 200, "window": "random"}
    a, b = schedule(params, 1).workload, schedule(params, 2).workload
    assert a.job_id[0] != b.job_id[0]
    fixed = {"trace": KTH, "jobs": 200}
    assert schedule(fixed, 1).workload.job_id[0] == schedule(fixed, 2).workload.job_id[0]


def test_energy_is_nan_unless_asked_for():
    assert math.isnan(run(SYNTHETIC, 1)["energy"])
    with_energy = run({**SYNTHETIC, "energy": True, "cores_per_processor": 4}, 1)
    # Bounds: every core idle at 0.05 S, or every core running at D + S, for the makespan.
    lowest = 128 * 0.05 * (50 / 4) * with_energy["makespan"]
    highest = 128 * (100 + 50 / 4) * with_energy["makespan"]
    assert lowest < with_energy["energy"] < highest
    assert with_energy["edp"] == pytest.approx(with_energy["energy"] * with_energy["makespan"])
    with pytest.raises(ValueError, match="'cores_per_processor' \\(3\\) must divide"):
        run({**SYNTHETIC, "energy": True, "cores_per_processor": 3}, 1)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"trace": KTH, "energy": True}, r"'cores_per_processor' \(8\) must divide .*\(100 "),
        ({"trace": KTH, "hetero_fraction": 0.5}, r"'cores_per_processor' \(8\) must divide"),
        (
            {"trace": KTH, "max_processors": 60, "energy": True},
            r"'cores_per_processor' \(8\) must divide .*\(60 ",
        ),
        ({**SYNTHETIC, "energy": True, "cores_per_processor": 3}, r"\(3\) must divide .*\(128 "),
        ({"workload": "datacenter_exp1", "cores_per_processor": 7}, r"\(7\) must divide .*\(160 "),
        ({"workload": "randomized", "processors": 100, "energy": True}, r"\(8\) must divide"),
    ],
)
def test_a_site_the_cores_do_not_divide_is_refused_by_check(workloads, params, message):
    """KTH-SP2 has 100 processors: 8 cores per processor cannot cover it. The spec check
    says so, before any task runs (it said 'spec is valid' and every task then failed)."""
    with pytest.raises(ValueError, match=message):
        MODEL.check(params)


def test_a_site_the_cores_divide_passes_check(workloads):
    MODEL.check({"trace": KTH, "energy": True, "cores_per_processor": 4})
    MODEL.check({"trace": KTH, "energy": True, "processors": 96})
    MODEL.check({"trace": KTH, "cores_per_processor": 3})  # no energy, identical processors
