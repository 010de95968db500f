"""The model entry point: parameters, metric names, pairing across heuristics, determinism."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from campaign.models import load_model
from campaign.models.bot import MODEL, build, check, run
from campaign.models.contract import Choice
from campaign.results.names import metric_values

QUICK = {"granularity_mb": 75, "jobs": 2}
HEURISTICS = ["wqr", "xsufferage", "storage_affinity", "workqueue"]


def test_registry_finds_the_model_with_its_declaration():
    model = load_model("bot")
    assert model is MODEL and model.run is run
    assert model.checks and model.params is not None
    assert "makespan_job{k}" in model.metrics


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({}, "heuristic"),
        ({"heuristic": "sufferage"}, "heuristic"),
        ({"heuristic": "wqr", "grid_heterogeneity": 3}, "grid_heterogeneity"),
        ({"heuristic": "wqr", "app_heterogeneity": 25}, "app_heterogeneity"),
        ({"heuristic": "wqr", "granularity_mb": 0}, "granularity_mb"),
        ({"heuristic": "wqr", "app_type": "video"}, "app_type"),
        ({"heuristic": "wqr", "jobs": 0}, "jobs"),
        ({"heuristic": "wqr", "jobs": 2.5}, "jobs"),
        ({"heuristic": "wqr", "jobs": math.inf}, "jobs"),
        ({"heuristic": "wqr", "jobs": "6"}, "jobs"),
        ({"heuristic": "wqr", "replication_cap": 0}, "replication_cap"),
        ({"heuristic": "wqr", "availability": "traces"}, "availability"),
        ({"heuristic": "wqr", "availability_min": 0}, "availability_min"),
        ({"heuristic": "wqr", "availability_period_s": 0.1}, "availability_period_s"),
        ({"heuristic": "wqr", "scheduler_latency_s": -1}, "scheduler_latency_s"),
        ({"heuristic": "xsufferage", "information_error": 1.0}, "information_error"),
        ({"heuristic": "wqr", "speed_table": "thesis"}, "speed_table"),
        ({"heuristic": "wqr", "granularity": 15}, "granularity"),
    ],
)
def test_check_names_the_bad_parameter(params, named):
    with pytest.raises(ValueError, match=re.escape(repr(named))):
        check(params)


def test_defaults_and_accepted_values():
    check({"heuristic": "wqr"})
    check({"heuristic": "storage_affinity", "replication_cap": 2, "grid_heterogeneity": 8.0})
    assert build({"heuristic": "wqr", "replication_cap": math.inf}, 1).params.replication_cap == (
        math.inf
    )
    assert build({"heuristic": "wqr", "jobs": np.int64(2)}, 1).params.jobs == 2
    p = build({"heuristic": "wqr"}, 1).params
    assert (p.grid_heterogeneity, p.granularity_mb, p.jobs) == (1, 15.0, 6)
    assert p.app_heterogeneity == 0.0 and p.app_type == "visualization"
    assert p.replication_cap == math.inf and p.availability == "dedicated"


def declared(name: str, metrics: dict) -> bool:
    return any(re.fullmatch(key.replace("{k}", r"[1-9][0-9]*"), name) for key in metrics)


def test_every_metric_is_declared_with_units_and_long_name():
    metrics = run({"heuristic": "wqr", **QUICK}, 3)
    assert MODEL.samples == ["task_completion"]
    assert all(isinstance(v, float) for k, v in metrics.items() if k != "task_completion")
    assert metrics["task_completion"].max() == max(
        metrics["makespan_job1"], metrics["makespan_job2"]
    )
    assert all(declared(name, MODEL.metrics) for name in metrics)
    assert all(set(doc) - {"kind"} == {"units", "long_name"} for doc in MODEL.metrics.values())
    assert {f"makespan_job{k}" for k in (1, 2)} <= set(metrics)
    assert "makespan_job3" not in metrics
    mean = (metrics["makespan_job1"] + metrics["makespan_job2"]) / 2
    assert metrics["makespan"] == pytest.approx(mean)


def test_heuristics_see_the_same_grid_tasks_and_background_load():
    params = {"grid_heterogeneity": 8, "app_heterogeneity": 0.5, "app_type": "pattern_search"}
    params |= {"availability": "synthetic"}
    built = [build({"heuristic": h, **params}, 11) for h in HEURISTICS]
    for setup in built[1:]:
        assert setup.platform == built[0].platform
        assert setup.workload == built[0].workload
        assert setup.availability.values(3) == built[0].availability.values(3)
    assert build({"heuristic": "wqr", **params}, 12).platform != built[0].platform
    results = [run({"heuristic": h, **QUICK}, 11) for h in HEURISTICS]
    assert len({(r["n_processors"], r["n_sites"], r["n_tasks"]) for r in results}) == 1


@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_same_params_and_seed_give_identical_metrics(heuristic):
    params = {"heuristic": heuristic, "grid_heterogeneity": 4, "app_heterogeneity": 0.5, **QUICK}
    first = metric_values(run(params, 5))
    assert metric_values(run(params, 5)) == first  # bit for bit
    assert metric_values(run(params, 6)) != first


def test_xsufferage_wastes_nothing_and_never_replicates():
    metrics = run({"heuristic": "xsufferage", "grid_heterogeneity": 8, **QUICK}, 2)
    assert metrics["wasted_cpu_pct"] == 0.0 and metrics["wasted_bandwidth_pct"] == 0.0
    assert metrics["replicas_started"] == 0.0


def test_data_reuse_speeds_up_later_jobs_for_data_aware_heuristics():
    for heuristic in ("xsufferage", "storage_affinity"):
        metrics = run({"heuristic": heuristic, **QUICK}, 4)
        assert metrics["makespan_job2"] < metrics["makespan_job1"]
        # job 1 moves every file once; job 2 finds them all on the servers
        assert metrics["transferred_bytes"] >= 2**31
    plain = run({"heuristic": "workqueue", **QUICK}, 4)
    assert plain["makespan_job2"] == pytest.approx(plain["makespan_job1"])  # no reuse


def test_run_is_picklable_and_independent_of_hash_order():
    """The engine ships ``run`` to workers; metrics must not depend on set or dict order."""
    import os
    import pickle
    import subprocess
    import sys
    from pathlib import Path

    assert pickle.loads(pickle.dumps(run)) is run
    params = {"heuristic": "storage_affinity", "grid_heterogeneity": 4, **QUICK}
    code = f"from campaign.models.bot import run; print(repr(sorted(run({params!r}, 8).items())))"
    root = Path(__file__).resolve().parents[2]
    outputs = set()
    for hash_seed in ("1", "2"):
        env = os.environ | {"PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root)}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(done.stdout)
    assert outputs == {repr(sorted(run(params, 8).items())) + "\n"}


def test_the_definitions_parameter_table_lists_the_values_the_model_takes():
    """Section 9 of bag-of-tasks.md names, for each parameter with named values, exactly the
    values the model accepts: it offered a trace availability the model refused."""
    text = (Path(__file__).parents[2] / "campaign/models/bot/bag-of-tasks.md").read_text()
    rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]*) \|", text.split("## 9.")[1], re.M)
    checked = 0
    for name, values in rows:
        kind = MODEL.params[name].kind
        if isinstance(kind, Choice) and all(isinstance(v, str) for v in kind.values):
            assert set(re.findall(r"`([a-z_]+)`", values)) == set(kind.values), name
            checked += 1
    assert checked == 3  # heuristic, app_type, availability
