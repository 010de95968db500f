"""Which factors matter: an analysis of variance of one metric over the replicates.

Terms are every factor's main effect and every two-factor interaction (effect-coded), each
with its sum of squares, its share of the total sum of squares (eta squared, in %), and an
F test. Sums of squares are of type II (each term adjusted for every term that does not
contain it), so unequal replicate counts (a precision target) are handled; with equal
counts they are the classical ones. Whatever the terms leave of the cell means is reported
as "higher-order interactions".

The replicates are the error. Without a paired factor every task has a seed of its own and
the error is the variation within cells. With paired factors, tasks that share a seed (one
replicate of the unpaired levels, across the paired levels) form a block: a split-plot
analysis then tests terms of unpaired factors against the variation between blocks
("replicates (shared seeds)"), and terms that involve a paired factor against the variation
left within blocks, where the shared random inputs cancel. A breakdown's dimension
(`campaign.analysis.breakdown.as_factor`) is paired: a task's values along it share its seed,
so they lie in the task's block.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import xarray as xr
from scipy import sparse
from scipy import stats as scipy_stats
from scipy.sparse.csgraph import connected_components

from campaign.analysis.breakdown import BREAKDOWN
from campaign.analysis.fraction_effects import fraction_effects, is_fraction
from campaign.analysis.query import parse_where, select
from campaign.analysis.unfinished import ROUNDS, carried, not_run
from campaign.errors import CampaignError, ParameterError
from campaign.results.assemble import factors_of, metrics_of
from campaign.results.status import STATUS_FAILED, STATUS_OK

HIGHER = "higher-order interactions"
BLOCKS = "replicates (shared seeds)"
RESIDUAL = "residual"


def effects(dataset: xr.Dataset, metric: str, where: list[str] | None = None) -> xr.Dataset:
    """The analysis of variance of ``metric``: one row per term on dimension ``term``.

    On a two-level fraction: each factor's main effect with its aliases instead
    (`campaign.analysis.fraction_effects`), as a fraction cannot separate the terms of an analysis
    of variance from their aliases."""
    metrics = metrics_of(dataset)
    if metric not in metrics:
        raise ParameterError(
            f"{{metric}} {metric!r} is not in the results; metrics: {', '.join(metrics)}", "metric"
        )
    if is_fraction(dataset):
        if where:
            raise ParameterError(
                "{where} selects levels of a crossed factor; a fraction's factors vary "
                "together over its runs: leave {where} out",
                "where",
            )
        return fraction_effects(dataset, metric)
    selected = select(dataset, parse_where(dataset, where or []))
    values = selected[metric].values
    keep = (selected["status"].values == STATUS_OK) & np.isfinite(values)
    all_factors = factors_of(dataset)
    index = np.nonzero(keep)
    # a factor varied only where values exist: one whose other levels never ran is no term
    factors = [f for f in all_factors if np.unique(index[all_factors.index(f)]).size > 1]
    if keep.sum() < 2 or not factors:
        raise CampaignError(
            f"{metric}: nothing to analyse (needs finished values in cells of at least one factor "
            "with two levels or more)"
        )
    levels = {f: index[all_factors.index(f)] for f in factors}
    y = values[keep].astype(float)
    cells = _group_ids(np.stack([index[i] for i in range(len(all_factors))], axis=1))
    paired = [f for f in str(dataset.attrs.get("paired", "")).split() if f in factors]
    blocks = _group_ids(selected["seed"].values[keep][:, None]) if paired else None
    if blocks is not None and blocks.max() + 1 == y.size:
        blocks = None  # no two tasks share a seed: nothing to block on
    table = _anova(y, levels, factors, cells, blocks, paired)
    out = _as_dataset(
        table, selected, metric, factors, levels, y, paired if blocks is not None else []
    )
    if dataset.attrs.get(BREAKDOWN) in out.attrs["paired"].split():
        out.attrs[BREAKDOWN] = dataset.attrs[BREAKDOWN]  # says what forms the blocks
    rounds = [name for name in ROUNDS if name in selected.variables]
    missing = not_run(selected, rounds).values
    out.attrs.update(_left_out(selected["status"].values, values, missing), **carried(dataset))
    return out


def _left_out(status: np.ndarray, values: np.ndarray, missing: np.ndarray) -> dict[str, int]:
    """The values the analysis leaves out, by why: of failed tasks, of tasks not run yet
    (``missing``: among those their cells plan), finished but infinite (+inf or -inf),
    finished but NaN (undefined, or not returned)."""
    status = np.broadcast_to(status, values.shape)
    finished = status == STATUS_OK
    return {
        "left_out_failed": int(np.count_nonzero(status == STATUS_FAILED)),
        "left_out_missing": int(np.count_nonzero(np.broadcast_to(missing, values.shape))),
        "left_out_infinite": int(np.count_nonzero(finished & np.isinf(values))),
        "left_out_nan": int(np.count_nonzero(finished & np.isnan(values))),
    }


def _group_ids(columns: np.ndarray) -> np.ndarray:
    """0..k-1 for the distinct rows of ``columns``."""
    _, ids = np.unique(columns, axis=0, return_inverse=True)
    return ids.ravel()


def _coding(ids: np.ndarray) -> np.ndarray:
    """Sum-to-zero (effect) coding of a factor's level ids: L-1 columns."""
    present, ids = np.unique(ids, return_inverse=True)
    count = present.size
    columns = np.zeros((ids.size, count - 1))
    for level in range(count - 1):
        columns[ids == level, level] = 1.0
    columns[ids == count - 1, :] = -1.0
    return columns


