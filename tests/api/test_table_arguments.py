"""`campaign.table`'s arguments do what its docstring says for every kind of result, or are
refused in one line: none is taken and then left unused."""

from __future__ import annotations

import pandas as pd
import pytest

import campaign
from campaign.analysis.sensitivity import Sensitivity


def regression_indices() -> Sensitivity:
    """A small sensitivity result, as `campaign.sensitivity` returns it."""
    table = pd.DataFrame({"factor": ["a", "b"], "SRC": [0.6241300391, -0.879438805]})
    table["SRC_conf"] = [0.0777155453, 0.0777155453]
    return Sensitivity(
        metric="y",
        method="regression",
        design="latin_hypercube",
        table=table,
        confidence=0.95,
        points=30,
        replicates=2,
        valued=(2, 2),
        left_out=[],
        noise_share=0.02,
        r_squared=0.96,
    )


def test_a_sensitivity_table_refuses_digits_it_would_not_use():
    """``digits=2`` gave the same 4-digit table as no digits, silently."""
    result = regression_indices()
    assert "0.6241" in campaign.table(result)
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.table(result, digits=2)
    assert str(caught.value) == (
        "digits is for query, rank, compare, effects and select tables; a sensitivity "
        "analysis's table has 4 significant digits (csv and json: full precision)"
    )


def test_digits_must_be_a_whole_number_not_a_flag():
    """``digits=True`` wrote every number to 1 significant digit."""
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.table(regression_indices(), digits=True)
    assert str(caught.value) == "digits True: give a whole number from 1 to 15"


def sobol_indices_with_pairs() -> Sensitivity:
    """A small Sobol result of a sample drawn with second-order indices."""
    table = pd.DataFrame({"factor": ["a", "b"], "S1": [0.61234, 0.2], "S1_conf": [0.05, 0.04]})
    table["ST"], table["ST_conf"] = [0.7, 0.3], [0.06, 0.05]
    pairs = pd.DataFrame({"factor": ["a"], "with": ["b"], "S2": [0.0812345], "S2_conf": [0.03]})
    common = dict(confidence=0.95, points=48, replicates=1, valued=(1, 1), left_out=[])
    return Sensitivity(
        "y", "sobol", "saltelli", table, noise_share=0.0, second_order=pairs, **common
    )


def test_a_sensitivity_table_shows_the_second_order_indices_the_command_shows():
    """`campaign sensitivity --second-order` printed the pairs' S2; `campaign.table` had no
    way to, nor to write several metrics as one table."""
    result = sobol_indices_with_pairs()
    assert "0.08123" in campaign.table(result, second_order=True)
    assert "0.08123" not in campaign.table(result)
    lines = campaign.table(result, "csv", second_order=True).splitlines()
    assert lines == [
        "factor,with,S2,S2_conf,noise_share,ci_level,ci_method",
        'a,b,0.0812345,0.03,0.0,0.95,"bootstrap, 1000 resamples (normal)"',
    ]
    other = Sensitivity(**{**result.__dict__, "metric": "z"})
    both = campaign.table([result, other], "csv", second_order=True).splitlines()
    assert [line.split(",")[:2] for line in both] == [["metric", "factor"], ["y", "a"], ["z", "a"]]
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.table(regression_indices(), second_order=True)
    assert str(caught.value) == (
        "second_order: second-order indices need method sobol on a saltelli design drawn with "
        "second_order: true"
    )
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.table(pd.DataFrame(), second_order=True)
    assert str(caught.value).startswith("second_order is for a sensitivity analysis's table")
