"""Selection procedures side by side: campaign's KN, KN++, GSP and OCBA (the functions a
campaign's stages run), sim-tools' KN, KN++ and OCBA, and Rinott's two-stage procedure
(no elimination), on the same outputs: tasks used, the share of correct selections and the
wall time of the decisions.

Each configuration draws its outputs once, a row of replicates per system for each of
--selections independent selections, as the ``normal`` check model draws them; every
procedure reads the same replicates in the same order. sim-tools is not a dependency of
campaign: `pip install sim-tools` (its rows are left out, saying so, without it).

    python scripts/bench_select.py [--selections 200] [--systems 5] [--seed 1]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from campaign.analysis import selection_rules as rules
from campaign.analysis.selection import SelectionRule, selection_stages

DELTA = 0.5
PCS = 0.95
FIRST = 10
BATCH = 5
MOST = 4000


def configurations(systems: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Means and standard deviations; the last system is the best (larger is better)."""
    index = np.arange(systems)
    return {
        "slippage": (np.r_[np.zeros(systems - 1), DELTA], np.ones(systems)),
        "increasing": (DELTA * index, np.sqrt(1 + 3 * index / (systems - 1))),
    }


def draw(means, sds, selections, seed) -> np.ndarray:
    """selections x systems x MOST independent normal outputs."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((selections, means.size, MOST))
    return means[None, :, None] + sds[None, :, None] * noise


@dataclass
class Row:
    procedure: str
    implementation: str
    correct: int
    tasks: float
    seconds: float


def campaign_rows(values: np.ndarray, budget: int) -> list[Row]:
    """campaign's procedures, every selection a group of one call (as a campaign runs them)."""
    selections, systems, _ = values.shape
    flat = values.reshape(selections * systems, MOST)
    groups = list(np.arange(selections * systems).reshape(selections, systems))
    finished = np.ones(flat.shape, dtype=bool)
    rows = []
    for procedure in ("kn", "kn++", "gsp", "ocba"):
        rule = SelectionRule(
            procedure=procedure,
            goal="max",
            indifference=DELTA,
            pcs=PCS,
            first=FIRST,
            batch=BATCH,
            most=MOST,
            budget=budget if procedure == "ocba" else None,
        )
        started = time.perf_counter()
        found = selection_stages(flat, finished, ~finished, groups, rule)
        seconds = time.perf_counter() - started
        correct = sum(group.selected == systems - 1 for group in found.results)
        rows.append(
            Row(procedure, "campaign", correct, found.replicates.sum() / selections, seconds)
        )
    return rows


def rinott_row(values: np.ndarray) -> Row:
    """Rinott's two-stage procedure: N_i = max(n0, ceil((h S_i/delta)^2)) from the first n0,
    then the best mean over N_i replicates."""
    selections, systems, _ = values.shape
    started = time.perf_counter()
    h = rules.rinott_h(systems, PCS, FIRST - 1)
    correct = tasks = 0
    for sample in values:
        counts = rules.rinott_count(h, sample[:, :FIRST].std(axis=1, ddof=1), DELTA, FIRST)
        counts = np.minimum(counts, MOST)
        means = [sample[i, :n].mean() for i, n in enumerate(counts)]
        correct += int(np.argmax(means)) == systems - 1
        tasks += int(counts.sum())
    return Row(
        "rinott", "no elimination", correct, tasks / selections, time.perf_counter() - started
    )


class Replay:
    """A sim-tools model: design i's j-th replication is values[i, j], whatever asks."""

    def __init__(self, sample: np.ndarray):
        self.sample = sample
        self.used = np.zeros(sample.shape[0], dtype=np.int64)
        self.observers = []

    def register_observer(self, observer) -> None:
        self.observers.append(observer)

    def simulate(self, design: int) -> float:
        value = float(self.sample[design, self.used[design]])
        self.used[design] += 1
        for observer in self.observers:
            observer.feedback(self, design, value)
        return value


def sim_tools_rows(values: np.ndarray, budget: int) -> list[Row]:
    """sim-tools' KN, KN++ and OCBA (its own stopping and allocation, one replication at a
    time), on the same replicates."""
    from sim_tools.ovs.fixed_budget import OCBA
    from sim_tools.ovs.indifference_zone import KN, KNPlusPlus

    selections, systems, _ = values.shape
    makers = {
        "kn": lambda model: KN(model, systems, DELTA, 1 - PCS, FIRST, obj="max"),
        "kn++": lambda model: KNPlusPlus(model, systems, DELTA, 1 - PCS, FIRST, obj="max"),
        "ocba": lambda model: OCBA(model, systems, budget, BATCH * systems, FIRST, obj="max"),
    }
    rows = []
    for procedure, make in makers.items():
        correct = tasks = 0
        started = time.perf_counter()
        for sample in values:
            model = Replay(sample)
            try:
                chosen = np.atleast_1d(make(model).solve())
            except IndexError:  # past MOST replicates of a system: counted as not correct
                chosen = np.array([])
            correct += len(chosen) == 1 and int(chosen[0]) == systems - 1
            tasks += int(model.used.sum())
        seconds = time.perf_counter() - started
        rows.append(Row(procedure, "sim-tools", correct, tasks / selections, seconds))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--selections", type=int, default=200)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--budget",
        type=int,
        default=300,
        help="OCBA's tasks per selection (sim-tools: systems x n0 plus a multiple of its "
        "increment, batch x systems)",
    )
    args = parser.parse_args()
    try:
        import sim_tools  # noqa: F401

        have_sim_tools = True
    except ImportError:
        have_sim_tools = False
    print(
        f"{args.selections} selections of the best of {args.systems} normal systems, delta "
        f"{DELTA}, PCS {PCS}, n0 {FIRST}, batch {BATCH}; OCBA's budget {args.budget} tasks"
    )
    header = ["configuration", "procedure", "implementation", "PCS", "tasks", "decisions (s)"]
    print(
        f"{header[0]:<13}  {header[1]:<9}  {header[2]:<16}  {header[3]:>5}  {header[4]:>7}  "
        f"{header[5]:>13}"
    )
    for name, (means, sds) in configurations(args.systems).items():
        values = draw(means, sds, args.selections, args.seed)
        rows = campaign_rows(values, args.budget) + [rinott_row(values)]
        if have_sim_tools:
            rows += sim_tools_rows(values, args.budget)
        for row in rows:
            print(
                f"{name:<13}  {row.procedure:<9}  {row.implementation:<16}  "
                f"{row.correct / args.selections:>5.3f}  {row.tasks:>7.1f}  {row.seconds:>13.2f}"
            )
    if not have_sim_tools:
        print("sim-tools is not installed: `pip install sim-tools` adds its KN, KN++ and OCBA")


if __name__ == "__main__":
    main()
