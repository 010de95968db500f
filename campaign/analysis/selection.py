"""Ranking and selection, stage by stage, decided from stored results alone.

A group's systems (the levels of the ``among`` factor at one combination of the others, or
every cell) first run ``first`` replicates each; whenever every replicate a stage gave the
systems still in contention has finished, the procedure decides from exactly those
replicates which systems are eliminated and how many replicates the others get next, until
one system is selected. A decision never looks beyond the replicates of the stage it closes,
so the same stored results give the same decisions whatever order tasks ran in, wherever a
run was interrupted and however many workers ran it (`campaign.plan.selection` replays this
after every stage; `campaign select` replays it from results.nc).

Why checking the elimination rule only at stage ends keeps KN's guarantee: KN bounds the
chance that a system at least delta worse than the best eliminates it by the chance that a
Brownian motion with drift leaves Fabian's triangular continuation region on the wrong side;
by a result of Jennison, Johnston & Turnbull (1982), the one Kim & Nelson use for a process
seen at discrete times, observing it at any increasing sequence of times, not every one,
exits the same triangle on the wrong side with no greater probability (see Kim & Nelson
2006, "Selecting the best system", Handbooks in OR & MS 13, ch. 17, and Luo, Hong, Nelson &
Wu 2015, Operations Research 63(5):1177-1194, who screen at batch ends on parallel
processors for this reason). Past the triangle's end (W = 0) the
sign of the difference decides, as at its apex. The stage ends here are r = n0, n0 + batch,
..., the same for every system in contention. GSP screens at the end of its rounds by
design (Ni et al. 2017), and OCBA allocates a budget in increments (Chen & Lee 2011).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from campaign.analysis import selection_rules as rules
from campaign.spec.types import Selection

PROCEDURES = {  # each procedure's name and source
    "kn": "KN, Kim & Nelson 2001",
    "kn++": "KN++, Kim & Nelson 2006",
    "ocba": "OCBA, Chen & Lee 2011",
    "gsp": "GSP, Ni, Ciocan, Henderson & Hunter 2017",
}
STATES = {"running": 0, "selected": 1, "eliminated": 2, "waiting": 3, "not_selected": 4}
ENDINGS = {
    "one left": "every other system eliminated",
    "final stage": "best mean after GSP's final (Rinott) stage",
    "budget spent": "best mean once OCBA's budget was spent",
    "max_replicates": "best mean at max_replicates, before the procedure could decide: "
    "the guarantee does not hold",
}


@dataclass(frozen=True)
class SelectionRule:
    """A selection procedure's settings, as `campaign.spec.types.Selection` holds them, with
    ``most`` the replicates a system may get at most."""

    procedure: str
    goal: str
    indifference: float
    relative: bool = False
    pcs: float = 0.95
    first: int = 10
    batch: int = 5
    budget: int | None = None
    most: int = 1000
    rounds: int = 10
    common: bool = False  # the systems of a group share seeds (paired)

    @property
    def alpha(self) -> float:
        return 1 - self.pcs

    @classmethod
    def of(cls, selection: Selection, common: bool) -> SelectionRule:
        """The settings of a spec's ``select:`` block; ``common``: its systems share seeds
        (see `systems_share_seeds`)."""
        return cls(
            procedure=selection.procedure,
            goal=selection.goal,
            indifference=selection.indifference,
            relative=selection.relative,
            pcs=selection.pcs,
            first=selection.first,
            batch=selection.batch,
            budget=selection.budget,
            most=selection.max_replicates,
            rounds=selection.rounds,
            common=common,
        )


@dataclass
class GroupSelection:
    """Where one group stands: per system its replicates so far, its `STATES` code, the stage
    that selected or eliminated it (-1: neither) and its mean at that stage (over all its
    replicates while it runs); for the group the stages decided, the selected system (-1
    until then), how it ended (an `ENDINGS` key, "" while it runs), the indifference zone in
    the metric's units, the tasks Rinott's two-stage procedure needs for the same guarantee
    (from the first stage) and, for OCBA, its approximate PCS."""

    replicates: np.ndarray
    state: np.ndarray
    stage: np.ndarray
    means: np.ndarray
    stages: int = 0
    selected: int = -1
    ending: str = ""
    delta: float = float("nan")
    rinott: int = 0
    apcs: float = float("nan")
    memory: dict = field(default_factory=dict, repr=False)  # a procedure's first-stage numbers

    @property
    def alive(self) -> np.ndarray:
        return (self.state == STATES["running"]) | (self.state == STATES["waiting"])

    @property
    def tasks(self) -> int:
        return int(self.replicates.sum())

    def eliminate(self, systems: np.ndarray, means: np.ndarray) -> None:
        self.state[systems] = STATES["eliminated"]
        self.stage[systems] = self.stages
        self.means[systems] = means

    def end(self, ending: str, systems: np.ndarray, means: np.ndarray) -> None:
        """Select the best of ``systems`` by ``means`` (the larger is better)."""
        self.means[systems] = means
        self.selected = int(systems[int(np.argmax(means))])
        alive = self.alive
        self.state[alive] = STATES["not_selected"]
        self.stage[alive] = self.stages
        self.state[self.selected] = STATES["selected"]
        self.ending = ending


def select_group(
    values: np.ndarray, finished: np.ndarray, failed: np.ndarray, rule: SelectionRule
) -> GroupSelection:
    """Replay ``rule`` over one group's stored results (systems x replicates: the metric's
    values, NaN where none; ``finished``: a task has a result, ok or failed; ``failed``: it
    failed). A failed task among a stage's replicates holds the group's next decision
    (state waiting) until a rerun retries it; so does a finished task's NaN (undefined) or
    infinite value, which no procedure's mean or variance can take."""
    sign = 1.0 if rule.goal == "max" else -1.0
    x = sign * np.asarray(values, dtype=float)
    failed = np.asarray(failed, dtype=bool) | (finished & ~np.isfinite(x))
    k, width = x.shape
    group = GroupSelection(
        replicates=np.full(k, min(rule.first, rule.most), dtype=np.int64),
        state=np.zeros(k, dtype=np.int8),
        stage=np.full(k, -1, dtype=np.int64),
        means=np.full(k, np.nan),
    )
    decide = DECISIONS[rule.procedure]
    columns = np.arange(width)
    while not group.ending:
        window = (columns < group.replicates[:, None]) & group.alive[:, None]
        if (window & ~finished).any() or (group.replicates[group.alive] > width).any():
            break  # a stage not finished (or not even held by these arrays)
        if (window & failed).any():
            group.state[group.alive] = STATES["waiting"]
            break
        if group.stages == 0:
            start(x, group, rule)
        decide(x, group, rule)
        group.stages += 1
    if not group.ending:
        for system in np.flatnonzero(group.alive):
            ok = finished[system] & ~failed[system] & (columns < group.replicates[system])
            group.means[system] = x[system, ok].mean() if ok.any() else np.nan
    group.means *= sign
    return group


