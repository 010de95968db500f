"""The economic settings in the grid's parameter table and the rules that tie them."""

from __future__ import annotations

import pytest

from campaign.models.grid import parse
from campaign.models.grid.economic import EconomicOptions

TRACE = {"trace": "KTH-SP2-1996-2.1-cln.swf.gz", "config": "m128", "jobs": 10}


def test_economic_settings_reach_the_simulation_options(workloads):
    p = parse(
        {
            **TRACE,
            "sharing": "economic",
            "mf": 3,
            "uf": 5,
            "hops": 1,
            "topology": "ring",
            "offers_per_machine": 2,
            "shifts": 4,
            "multisite": "always",
            "min_multisite": 2,
            "max_multisite": 64,
            "max_parts": 3,
            "overhead": 0.25,
        }
    )
    o = p.options([0, 1])
    assert o.sharing == "economic" and o.max_parts == 3 and o.overhead == 0.25
    assert o.economic == EconomicOptions(3, 5, 1, "ring", 2, 4, "always", 2, 64)


def test_defaults_are_those_of_the_definition(workloads):
    assert parse({**TRACE, "sharing": "economic"}).options().economic == EconomicOptions(
        mf=1,
        uf=1,
        hops=2,
        topology="full",
        offers_per_machine=5,
        shifts=5,
        multisite="required",
        min_multisite=1,
        max_multisite=None,
    )


def test_other_sharing_modes_ignore_mf_and_uf(workloads):
    p = parse({**TRACE, "sharing": "job_sharing", "mf": 4, "uf": 2})
    assert p.sharing == "job_sharing" and (p.mf, p.uf) == (4, 2)


@pytest.mark.parametrize(
    "extra, error",
    [
        ({"sharing": "job_sharing", "hops": 1}, "parameter 'hops' applies to sharing: economic"),
        ({"sharing": "broker", "multisite": "off"}, "'multisite' applies to sharing: economic"),
        ({"sharing": "economic", "max_parts": 1}, "'max_parts' must be an integer >= 2"),
        ({"sharing": "economic", "min_multisite": 4, "max_multisite": 2}, "at least"),
        ({"sharing": "economic", "local_estimate": "predicted"}, "must be user or exact"),
        ({"sharing": "economic", "kill_at_estimate": False}, "'kill_at_estimate' must be"),
        ({"sharing": "economic", "mf": 7}, "parameter 'mf' must be one of 1, 2, 3, 4, 5, 6"),
        ({"sharing": "economic", "topology": "star"}, "parameter 'topology' must be one of"),
    ],
)
def test_bad_economic_settings_are_one_line(workloads, extra, error):
    with pytest.raises(ValueError, match=error):
        parse({**TRACE, **extra})


def test_exact_estimates_may_run_without_the_kill_rule(workloads):
    p = parse(
        {**TRACE, "sharing": "economic", "kill_at_estimate": False, "local_estimate": "exact"}
    )
    assert not p.kill_at_estimate
