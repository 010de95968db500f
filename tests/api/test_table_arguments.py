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