def start(x: np.ndarray, group: GroupSelection, rule: SelectionRule) -> None:
    """What the first stage fixes: the indifference zone in metric units (a share of the best
    first-stage mean's size when relative) and Rinott's count for the same guarantee."""
    n0 = int(group.replicates[0])
    first = x[:, :n0]
    means, std = first.mean(axis=1), first.std(axis=1, ddof=1)
    delta = rule.indifference
    if rule.relative:
        scale = abs(float(means.max())) or float(np.abs(means).max())
        delta = rule.indifference * scale if scale > 0 else rule.indifference
    group.delta = delta
    h = rules.rinott_h(x.shape[0], rule.pcs, n0 - 1)
    group.rinott = int(rules.rinott_count(h, std, delta, n0).sum())
    group.memory.update(n0=n0, std=std, first=first)


def decide_kn(x: np.ndarray, group: GroupSelection, rule: SelectionRule) -> None:
    """KN (variances of differences from the first stage) or KN++ (updated at every stage):
    screen the systems in contention, then give each ``batch`` more replicates."""
    ids = np.flatnonzero(group.alive)
    r = int(group.replicates[ids[0]])
    k, n0 = x.shape[0], group.memory["n0"]
    data = x[ids, :r]
    means = data.mean(axis=1)
    if rule.procedure == "kn":
        variances = rules.paired_variances(group.memory["first"][ids])
        h2 = rules.kn_h2(k, rule.alpha, n0)
    else:
        variances = rules.paired_variances(data)
        h2 = rules.knpp_h2(k, rule.alpha, r - 1, rule.common)
    out = rules.kn_eliminated(means, rules.kn_allowance(h2, variances, group.delta, r))
    group.eliminate(ids[out], means[out])
    ids, means = ids[~out], means[~out]
    if ids.size == 1:
        group.end("one left", ids, means)
    elif r >= rule.most:
        group.end("max_replicates", ids, means)
    else:
        group.replicates[ids] = min(r + rule.batch, rule.most)