class _Gram:
    """Least-squares fits of y on subsets of column blocks, from X'X and X'y computed once."""

    def __init__(self, y: np.ndarray, blocks: dict[str, np.ndarray]):
        self.names = list(blocks)
        matrix = np.concatenate([blocks[name] for name in self.names], axis=1)
        sizes = [blocks[name].shape[1] for name in self.names]
        edges = np.cumsum([0, *sizes])
        self.columns = {
            name: np.arange(edges[i], edges[i + 1]) for i, name in enumerate(self.names)
        }
        self.gram = matrix.T @ matrix
        self.moment = matrix.T @ y
        self.total = float(y @ y)

    def fit(self, names) -> tuple[float, int]:
        """Residual sum of squares and rank of the fit on the named blocks."""
        picked = np.concatenate([self.columns[name] for name in names]) if names else []
        if not len(picked):
            return self.total, 0
        gram = self.gram[np.ix_(picked, picked)]
        moment = self.moment[picked]
        values, vectors = np.linalg.eigh(gram)
        tolerance = values.max(initial=0.0) * len(picked) * np.finfo(float).eps * 10
        kept = values > tolerance
        projected = vectors[:, kept].T @ moment
        explained = float(np.sum(projected**2 / values[kept]))
        return max(self.total - explained, 0.0), int(kept.sum())


def _term_columns(levels: dict[str, np.ndarray], factors: list[str]) -> dict[str, np.ndarray]:
    coded = {f: _coding(levels[f]) for f in factors}
    terms = dict(coded)
    for a, b in itertools.combinations(factors, 2):
        terms[f"{a}:{b}"] = np.einsum("ni,nj->nij", coded[a], coded[b]).reshape(len(coded[a]), -1)
    return terms


def _contains(term: str, inner: str) -> bool:
    return set(inner.split(":")) <= set(term.split(":"))


def _type2(
    gram: _Gram, terms: list[str], base: list[str], targets: list[str] | None = None
) -> dict[str, tuple[float, int]]:
    """Type II sum of squares and degrees of freedom of each target term (default: all)."""
    out = {}
    for term in terms if targets is None else targets:
        others = [t for t in terms if not _contains(t, term)]
        rss_without, rank_without = gram.fit([*base, *others])
        rss_with, rank_with = gram.fit([*base, *others, term])
        out[term] = (max(rss_without - rss_with, 0.0), rank_with - rank_without)
    return out


