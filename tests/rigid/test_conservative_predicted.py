"""Conservative backfilling with predicted estimates: each job's estimate is written when it
arrives (``estimate: predicted``, as the grid's ``local_estimate: predicted`` does), after the
compiled book may have read the estimates of every job. Checked job by job against the
literal re-insertion and the literal definition given the estimates the run predicted."""

from __future__ import annotations

import pytest
from numpy.random import SeedSequence

from campaign.models.grid.predict import history_predictor
from campaign.models.jobs import build_workload, parse
from campaign.models.rigid import reservations
from campaign.models.rigid.policies import PolicyOptions
from campaign.models.rigid.simulate import job_times, run_schedule
from tests.rigid.test_reference import reference


@pytest.mark.parametrize("seed", [0, 1])
def test_every_book_plans_with_the_estimates_predicted_at_arrival(seed, monkeypatch):
    params = parse({"workload": "randomized", "jobs": 100, "scheduler": "conservative"})
    workload, processors, _ = build_workload(params, SeedSequence(seed).spawn(5))
    runtime, user, _, _ = job_times(workload, "user", True)
    # The mean runtime of the user's last two jobs (a user's first job: its estimate).
    predict = history_predictor("hk", 2, runtime.tolist(), user.tolist(), workload.size.tolist())
    schedules = {}
    for compiled in (True, False):
        monkeypatch.setattr(reservations, "COMPILED", compiled)
        schedules[compiled] = run_schedule(
            workload, processors, "conservative", "predicted", True, predictor=predict
        )
    literal = run_schedule(
        workload,
        processors,
        "conservative",
        "predicted",
        True,
        predictor=predict,
        options=PolicyOptions(reference=True),
    )
    estimate = literal.estimate.tolist()
    assert sum(e != u for e, u in zip(estimate, user.tolist())) > 50  # most were predicted
    expected = reference(
        workload.submit.tolist(),
        workload.size.tolist(),
        runtime.tolist(),
        estimate,
        processors,
        "conservative",
    )
    assert literal.start.tolist() == expected
    assert schedules[False].start.tolist() == expected  # the pure-Python book
    assert schedules[True].start.tolist() == expected  # the compiled book a run uses
    assert (literal.start > workload.submit).mean() > 0.8
