"""Example F of datacenter.md: Example A on one processor of 2 cores."""

from __future__ import annotations

import pytest

from campaign.models.jobs.energy import energy_metrics
from campaign.models.jobs.simulate import run_schedule
from campaign.models.jobs.workload import from_arrays

GOOD = [10, 12, 8, 5]
BAD = [10, 12, 8, 8]


def energy(scheduler, estimates):
    workload = from_arrays([2, 2.5, 2.7, 2.8], [1, 2, 1, 1], [1, 1, 1, 1], estimates)
    schedule = run_schedule(workload, 2, scheduler, kill_at_estimate=False)
    return energy_metrics(schedule, cores=2, static_power=50, dynamic_power=100)


def test_fcfs():
    # 0-2 idle processor 2.5 W, 2-3 one core 150 W, 3-5 both cores 250 W.
    m = energy("fcfs", GOOD)
    assert m["energy"] == pytest.approx(5 + 150 + 2 * 250)
    assert m["edp"] == pytest.approx(655 * 5)


def test_easy_good_estimates():
    m = energy("easy", GOOD)
    assert m["energy"] == pytest.approx(5 + 0.7 * 150 + 0.3 * 250 + 0.7 * 250 + 0.3 * 150 + 250)
    assert m["energy"] == pytest.approx(655)
    assert m["edp"] == pytest.approx(3275)


def test_easy_bad_estimates():
    m = energy("easy", BAD)
    assert m["energy"] == pytest.approx(5 + 105 + 75 + 0.7 * 150 + 250 + 150)
    assert m["energy"] == pytest.approx(690)
    assert m["edp"] == pytest.approx(690 * 5.7)


def test_cores_must_split_into_processors():
    workload = from_arrays([0], [1], [1], [1])
    with pytest.raises(ValueError, match="do not split"):
        energy_metrics(run_schedule(workload, 3, "fcfs"), cores=2)
