"""The ready specs of the bag-of-tasks model reproduce the source's non-dedicated grid."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaign.design.tasks import Design, cell_params
from campaign.models.bot import run
from campaign.spec.load import load_spec

SPECS = Path(__file__).resolve().parents[2] / "specs"


@pytest.mark.parametrize("name", ["bot-full.yaml", "bot-quick.yaml"])
def test_specs_vary_availability_and_keep_a_dedicated_level(name):
    spec = load_spec(SPECS / name)
    assert spec.model == "bot"
    assert spec.factor("availability").values == ("synthetic", "dedicated")
    assert spec.paired == ("heuristic", "availability")
    assert spec.factor("heuristic").values == ("wqr", "xsufferage", "storage_affinity", "workqueue")


def test_full_spec_covers_the_source_cells():
    spec = load_spec(SPECS / "bot-full.yaml")
    assert spec.factor("grid_heterogeneity").values == (1, 2, 4, 8)
    assert spec.factor("app_heterogeneity").values == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert spec.factor("granularity_mb").values == (3, 15, 75)
    assert spec.factor("app_type").values == ("visualization", "pattern_search")
    assert spec.params["jobs"] == 6 and spec.params["replication_cap"] is None


def test_availability_levels_share_the_grid_and_tasks_but_not_the_schedule():
    """Paired levels: one replicate's two availabilities get one seed, so the same grid and
    tasks; only the background load differs, and with it the makespan."""
    spec = load_spec(SPECS / "bot-quick.yaml")
    tasks = [
        task
        for task in Design(spec).tasks()
        if task.replicate == 0
        and cell_params(spec, task.cell)["heuristic"] == "xsufferage"
        and cell_params(spec, task.cell)["grid_heterogeneity"] == 8
        and cell_params(spec, task.cell)["app_heterogeneity"] == 0.5
        and cell_params(spec, task.cell)["granularity_mb"] == 75
        and cell_params(spec, task.cell)["app_type"] == "visualization"
    ]
    assert len(tasks) == 2 and tasks[0].seed == tasks[1].seed
    results = {
        cell_params(spec, t.cell)["availability"]: run(cell_params(spec, t.cell), t.seed)
        for t in tasks
    }
    varying, dedicated = results["synthetic"], results["dedicated"]
    for name in ("n_processors", "n_sites", "n_tasks"):
        assert varying[name] == dedicated[name]
    assert varying["makespan"] > dedicated["makespan"]
