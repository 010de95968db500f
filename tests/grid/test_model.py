"""The ``grid`` model as the engine sees it: params, errors, determinism, real traces."""

from __future__ import annotations

import pytest

from campaign.models import load_model
from campaign.models.grid import MODEL, check, run, schedule
from campaign.models.grid.measure import check_grid_feasible
from campaign.results.names import metric_values

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


def test_registry_points_here():
    assert load_model("grid") is MODEL and MODEL.run is run
    assert {"lbal_size", "jobs_multisite", "multisite_work_frac", "mean_bsld"} <= set(MODEL.metrics)
    for attrs in MODEL.metrics.values():
        assert attrs["units"] and attrs["long_name"]


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"trace": KTH, "config": "m64", "strategy": "fastest"}, "'strategy' must be one of"),
        ({"trace": KTH, "config": "m64", "colour": 1}, "unknown parameter 'colour'"),
        ({"trace": KTH, "config": "m99"}, "'config' must be one of"),
        ({"trace": KTH}, "exactly one of 'machines' or 'config'"),
        ({"config": "m64"}, "needs 'trace'"),
        ({"trace": KTH, "config": "m64", "history": 0}, "'history' must be"),
        (
            {"trace": KTH, "config": "m64", "local_scheduler": "pfcfs"},
            "'local_scheduler' must be one of fcfs, easy, conservative, accasim_easy, sjf, got",
        ),
        ({"trace": KTH, "config": "m64", "match": "user"}, "'match' must be one of"),
        ({"trace": KTH, "config": "m64", "admissibility": 1.5}, "'admissibility'"),
        ({"trace": KTH, "config": "m64", "max_width": "local"}, "needs sharing: local"),
        (
            {"trace": KTH, "config": "m64", "sharing": "multisite", "local_scheduler": "fcfs"},
            "easy",
        ),
        ({"trace": KTH, "config": "m64", "place_on_arrival": True}, "job_sharing or multisite"),
        (
            {"trace": KTH, "config": "m64", "sharing": "multisite", "place_on_arrival": 1},
            "'place_on_arrival' must be true or false",
        ),
        ({"config": "pwa4", "trace": KTH}, "single-trace runs"),
        ({"trace": "nothing.swf", "config": "m64"}, "not found"),
    ],
)
def test_check_names_the_bad_param(workloads, params, needle):
    with pytest.raises(ValueError, match=needle):
        check(params)


def test_missing_logs_of_grid1_are_named_in_one_error(workloads, monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="SDSC-SP2-.*CTC-SP2-.*LANL-CM5-.*SDSC-DS-"):
        check({"config": "grid1", "days": 7})
    with pytest.raises(ValueError, match="DAS2-.*CTC-SP2-.*LANL-CM5-"):
        run({"config": "grid2", "days": 7}, 1)
    # With the files present (here: copies named like the archive's), grid1 is mixed.
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(tmp_path))
    names = ["SDSC-SP2-x.swf", "CTC-SP2-x.swf", "LANL-CM5-x.swf", "SDSC-DS-x.swf", "KTH-SP2-x.swf"]
    line = "1 {t} 0 60 1 -1 -1 1 100 -1 1 1 1 -1 1 1 -1 -1\n"
    body = "; UnixStartTime: 0\n; TimeZone: 0\n" + "".join(
        line.format(t=t * 86400) for t in range(0, 60)
    )
    for name in names:
        (tmp_path / name).write_text(body)
    (tmp_path / "HPC2N-x.swf").write_text(body)
    (tmp_path / "SDSC-BLUE-x.swf").write_text(body)
    values = run({"config": "grid1", "days": 7}, 1)
    assert values["jobs"] == 7 * 7  # 7 logs, one job a day each
    assert values["sites"] == 7


@pytest.mark.parametrize(
    "params",
    [
        {"strategy": "mct", "broker_estimate": "predicted", "local_estimate": "predicted"},
        {"strategy": "lbal_w", "admissibility": 0.5},
        {"strategy": "random"},
        {"sharing": "local", "max_width": "local", "load": 4.0},
        {"sharing": "job_sharing", "max_width": 64, "load": 4.0},
        {"sharing": "multisite", "overhead": 0.3, "load": 4.0},
        {"sharing": "multisite", "overhead": 0.3, "load": 4.0, "place_on_arrival": True},
        {"sharing": "job_sharing", "load": 4.0, "place_on_arrival": True},
    ],
)
def test_real_trace_runs_are_feasible_and_deterministic(workloads, params):
    params = {"trace": KTH, "config": "m64", "jobs": 400, **params}
    result = schedule(params, 11)
    check_grid_feasible(result)
    first = metric_values(run(params, 11))
    assert metric_values(run(params, 11)) == first
    assert first["jobs"] > 300


def test_multisite_on_a_real_trace_co_allocates(workloads):
    values = run(
        {"trace": KTH, "config": "m64", "jobs": 400, "sharing": "multisite", "load": 4.0}, 1
    )
    assert values["jobs_multisite"] > 0 and 0 < values["multisite_work_frac"] < 1
    assert values["n_dropped_too_wide"] == 0


def test_mix_of_two_real_traces_under_every_strategy(workloads):
    sites = [
        {"trace": KTH, "warmup_days": 8},
        {"trace": "HPC2N-2002-2.1-cln.swf.gz", "warmup_days": 20},
    ]
    seen = set()
    for strategy in ("mlp", "mpl", "lbal_s", "mlb", "mct", "mwt", "mwwt_w", "mst", "mswct_w"):
        params = {"sites": sites, "days": 3, "strategy": strategy}
        result = schedule(params, 1)
        check_grid_feasible(result)
        seen.add(round(float((result.end - result.workload.submit).mean()), 6))
    assert result.machines == (100, 240)
    assert len(seen) > 1  # strategies do make a difference


