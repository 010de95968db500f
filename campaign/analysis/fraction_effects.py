"""Main effects of a two-level fraction, each with the effects it is aliased with.

A fraction cannot tell an effect from its aliases: what it estimates for factor a is the sum
of a's effect and of every effect in a's alias chain (a = bd = ce = fg estimates a + bd + ce
+ fg). So each main effect is reported with its chain up to two-factor interactions, as the
results file stores it (``design_aliases``).

The effect of a factor is the classical one: the mean over the runs at its high level
(its second level in the spec) less the mean over the runs at its low level. It is taken
within each replicate that every run finished (a complete replicate) and averaged over
those; its Student-t interval is over the replicates, so tasks sharing a seed (paired
factors) are handled as they are by `campaign compare`: the replicate is the unit.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats as scipy_stats

from campaign.analysis.unfinished import carried
from campaign.design.points import POINT
from campaign.errors import CampaignError
from campaign.results.status import STATUS_OK


def is_fraction(dataset: xr.Dataset) -> bool:
    return dataset.attrs.get("design") == "fractional"


def alias_chains(dataset: xr.Dataset) -> dict[str, list[str]]:
    """Per effect heading a chain of ``design_aliases``, the effects aliased with it."""
    chains = {}
    for line in str(dataset.attrs.get("design_aliases", "")).split(";"):
        words = [word.strip() for word in line.split(" = ") if word.strip()]
        if words:
            chains[words[0]] = words[1:]
    return chains


def fraction_effects(
    dataset: xr.Dataset, metric: str, confidence: float | None = None
) -> xr.Dataset:
    """Each factor's main effect (high - low), its interval over complete replicates and its
    aliases, one row per factor on dimension ``term``."""
    confidence = float(confidence or dataset.attrs.get("confidence", 0.95))
    factors = str(dataset.attrs.get("factors", "")).split()
    values = dataset[metric].where(dataset["status"] == STATUS_OK).transpose(POINT, "replicate")
    values = values.values.astype(float)
    complete = np.isfinite(values).all(axis=0)
    left_out = int((~complete).sum())
    values = values[:, complete]
    n = values.shape[1]
    if n == 0:
        raise CampaignError(
            f"{metric}: no replicate in which every run of the fraction has a value; main "
            "effects need every run of at least one replicate"
        )
    chains = alias_chains(dataset)
    rows = []
    for factor in factors:
        coordinate = dataset[factor]
        levels = json.loads(coordinate.attrs["levels"])
        # by value, not by text: an integer level beside a float one is stored as a float
        # (levels [0.5, 2] lie along the points as 0.5 and 2.0)
        high = np.asarray(coordinate.values == levels[1], dtype=bool)
        per_replicate = values[high].mean(axis=0) - values[~high].mean(axis=0)
        effect = float(per_replicate.mean())
        half = p_value = np.nan
        if n >= 2:
            error = float(per_replicate.std(ddof=1)) / np.sqrt(n)
            half = float(scipy_stats.t.ppf(0.5 + confidence / 2, n - 1)) * error
            if error > 0:
                p_value = float(2 * scipy_stats.t.sf(abs(effect) / error, n - 1))
            elif effect != 0:
                p_value = 0.0
        rows.append(
            {
                "term": factor,
                "low": str(levels[0]),
                "high": str(levels[1]),
                "effect": effect,
                "half_width": half,
                "ci_low": effect - half,
                "ci_high": effect + half,
                "p_value": p_value,
                "n": n,
                "aliases": " ".join(chains.get(factor, [])),
            }
        )
    frame = pd.DataFrame(rows)
    out = xr.Dataset(
        {name: ("term", frame[name].to_numpy()) for name in frame.columns if name != "term"},
        coords={"term": frame["term"].to_numpy().astype(str)},
    )
    units = dataset[metric].attrs.get("units")
    out.attrs = {
        "analysis": "effects",  # what `campaign.table` writes it as
        "metric": metric,
        "design": "fractional",
        "design_title": dataset.attrs.get("design_title", ""),
        "design_defining_relation": dataset.attrs.get("design_defining_relation", ""),
        "confidence": confidence,
        "replicates": n,
        "left_out": left_out,
        **({"units": units} if units else {}),
        **carried(dataset),
    }
    return out
