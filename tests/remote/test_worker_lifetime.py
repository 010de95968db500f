"""Batch jobs' workers retire before their walltime unless the cluster file says otherwise."""

from __future__ import annotations

import pytest

from campaign.cluster.jobqueue import walltime_seconds, with_worker_lifetime


@pytest.mark.parametrize(
    "walltime, seconds",
    [
        ("04:00:00", 14400.0),
        ("1-02:03:04", 93784.0),
        ("00:01:00", 60.0),
        ("30:00", 1800.0),
        ("90", 5400.0),  # SLURM: a bare number is minutes
        ("2 hours", None),
        ("x-01:00:00", None),
    ],
)
def test_walltime_seconds(walltime, seconds):
    assert walltime_seconds(walltime) == seconds


def test_workers_retire_a_margin_before_the_walltime():
    hour = with_worker_lifetime({"walltime": "01:00:00", "worker_extra_args": ["--x"]})
    assert hour["worker_extra_args"] == ["--x", "--lifetime=3300s", "--lifetime-stagger=120s"]
    minute = with_worker_lifetime({"walltime": "00:01:00"})
    assert minute["worker_extra_args"] == ["--lifetime=45s", "--lifetime-stagger=3s"]


@pytest.mark.parametrize(
    "options",
    [
        {"walltime": "01:00:00", "worker_extra_args": ["--lifetime", "50m"]},
        {"walltime": "01:00:00", "worker_extra_args": ["--lifetime=50m"]},
        {"cores": 4},
        {"walltime": "tomorrow"},
    ],
)
def test_a_lifetime_or_walltime_given_otherwise_is_left_alone(options):
    assert with_worker_lifetime(options) == options
