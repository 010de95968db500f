"""A sample's pooled CDF on the levels `where` keeps of a boolean factor: each level by its
value, never a list of booleans taken for a mask. Checked against the CDF computed here from
the stored quantiles of the tasks kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import campaign
from campaign.analysis.distributions import cell_cdfs
from campaign.cli.main import main
from tests.analysis.small_campaigns import small_campaign

SPEC = """
name: bo
model: small_models:waits
factors: {slow: [false, true], k: [1, 2]}
replicates: 4
seed: 5
output: out
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory, scheduler_address) -> Path:
    return small_campaign(tmp_path_factory, scheduler_address, "boolean-samples", SPEC)


def stored_cdf(results: Path, k: int, slow: list[bool]) -> tuple[np.ndarray, np.ndarray]:
    """The CDF of the tasks of ``k`` at the levels ``slow``: a task's CDF at x is the largest
    whole percentile whose stored quantile is at most x, weighed by its sample's size."""
    samples = campaign.open_samples(results)
    tasks = [
        (samples["wait"].sel(k=k, slow=level, replicate=r).values,
         float(samples["wait_count"].sel(k=k, slow=level, replicate=r)))
        for level in slow for r in samples["replicate"].values
    ]  # fmt: skip
    x = np.unique(np.concatenate([quantiles for quantiles, _ in tasks]))
    grid = np.linspace(0, 1, tasks[0][0].size)
    total = np.zeros(x.size)
    for quantiles, count in tasks:
        for i, value in enumerate(x):
            below = grid[quantiles <= value]
            total[i] += count * (below.max() if below.size else 0.0)
    return x, total / sum(count for _, count in tasks)


def test_where_both_levels_of_a_boolean_factor_pools_both(results):
    samples = campaign.open_samples(results)
    both = cell_cdfs(samples, "wait", by=["k"], where={"slow": [False, True]})
    for k in (1, 2):
        x, cdf = stored_cdf(results, k, [False, True])
        np.testing.assert_allclose(both[(k,)][0], x, rtol=0, atol=0)
        np.testing.assert_allclose(both[(k,)][1], cdf, rtol=1e-12)
        slow = stored_cdf(results, k, [True])
        assert both[(k,)][0].size == 2 * slow[0].size  # not the slow level's alone
    false_only = cell_cdfs(samples, "wait", by=["k"], where={"slow": [False]})
    for k in (1, 2):
        np.testing.assert_allclose(false_only[(k,)][1], stored_cdf(results, k, [False])[1])
    with pytest.raises(ValueError, match="3 is not a level of k; levels: 1, 2"):
        cell_cdfs(samples, "wait", by=["slow"], where={"k": [3]})


def test_an_ecdf_where_a_boolean_factor_is_false_draws_that_levels_tasks(results, tmp_path):
    out = tmp_path / "e.png"
    args = ["plot", str(results), "--metric", "wait", "--kind", "ecdf", "--by", "k"]
    assert main([*args, "--where", "slow=false", "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000
    for where, levels in (("slow=false", [False]), ("slow=false,true", [False, True])):
        # pooled over both levels of slow: no panel per level (facet=False)
        figure = campaign.plot(results, "wait", kind="ecdf", by="k", where=[where], facet=False)
        lines = {line.get_label(): line for line in figure.axes[0].lines}
        assert sorted(lines) == ["1", "2"]
        for k in (1, 2):
            x, cdf = stored_cdf(results, k, levels)
            np.testing.assert_array_equal(lines[str(k)].get_xdata(), x)
            np.testing.assert_allclose(lines[str(k)].get_ydata(), cdf, rtol=1e-12)
