"""`--where` on a spec's design (`campaign run --where`, `outputs --where`, `task --where`)
takes comparisons as a query's does: on a factor drawn over a range they choose the points
whose value passes, and clauses on one factor keep what passes them all."""

from __future__ import annotations

import pytest

import campaign
from campaign.analysis.levels import ChosenLevels, where_levels
from campaign.errors import CampaignError

SPEC = {
    "name": "points",
    "model": "mm1",
    "params": {"customers": 50},
    "factors": {"arrival_rate": {"low": 0.1, "high": 0.9}, "service_rate": [1.0, 2.0]},
    "design": {"latin_hypercube": {"points": 6}},
    "replicates": 2,
    "seed": 3,
}


@pytest.fixture(scope="module")
def spec():
    return campaign.validate(SPEC)


def test_comparisons_choose_the_points_that_pass_every_clause(spec):
    rates = list(spec.factors[0].labels)
    band = {i for i, rate in enumerate(rates) if 0.3 < rate <= 0.7}
    assert 0 < len(band) < len(rates)
    chosen = where_levels(spec, ["arrival_rate>0.3", "arrival_rate<=0.7", "service_rate=2"])
    assert chosen == {0: band, 1: {1}}
    cells = ChosenLevels.of(spec, None, ["arrival_rate>0.3", "arrival_rate<=0.7"]).cells
    assert [i for i, kept in enumerate(cells) if kept] == [
        number for number, cell in enumerate(campaign.plan(SPEC).design.cells) if cell[0] in band
    ]
    both = where_levels(spec, ["service_rate=1", "service_rate=2", "service_rate<1.5"])
    assert both == {1: {0}}  # the levels named, those that pass the comparison


def test_one_task_is_chosen_by_its_value_and_replicate(spec):
    smallest = min(spec.factors[0].labels)
    task = campaign.task(SPEC, where=[f"arrival_rate<={smallest}", "service_rate=1"], replicate=1)
    assert task.levels == {"arrival_rate": smallest, "service_rate": 1.0}
    assert task.replicate == 1 and task.status == "not run"


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (["arrival_rate<0.05"], "where: no level of arrival_rate passes every clause on it; "),
        (["arrival_rate>0.5", "arrival_rate<0.2"], "where: no level of arrival_rate passes"),
        (["service_rate<x"], "where 'service_rate<x': 'x' is not a number"),
        (["load<1"], "where 'load<1': unknown factor 'load'; factors: arrival_rate, service_rate"),
        (["arrival_rate"], "where 'arrival_rate': write factor=level (or factor=a,b), or "),
    ],
)
def test_a_clause_that_chooses_nothing_is_refused_in_one_line(spec, where, message):
    with pytest.raises(CampaignError) as refused:
        where_levels(spec, where)
    assert str(refused.value).startswith(message)