def _demean(matrix: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each column minus its mean within the groups (one fixed effect absorbed exactly)."""
    counts = np.bincount(groups)
    if matrix.ndim == 1:
        return matrix - (np.bincount(groups, weights=matrix) / counts)[groups]
    sums = np.zeros((counts.size, matrix.shape[1]))
    np.add.at(sums, groups, matrix)
    return matrix - (sums / counts[:, None])[groups]


def _two_way_rss(y: np.ndarray, cells: np.ndarray, blocks: np.ndarray) -> tuple[float, int]:
    """Residual sum of squares of y on cell and block effects together (alternating
    projections, exact at convergence) and the rank of that fit."""
    residual = y - y.mean()
    for _ in range(10_000):
        before = residual
        residual = _demean(_demean(residual, cells), blocks)
        if np.max(np.abs(residual - before)) <= 1e-13 * max(1.0, np.max(np.abs(y))):
            break
    n_cells, n_blocks = cells.max() + 1, blocks.max() + 1
    graph = sparse.coo_matrix(
        (np.ones(y.size), (cells, n_cells + blocks)), shape=(n_cells + n_blocks,) * 2
    )
    components, _ = connected_components(graph, directed=False)
    return float(residual @ residual), int(n_cells + n_blocks - components)


def _anova(y, levels, factors, cells, blocks, paired) -> list[dict]:
    terms_columns = _term_columns(levels, factors)
    terms = list(terms_columns)
    total = float(np.sum((y - y.mean()) ** 2))
    n_cells = int(cells.max() + 1)
    within = float(np.sum(_demean(y, cells) ** 2))
    within_df = y.size - n_cells
    # every fit holds the intercept: y less its mean gives the same sums of squares, and
    # keeps their digits when the values lie far from 0 (1e9 s: y'y swamps the effects)
    gram = _Gram(y - y.mean(), {"intercept": np.ones((y.size, 1)), **terms_columns})
    full_rss, full_rank = gram.fit(["intercept", *terms])
    rows = []
    if blocks is None:
        for term, (ss, df) in _type2(gram, terms, ["intercept"]).items():
            rows.append(_row(term, ss, df, total, within, within_df, RESIDUAL))
        higher_df = n_cells - full_rank
        if higher_df > 0:
            rows.append(
                _row(HIGHER, full_rss - within, higher_df, total, within, within_df, RESIDUAL)
            )
        rows.append(_row(RESIDUAL, within, within_df, total))
        return rows
    inner_rss, inner_rank = _two_way_rss(y, cells, blocks)
    between, between_df = within - inner_rss, inner_rank - n_cells
    inner_df = y.size - inner_rank
    whole = [t for t in terms if not any(f in paired for f in t.split(":"))]
    split = [t for t in terms if t not in whole]
    for term, (ss, df) in _type2(gram, terms, ["intercept"], whole).items():
        rows.append(_row(term, ss, df, total, between, between_df, BLOCKS))
    demeaned = _Gram(_demean(y, blocks), {t: _demean(terms_columns[t], blocks) for t in terms})
    for term, (ss, df) in _type2(demeaned, terms, [], split).items():
        rows.append(_row(term, ss, df, total, inner_rss, inner_df, RESIDUAL))
    higher_df = n_cells - full_rank
    if higher_df > 0:
        rows.append(_row(HIGHER, full_rss - within, higher_df, total))
    rows.append(_row(BLOCKS, between, between_df, total))
    rows.append(_row(RESIDUAL, inner_rss, inner_df, total))
    return rows


def _row(term, ss, df, total, error=None, error_df=None, error_name="") -> dict:
    row = {
        "term": term,
        "df": int(df),
        "sum_sq": ss,
        "share": 100.0 * ss / total if total > 0 else np.nan,
        "F": np.nan,
        "p_value": np.nan,
        "tested_against": error_name,
    }
    if error is not None and df > 0 and error_df and error_df > 0:
        if error > 0:
            row["F"] = (ss / df) / (error / error_df)
            row["p_value"] = float(scipy_stats.f.sf(row["F"], df, error_df))
        elif ss > 0:  # no error at all (deterministic replicates): any effect is certain
            row["F"], row["p_value"] = np.inf, 0.0
    return row


def _as_dataset(rows, selected, metric, factors, levels, y, paired) -> xr.Dataset:
    frame = pd.DataFrame(rows)
    ranked = frame["term"].isin([t for t in frame["term"] if t not in (HIGHER, BLOCKS, RESIDUAL)])
    order = frame[ranked].sort_values("share", ascending=False, kind="stable").index
    frame["rank"] = 0
    frame.loc[order, "rank"] = np.arange(1, len(order) + 1)
    frame = pd.concat([frame.loc[order], frame[~ranked]])
    out = xr.Dataset(
        {name: ("term", frame[name].to_numpy()) for name in frame.columns if name != "term"},
        coords={"term": frame["term"].to_numpy().astype(str)},
    )
    out["share"].attrs = {"units": "%", "long_name": "share of the total sum of squares"}
    out["sum_sq"].attrs = {"long_name": "type II sum of squares"}
    units = selected[metric].attrs.get("units")
    out.attrs = {
        "analysis": "effects",  # what `campaign.table` writes it as
        "metric": metric,
        "observations": int(y.size),
        "factors": " ".join(factors),
        "paired": " ".join(paired),
        "total_sum_sq": float(np.sum((y - y.mean()) ** 2)),
        "main_effects": json.dumps(_main_effects(selected, metric, factors)),
        **({"units": units} if units else {}),
    }
    return out


def _main_effects(selected: xr.Dataset, metric: str, factors: list[str]) -> dict:
    """Per factor and level: its mean over the cells of the other factors (every cell weighs
    the same, whatever its replicates) minus the mean of all cells."""
    values = selected[metric]
    ok = values.where((selected["status"] == STATUS_OK) & np.isfinite(values))  # as analysed
    cell_means = ok.mean("replicate")
    grand = float(cell_means.mean())
    return {
        factor: {
            str(level): float(value) - grand
            for level, value in zip(
                cell_means[factor].values,
                cell_means.mean([f for f in cell_means.dims if f != factor]).values,
            )
        }
        for factor in factors
    }


def effects_table(result: xr.Dataset) -> pd.DataFrame:
    frame = result.to_dataframe().reset_index()
    return frame[["rank", "term", "df", "sum_sq", "share", "F", "p_value", "tested_against"]]