def test_random_window_offset_replays_other_weeks(workloads):
    sites = [{"trace": KTH, "warmup_days": 8}, {"trace": "HPC2N-2002-2.1-cln.swf.gz"}]
    params = {"sites": sites, "days": 2, "window_offset": "random", "strategy": "mlp"}
    runs = [metric_values(run(params, seed)) for seed in (1, 2, 3)]
    assert len({r["jobs"] for r in runs}) > 1
    assert metric_values(run(params, 2)) == runs[1]
    with pytest.raises(
        ValueError, match="'window_offset' must be an integer >= 0 on a single trace"
    ):
        check({"trace": KTH, "config": "m64", "window_offset": "random"})


@pytest.mark.parametrize("scheduler", ["easy", "conservative"])
def test_one_site_grid_equals_the_jobs_simulator(workloads, scheduler):
    from campaign.models.rigid.simulate import run_schedule

    params = {"trace": KTH, "machines": [100], "jobs": 1500, "local_scheduler": scheduler}
    grid = schedule(params, 1)
    single = run_schedule(grid.workload, 100, scheduler)
    assert grid.start.tolist() == single.start.tolist()
    assert grid.end.tolist() == single.end.tolist()


def test_machine_configurations_match_the_table():
    import numpy as np

    from campaign.models.grid.configs import MACHINES

    cv = {"m64": 0.763, "m64-8": 0, "m128": 0, "m256": 0, "m256-5": 0.750, "m384": 1.579, "m512": 0}
    largest = {"m64": 0.125, "m64-8": 0.125, "m128": 0.25, "m256": 0.5, "m256-5": 0.5, "m384": 0.75}
    for name, machines in MACHINES.items():
        sizes = np.array(machines)
        assert sizes.sum() == 512 and list(sizes) == sorted(sizes)
        assert sizes.std() / sizes.mean() == pytest.approx(cv[name], abs=5e-4)
        assert sizes.max() / 512 == largest.get(name, 1.0)


def test_trace_digests_are_recorded(workloads):
    import hashlib

    values = run({"trace": KTH, "config": "m128", "jobs": 50}, 1)
    digest = hashlib.sha256((workloads / KTH).read_bytes()).hexdigest()
    assert values["digest_log1"] == float(int(digest[:13], 16))


def test_parse_resolves_every_default_once(workloads):
    from campaign.models.grid import parse
    from campaign.models.grid.params import Site
    from campaign.models.grid.schedule import GridOptions

    single = parse({"trace": KTH, "config": "m64", "jobs": 2.0, "admissibility": None})
    assert single.options() == GridOptions()  # the simulation options' defaults, unchanged
    assert (single.jobs, single.days, single.window_offset, single.load) == (2, None, 0, 1.0)
    mix = parse({"sites": [{"trace": KTH}, {"trace": KTH, "processors": 50, "warmup_days": 2}]})
    assert mix.is_mix and mix.days == 180.0 and mix.jobs is None
    assert mix.sites == (Site(KTH, None, 0.0), Site(KTH, 50, 2.0))
    assert parse({"config": "pwa4", "jobs": 100}).days is None


@pytest.mark.parametrize(
    ("sites", "needle"),
    [
        ([], "'sites' must be a non-empty list of {trace, processors, warmup_days}, got []"),
        ([{"processors": 4}], "every entry needs a 'trace'"),
        ([{"trace": KTH, "size": 4}], "unknown key 'size'; allowed: trace, processors, warmup"),
        ([{"trace": KTH, "processors": 0}], "'processors' must be an integer >= 1 or null, got 0"),
        ([{"trace": "nothing.swf"}], "trace 'nothing.swf' not found"),
    ],
)
def test_a_bad_site_is_one_line_naming_it(workloads, sites, needle):
    with pytest.raises(ValueError) as caught:
        check({"sites": sites})
    assert needle in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("shaping", "needle"),
    [
        ({"skip_jobs": 3000}, "skip_jobs"),
        ({"warmup_days": 1000}, "warmup_days"),
        ({"window_offset": 1000}, "window_offset"),
        ({"machines": [1], "jobs": 3}, "3 too_wide"),
    ],
)
def test_a_run_left_without_jobs_fails_naming_why(workloads, shaping, needle):
    """The slice has 3,000 jobs: past its end (or with every job too wide) nothing is left to
    simulate, and the run says so instead of returning jobs 0 and undefined metrics."""
    params = {"trace": KTH, "machines": [64, 36], **shaping}
    with pytest.raises(ValueError, match=f"no job is left to simulate.*{needle}"):
        run(params, 1)


def test_jobs_replayed_with_an_unknown_run_time_are_counted(workloads):
    """The SDSC-BLUE slice: 42 of its 1,000 jobs have run time -1 (all of a positive size);
    without clean they replay as 0 s, and the run says how many, as a jobs run does."""
    params = {"trace": "SDSC-BLUE-2000-4.2-cln.swf.gz", "machines": [1152]}
    values = run(params, 1)
    assert (values["jobs"], values["n_unknown_run_time"]) == (1000, 42)
    assert run({**params, "clean": True}, 1)["n_unknown_run_time"] == 0
    assert MODEL.metrics["n_unknown_run_time"]["units"] == "1"
