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

from campaign.design.points import POINT
from campaign.errors import CampaignError
from campaign.render.cells import one_line, to_csv
from campaign.results.assemble import STATUS_OK


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
        high = np.array([str(v) == str(levels[1]) for v in coordinate.values])
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
        "metric": metric,
        "design": "fractional",
        "design_title": dataset.attrs.get("design_title", ""),
        "design_defining_relation": dataset.attrs.get("design_defining_relation", ""),
        "confidence": confidence,
        "replicates": n,
        "left_out": left_out,
        **({"units": units} if units else {}),
    }
    return out


COLUMNS = ["term", "low", "high", "effect", "ci_low", "ci_high", "p_value", "n", "aliases"]


def format_fraction_effects(result: xr.Dataset, fmt: str = "table") -> str:
    frame = result.to_dataframe().reset_index()[COLUMNS].rename(columns={"term": "factor"})
    if fmt == "csv":
        return to_csv(frame).rstrip("\n")
    if fmt == "json":
        records = frame.astype(object).where(frame.notna(), None).to_dict("records")
        return json.dumps(records, indent=2)
    if fmt != "table":
        raise CampaignError(f"--format {fmt!r} is not allowed; use table, csv or json")
    attrs = result.attrs
    units = f" [{attrs['units']}]" if attrs.get("units") else ""
    level = f"{100 * attrs['confidence']:g}%"
    lines = [
        f"{attrs['metric']}: main effects{units} on the {attrs['design_title']} (mean at the "
        f"high level - mean at the low level, within each of {attrs['replicates']} complete "
        f"replicates; {level} interval over them)",
        f"defining relation: {attrs['design_defining_relation']}",
    ]
    if attrs.get("left_out"):
        lines.append(
            f"{attrs['left_out']} replicates left out: some run of the fraction has no value "
            "in them"
        )
    header = ["factor", "low", "high", "effect", "interval", "p", "aliased with (up to 2FI)"]
    rows = []
    for row in frame.itertuples(index=False):
        interval = "" if np.isnan(row.ci_low) else f"[{row.ci_low:.4g}, {row.ci_high:.4g}]"
        p = (
            ""
            if np.isnan(row.p_value)
            else ("<1e-16" if row.p_value < 1e-16 else f"{row.p_value:.3g}")
        )
        aliases = ", ".join(row.aliases.split()) or "none"
        low, high = one_line(row.low), one_line(row.high)
        rows.append([row.factor, low, high, f"{row.effect:+.4g}", interval, p, aliases])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        cells = [
            c.rjust(w) if i in (3, 5) else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    aliased = [row for row in rows if row[-1] != "none"]
    if aliased:
        lines.append(
            "each effect estimates the sum of the effects aliased with it: "
            + "; ".join(_sum(row[0], row[-1].split(", ")) for row in aliased[:3])
            + ("; ..." if len(aliased) > 3 else "")
        )
    return "\n".join(lines)


def _sum(effect: str, aliases: list[str]) -> str:
    """``a + bd - ce``: an effect and its signed aliases as the sum a fraction estimates."""
    terms = [f"- {w[1:]}" if w.startswith("-") else f"+ {w}" for w in aliases]
    return " ".join([effect, *terms])
