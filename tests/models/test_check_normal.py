"""The normal check model: known means and deviations per system, and a share of variance
common to the systems run with one seed (what paired seeds give a selection)."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.check import NORMAL, normal

PARAMS = {"means": [0.0, 5.0], "sds": [1.0, 2.0]}


def draws(system, correlation, seeds=range(4000)):
    params = {**PARAMS, "system": system, "correlation": correlation}
    return np.array([normal(params, seed)["value"] for seed in seeds])


def test_each_system_has_its_mean_and_deviation():
    values = draws(1, 0.5)
    assert values.mean() == pytest.approx(5.0, abs=0.1)
    assert values.std(ddof=1) == pytest.approx(2.0, rel=0.05)


def test_one_seed_correlates_the_systems_by_the_common_share():
    assert np.allclose(draws(0, 1.0), (draws(1, 1.0) - 5) / 2, rtol=0, atol=1e-12)
    assert np.corrcoef(draws(0, 0.8), draws(1, 0.8))[0, 1] == pytest.approx(0.8, abs=0.03)
    assert abs(np.corrcoef(draws(0, 0.0), draws(1, 0.0))[0, 1]) < 0.05


def test_bad_params_name_the_parameter():
    with pytest.raises(ValueError, match="'means' and 'sds' must list one value per system"):
        NORMAL.check({"system": 0, "means": [0.0, 1.0], "sds": [1.0]})
    with pytest.raises(ValueError, match="parameter 'system' must be from 0 to 1"):
        NORMAL.check({**PARAMS, "system": 2})
    with pytest.raises(ValueError, match="parameter 'correlation' must be a number in"):
        NORMAL.check({**PARAMS, "system": 0, "correlation": 1.5})
