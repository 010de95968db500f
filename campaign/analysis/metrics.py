"""Which metrics a command shows: one decision for `run`'s summary, `query`, rankings and the
report, so they agree on the headline metrics and on what is worth showing.

The headline metrics are those the results name (``headline_metrics``, which a run records
from its model); a file made before they were recorded gets those its model declares, when it
can still be loaded. A metric is left out of figures and analyses when it measures nothing: a
digest of an input, or one value everywhere (or none).
"""

from __future__ import annotations

import re

import numpy as np
import xarray as xr

from campaign.errors import BadValue, CampaignError
from campaign.results.assemble import headline_metrics, metrics_of

IDENTIFIER = re.compile(r"digest|checksum|sha-?\d+", re.IGNORECASE)
PER_ENTITY = re.compile(r"_(?!p\d+(_|$))[a-z]+\d+(_|$)")
"""A metric per entity, a name ending in an index (makespan_job3, satisfaction_user2); not a
percentile (wait_p95, a sample's ``<sample>_p<k>``), which sums up every entity."""
VIEWS = ("query", "summary", "ranking", "report", "analysis")
SUMMARY_METRICS = 4  # the run summary's metrics when the results name no headline metric


class NoMetrics(CampaignError):
    """No metric was given and the results have no headline metric to default to."""

    def __init__(self, reason: str, available: list[str]):
        super().__init__(f"no metrics given ({reason}); metrics: {', '.join(available)}")
        self.reason, self.available = reason, available


def choose_metrics(
    dataset: xr.Dataset, view: str, asked: list[str] | None = None, limit: int | None = None
) -> list[str]:
    """The metrics ``view`` shows, ``asked`` (checked) when given, else by default:

    - query: every metric;
    - summary (the table after a run): the headline metrics (without any, the first
      `SUMMARY_METRICS`, all when there are fewer); with ``limit``, that many, the headline
      ones first; per-entity ones (makespan_job3) left out unless there are no others;
    - ranking: the headline metrics (`NoMetrics` without any);
    - report: every metric, the headline ones first;
    - analysis (the report's effects, ranking and comparisons): the headline metrics worth
      showing, else the first metric worth showing.
    """
    if view not in VIEWS:
        raise ValueError(f"view {view!r} is not one of {', '.join(VIEWS)}")
    available = metrics_of(dataset)
    if asked:
        for metric in asked:
            if metric not in available:
                raise BadValue(  # ``asked``: the `metrics` of query, rank, plot and report
                    "metrics", metric, f"is not in the results; metrics: {', '.join(available)}"
                )
        return list(asked)
    if view == "query":
        return available
    headline = [m for m in headline_of(dataset) if m in available]
    if view == "summary":
        overall = [m for m in available if not PER_ENTITY.search(m)] or available
        if limit is None:
            return headline or overall[:SUMMARY_METRICS]
        return (headline + [m for m in overall if m not in headline])[:limit]
    if view == "report":
        return headline + [m for m in available if m not in headline]
    if view == "analysis":
        worth = [m for m in available if m not in left_out_metrics(dataset)]
        return [m for m in headline if m in worth] or worth[:1]
    if not headline:
        named = headline_of(dataset)
        reason = (
            f"the headline metrics {', '.join(named)} are not in the results"
            if named
            else "the results name no headline metrics"
        )
        raise NoMetrics(reason, available)
    return headline


def headline_of(dataset: xr.Dataset) -> list[str]:
    """The headline metrics the results name; for a file made before they were recorded,
    those its model declares (when it can still be loaded)."""
    from campaign.models import load_model

    if "headline_metrics" in dataset.attrs or "model" not in dataset.attrs:
        return headline_metrics(dataset)
    try:
        return list(load_model(str(dataset.attrs["model"])).headline)
    except ValueError:
        return []


def left_out_metrics(dataset: xr.Dataset) -> dict[str, str]:
    """Metrics a figure or an analysis would mislead on, each with the reason: a digest
    identifies an input (its name or long name says so) and measures nothing; a metric with
    one value everywhere (or none) has no variation to show."""
    reasons = {}
    for metric in metrics_of(dataset):
        variable = dataset.variables[metric]  # not dataset[metric]: it looks at every variable
        long_name = str(variable.attrs.get("long_name", ""))
        if IDENTIFIER.search(metric) or IDENTIFIER.search(long_name):
            reasons[metric] = "digest of an input, not a measurement"
            continue
        values = variable.values
        finite = values[np.isfinite(values)]
        if finite.size == 0:
            reasons[metric] = "no value"
        elif finite.min() == finite.max():
            reasons[metric] = f"constant: {finite[0]:.6g} everywhere"
    return reasons
