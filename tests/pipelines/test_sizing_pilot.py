"""`plan --estimate` (`campaign.estimate`) on a campaign already run: its pilot's tasks are
stored, and results.nc is written again as it was, at its own confidence level."""

from __future__ import annotations

import numpy as np
from scipy import stats

import campaign
from tests.conftest import MM1_TWO_LOADS


def test_sizing_a_finished_campaign_keeps_the_confidence_level_of_its_results(
    tmp_path, scheduler_address
):
    spec = tmp_path / "spec.yaml"
    spec.write_text(MM1_TWO_LOADS)  # 2 arrival rates, 4 replicates
    campaign.run(spec, scheduler=scheduler_address, progress=False, confidence=0.9)
    campaign.estimate(spec, replicates=2, scheduler=scheduler_address)
    results = campaign.open_results(tmp_path / "out")
    assert results.attrs["confidence"] == 0.9  # not the 0.95 of a run given no level
    waits = results["mean_wait"].values  # arrival rate x replicate
    half = stats.t.ppf(0.95, 3) * waits.std(axis=1, ddof=1) / np.sqrt(4)  # 90 %: t(0.95, 3)
    shown = (results["mean_wait_ci_high"] - results["mean_wait_ci_low"]).values / 2
    assert np.allclose(shown, half, rtol=1e-12, atol=0)
