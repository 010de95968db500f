"""The broker's fast scores against the plain computation, on a real trace: equal scores at
every arrival and equal schedules job by job, under every strategy."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from campaign.models.grid.broker import STRATEGIES, Broker
from campaign.models.grid.build import build
from campaign.models.grid.params import parse
from campaign.models.grid.schedule import GridOptions, simulate_grid

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def workload():
    from tests.conftest import DATA

    # Load 1.5 on three sites keeps queues long enough for the tentative schedules.
    params = {"trace": str(DATA / KTH), "machines": [32, 64, 100], "jobs": 1200, "load": 1.5}
    return build(parse(params), np.random.default_rng(1))


CASES = [
    {},
    # Predicted estimates (fractions, planned ends in the past) and the cumulative scope.
    {
        "local_estimate": "predicted",
        "broker_estimate": "predicted",
        "match": "size",
        "history": 3,
        "tentative_scope": "cumulative",
    },
    {"include_new_job": False, "broker_estimate": "exact", "admissibility": 0.5},
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "random"])
def test_fast_scores_equal_the_plain_ones(workload, strategy, case, monkeypatch):
    options = GridOptions(strategy=strategy, **CASES[case])
    checked = []
    fast_scores = Broker.scores

    def both(self, job, t, candidates=None):
        fast = fast_scores(self, job, t, candidates)
        self.reference = True
        try:
            plain = fast_scores(self, job, t, candidates)
        finally:
            self.reference = False
        assert fast == plain, (job, t)  # exact: every sum adds the same terms in order
        checked.append(job)
        return fast

    fast = simulate_grid(workload.workload, workload.machines, options)
    monkeypatch.setattr(Broker, "scores", both)
    spied = simulate_grid(workload.workload, workload.machines, options)
    monkeypatch.undo()
    plain = simulate_grid(workload.workload, workload.machines, replace(options, reference=True))
    assert len(checked) == len(workload.workload)
    assert fast.start.tolist() == plain.start.tolist() == spied.start.tolist()
    assert fast.end.tolist() == plain.end.tolist()
    assert fast.parts == plain.parts
    waiting = (plain.start - plain.workload.submit) > 0
    assert waiting.sum() > 100  # queues formed: the tentative schedules had work to do
