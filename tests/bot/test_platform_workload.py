"""Grid construction and task generation from the platform and workload streams."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.bot import Platform, build_platform, build_workload
from campaign.models.bot.platform import SPEED_TABLES
from campaign.models.bot.workload import COST_PER_BYTE, JOB_BYTES, MIB


def test_homogeneous_grid_has_exactly_100_processors_of_speed_10():
    for seed in range(5):
        platform = build_platform(np.random.default_rng(seed), 1)
        assert platform.n_processors == 100
        assert set(platform.speeds) == {10.0}


@pytest.mark.parametrize("table", sorted(SPEED_TABLES))
@pytest.mark.parametrize("level", [2, 4, 8])
def test_speeds_within_table_and_power_just_reached(table, level):
    low, high = SPEED_TABLES[table][level]
    for seed in range(5):
        platform = build_platform(np.random.default_rng(seed), level, table)
        speeds = np.array(platform.speeds)
        assert speeds.min() >= low and speeds.max() <= high
        assert speeds.sum() >= 1000.0
        assert speeds[:-1].sum() < 1000.0  # the draw stops at the first one reaching P
        assert len(set(platform.speeds)) == len(speeds)  # continuous draws


def test_sites_are_filled_round_robin():
    counts = set()
    for seed in range(40):
        platform = build_platform(np.random.default_rng(seed), 4)
        g = platform.n_sites
        counts.add(g)
        assert 2 <= g <= 12
        assert list(platform.sites) == [k % g for k in range(platform.n_processors)]
    assert len(counts) > 5  # g is drawn, not fixed


def test_explicit_platform_numbers_processors_site_by_site():
    platform = Platform.from_sites([[1.0], [2.0, 4.0]])
    assert platform.speeds == (1.0, 2.0, 4.0)
    assert platform.sites == (0, 1, 1)
    assert platform.site_processors(1) == [1, 2]
    with pytest.raises(ValueError):
        Platform((1.0, -2.0), (0, 0), 1)


@pytest.mark.parametrize(("granularity", "tasks"), [(3, 683), (15, 137), (75, 28)])
def test_homogeneous_application_task_counts(granularity, tasks):
    workload = build_workload(np.random.default_rng(0), granularity, 0.0, "visualization", 6)
    assert workload.n_tasks == tasks
    assert set(workload.sizes) == {granularity * MIB}
    assert workload.n_jobs == 6


@pytest.mark.parametrize("ha", [0.25, 0.5, 1.0])
def test_heterogeneous_sizes_stop_at_two_gib(ha):
    workload = build_workload(np.random.default_rng(3), 15, ha, "visualization", 2)
    sizes = np.array(workload.sizes)
    assert sizes.min() >= 15 * MIB * (1 - ha / 2) and sizes.max() <= 15 * MIB * (1 + ha / 2)
    assert sizes.sum() >= JOB_BYTES > sizes[:-1].sum()
    assert sizes.std() > 0


def test_visualisation_costs_are_per_byte_and_repeat():
    workload = build_workload(np.random.default_rng(1), 3, 0.5, "visualization", 3)
    assert workload.costs[0] == workload.costs[2]
    assert workload.costs[0] == pytest.approx([COST_PER_BYTE * s for s in workload.sizes])
    three_mib = build_workload(np.random.default_rng(1), 3, 0.0, "visualization", 1)
    assert three_mib.costs[0][0] == pytest.approx(5040.0, abs=0.01)


def test_pattern_search_costs_are_redrawn_per_job_below_the_full_cost():
    workload = build_workload(np.random.default_rng(1), 15, 0.0, "pattern_search", 6)
    full = COST_PER_BYTE * 15 * MIB
    costs = np.array(workload.costs)
    assert costs.min() >= 1.0 and costs.max() <= full
    assert len({tuple(job) for job in workload.costs}) == 6
    # the sizes do not depend on the application type (costs are drawn after them)
    visual = build_workload(np.random.default_rng(1), 15, 0.0, "visualization", 6)
    assert visual.sizes == workload.sizes