def decide_gsp(x: np.ndarray, group: GroupSelection, rule: SelectionRule) -> None:
    """GSP: screen after the first stage and after each of ``rounds`` rounds of a batch per
    system (sized to its first-stage deviation), then a final Rinott stage for those left,
    with half the error allowance each (alpha1 = alpha2 = alpha / 2)."""
    k, n1 = x.shape[0], group.memory["n0"]
    memory = group.memory
    if group.stages == 0:
        memory["batches"] = rules.gsp_batches(memory["std"], rule.batch)
        memory["most"] = np.minimum(n1 + rule.rounds * memory["batches"], rule.most)
    ids = np.flatnonzero(group.alive)
    means = window_moments(x[ids], group.replicates[ids])[0]
    if group.stages > rule.rounds:  # the final stage has run
        capped = memory.get("capped", False)
        group.end("max_replicates" if capped else "final stage", ids, means)
        return
    variances = memory["std"][ids] ** 2
    out = rules.gsp_eliminated(
        means,
        variances,
        group.replicates[ids],
        memory["most"][ids],
        cached_gsp_eta(k, rule.alpha / 2, n1),
        n1,
    )
    group.eliminate(ids[out], means[out])
    ids, means = ids[~out], means[~out]
    if ids.size == 1:
        group.end("one left", ids, means)
    elif group.stages < rule.rounds:
        batches = memory["batches"][ids]
        group.replicates[ids] = np.minimum(n1 + (group.stages + 1) * batches, rule.most)
    else:
        h = rules.rinott_h(k, 1 - rule.alpha / 2, n1 - 1)
        need = np.maximum(rules.rinott_count(h, memory["std"][ids], group.delta, n1), 0)
        final = np.maximum(group.replicates[ids], need)
        memory["capped"] = bool((final > rule.most).any())
        group.replicates[ids] = np.minimum(final, rule.most)


@lru_cache(maxsize=128)
def cached_gsp_eta(k: int, alpha1: float, n1: int) -> float:
    return rules.gsp_eta(k, alpha1, n1)


def decide_ocba(x: np.ndarray, group: GroupSelection, rule: SelectionRule) -> None:
    """OCBA: ``batch`` x systems more replicates a stage, split by OCBA's ratios, until the
    group has spent ``budget`` tasks (or every system reached max_replicates); then the best
    sample mean."""
    k = x.shape[0]
    ids = np.arange(k)
    means, variances = window_moments(x, group.replicates)
    budget = min(rule.budget or 0, k * rule.most)
    spent = group.tasks
    if spent >= budget:
        group.apcs = rules.approximate_pcs(means, variances, group.replicates)
        group.end("budget spent", ids, means)
        return
    more = rules.ocba_allocation(
        means, variances, group.replicates, min(rule.batch * k, budget - spent)
    )
    following = np.minimum(group.replicates + more, rule.most)
    if (following == group.replicates).all():
        group.apcs = rules.approximate_pcs(means, variances, group.replicates)
        group.end("max_replicates", ids, means)
        return
    group.replicates[:] = following


def window_moments(x: np.ndarray, replicates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each system's mean and sample variance over its first ``replicates`` values."""
    inside = np.arange(x.shape[1]) < replicates[:, None]
    counts = replicates.astype(float)
    means = np.where(inside, x, 0.0).sum(axis=1) / counts
    squares = np.where(inside, (x - means[:, None]) ** 2, 0.0).sum(axis=1)
    return means, squares / (counts - 1)


DECISIONS = {"kn": decide_kn, "kn++": decide_kn, "gsp": decide_gsp, "ocba": decide_ocba}


@dataclass(frozen=True)
class Selections:
    """Where every group stands (``groups``: each group's cells, in system order), and per
    cell its replicates so far, state and deciding stage (-1: none yet)."""

    groups: list[np.ndarray]
    results: list[GroupSelection]
    replicates: np.ndarray
    state: np.ndarray
    stage: np.ndarray

    @property
    def waiting(self) -> bool:
        return bool((self.state == STATES["waiting"]).any())


def selection_stages(
    values: np.ndarray,
    finished: np.ndarray,
    failed: np.ndarray,
    groups: list[np.ndarray],
    rule: SelectionRule,
) -> Selections:
    """Replay ``rule`` over every group (cells x replicates arrays; ``groups``: each group's
    cell indices, in system order)."""
    cells = values.shape[0]
    replicates = np.zeros(cells, dtype=np.int64)
    state = np.zeros(cells, dtype=np.int8)
    stage = np.full(cells, -1, dtype=np.int64)
    results = []
    for cells_of in groups:
        group = select_group(values[cells_of], finished[cells_of], failed[cells_of], rule)
        replicates[cells_of], state[cells_of], stage[cells_of] = (
            group.replicates,
            group.state,
            group.stage,
        )
        results.append(group)
    return Selections(list(groups), results, replicates, state, stage)
