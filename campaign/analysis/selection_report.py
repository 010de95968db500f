"""What a selection campaign decided, read back from results.nc: per group the system selected,
each eliminated system with its stage and replicates, the tasks spent, the guarantee, and
what a procedure without elimination would have spent for the same guarantee.

The decisions are replayed from the raw values by the same function the run used
(`campaign.analysis.selection.select_group`) with the settings results.nc keeps, so they are
the run's decisions, with every detail the run did not store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from campaign.analysis import selection_rules as rules
from campaign.analysis.selection import (
    ENDINGS,
    PROCEDURES,
    STATES,
    GroupSelection,
    SelectionRule,
    select_group,
)
from campaign.analysis.unfinished import written_before
from campaign.errors import ParameterError
from campaign.results.selection import SELECTION_ATTRIBUTE
from campaign.results.status import STATUS_FAILED, STATUS_MISSING
from campaign.spec.selection import systems_share_seeds
from campaign.spec.types import Selection

STATE_NAMES = {code: name.replace("_", " ") for name, code in STATES.items()}
DECIDED = [ending for ending in ENDINGS if ending != "max_replicates"]  # with a guarantee
SYSTEM = "system"  # the systems' column when every cell is a system


@dataclass(frozen=True)
class SelectionReport:
    """``groups``: a row per group (its levels, the system selected, how it ended, stages,
    tasks, Rinott's count, missing until the first stage is decided, and the share saved);
    ``systems``: a row per system (its group's levels, the system, its state, deciding stage,
    replicates and mean); ``guarantee`` and ``notes``: the guarantee stated and how the
    counts were made; ``lacks``: the notes of what its numbers lack (results.nc behind its
    ledger or its spec file, means over fewer values), which a CSV or JSON of it cannot say."""

    selection: Selection
    groups: pd.DataFrame
    systems: pd.DataFrame
    guarantee: list[str]
    notes: list[str]
    lacks: list[str] = field(default_factory=list)

    @property
    def tasks(self) -> int:
        return int(self.groups["tasks"].sum())

    @property
    def rinott(self) -> int:
        return int(self.groups["rinott"].sum())


def selection_of(dataset: xr.Dataset) -> Selection:
    """The ``select:`` settings a results file keeps; one error line if it holds none."""
    text = dataset.attrs.get(SELECTION_ATTRIBUTE)
    if not text:
        raise ParameterError(
            "{results} holds no selection: its spec has no select: block (campaign select "
            "reads the stages of a selection campaign)",
            "results",
        )
    return Selection(**json.loads(text))


def selection_report(dataset: xr.Dataset) -> SelectionReport:
    """Replay the selection of a results file, group by group."""
    selection = selection_of(dataset)
    rule = SelectionRule.of(selection, shares_seeds(dataset, selection))
    values, status, groups, systems, levels = group_arrays(dataset, selection)
    group_rows, system_rows, short = [], [], []
    for index, cells in enumerate(groups):
        failed = status[cells] == STATUS_FAILED  # NaN and infinite values: select_group's
        finished = status[cells] != STATUS_MISSING
        group = select_group(values[cells], finished, failed, rule)
        group_rows.append({**levels[index], **group_row(group, systems)})
        short += list(_left_out_of_means(finished & ~failed, group))
        for system, label in enumerate(systems):
            system_rows.append({**levels[index], **system_row(group, system, label, selection)})
    report_groups = pd.DataFrame(group_rows)
    report_groups["rinott"] = report_groups["rinott"].astype("Int64")  # none before a stage
    report_systems = pd.DataFrame(system_rows)
    capped = int((report_groups["ending"] == "max_replicates").sum())
    written, counted = written_before(dataset.attrs), short_note(short)
    unheld = unheld_words(selection, capped, len(groups))  # said in the guarantee's line
    unheld_line = [f"the {guarantee_kind(selection)} {unheld}"] * bool(unheld)
    return SelectionReport(
        selection,
        report_groups,
        report_systems,
        guarantee_text(selection, dataset, capped, len(groups)),
        written + count_notes(selection, len(systems), set(report_groups["ending"])) + counted,
        written + unheld_line + counted,
    )


def shares_seeds(dataset: xr.Dataset, selection: Selection) -> bool:
    """Whether the stored campaign's systems share seeds (its ``paired`` attribute)."""
    factors = [d for d in dataset["status"].dims if d != "replicate"]
    paired = dataset.attrs.get("paired", "").split()
    return systems_share_seeds(selection, factors, paired)


def _left_out_of_means(valued: np.ndarray, group: GroupSelection):
    """Per system whose mean is over fewer values than its replicates (``valued``: the
    tasks that finished without failing), how many failed or missing tasks it left out."""
    for system, given in enumerate(group.replicates):
        counted = int(np.count_nonzero(valued[system, :given]))
        if counted < given:
            yield int(given) - counted


def short_note(short: list[int]) -> list[str]:
    """The line that says the table's replicates are not what some means are over."""
    if not short:
        return []
    return [
        f"note: {len(short)} system(s) have a mean over fewer values than their replicates "
        f"({sum(short)} failed or missing tasks left out): `campaign query` counts each "
        "one's n"
    ]


def group_arrays(dataset: xr.Dataset, selection: Selection):
    """The metric's values and the task status as cells x replicates, each group's cells (in
    system order), the systems' labels and each group's levels."""
    factors = [d for d in dataset["status"].dims if d != "replicate"]
    among = selection.among
    order = [f for f in factors if f != among] + ([among] if among else []) + ["replicate"]
    metric = dataset[selection.metric].transpose(*order)
    status = dataset["status"].transpose(*order)
    width = dataset.sizes["replicate"]
    values = metric.values.reshape(-1, width)
    status = status.values.reshape(-1, width)
    cells = np.arange(values.shape[0])
    if among is None:
        labels = [
            ", ".join(f"{f}={dataset[f].values[i]}" for f, i in zip(factors, index))
            for index in np.ndindex(*[dataset.sizes[f] for f in factors])
        ]
        return values, status, [cells], labels or ["the single cell"], [{}]
    systems = [str(level) for level in dataset[among].values]
    others = [f for f in factors if f != among]
    groups = list(cells.reshape(-1, len(systems)))
    levels = [
        {f: dataset[f].values[i] for f, i in zip(others, index)}
        for index in np.ndindex(*[dataset.sizes[f] for f in others])
    ]
    return values, status, groups, systems, levels


def group_row(group: GroupSelection, systems: list[str]) -> dict[str, object]:
    selected = systems[group.selected] if group.selected >= 0 else ""
    state = group.ending or ("waiting" if (group.state == STATES["waiting"]).any() else "running")
    # only a group that decided saved anything against Rinott's count: one still running or
    # waiting may need many more tasks, one stopped at max_replicates has no guarantee
    decided = group.ending in DECIDED
    saved = 1 - group.tasks / group.rinott if group.rinott and decided else float("nan")
    return {
        "selected": selected,
        "ending": state,
        "stages": group.stages,
        "delta": group.delta,
        "tasks": group.tasks,
        "rinott": group.rinott if group.stages else None,  # from the first stage's deviations
        "saved": saved,
        "apcs": group.apcs,
    }


def system_row(group: GroupSelection, system: int, label: str, selection: Selection) -> dict:
    return {
        selection.among or SYSTEM: label,
        "state": STATE_NAMES[int(group.state[system])],
        "stage": int(group.stage[system]),
        "replicates": int(group.replicates[system]),
        selection.metric: float(group.means[system]),
    }


ASYMPTOTIC = (  # KN++ (Kim & Nelson 2006): its variances, updated each stage, are random
    "asymptotic (as the zone shrinks against the outputs' deviation; with few replicates the "
    "probability can fall below it)"
)
APPROXIMATE = (  # a relative zone: a share of the best first-stage mean, drawn with the data
    "approximate (the zone is a share of a first-stage mean, itself an estimate: the "
    "probability can fall below it)"
)


def guarantee_kind(selection: Selection) -> str:
    """``guarantee``, qualified where the procedure's promise does not hold exactly: KN++'s,
    asymptotic; a relative zone's, approximate."""
    kinds = [ASYMPTOTIC] if selection.procedure == "kn++" else []
    if selection.relative:
        kinds.append(APPROXIMATE)
    return f"guarantee, {' and '.join(kinds)}" if kinds else "guarantee"


def guarantee_text(
    selection: Selection, dataset: xr.Dataset, capped: int = 0, groups: int = 1
) -> list[str]:
    """What was selected among what, and with which guarantee, in two lines; ``capped`` of
    the ``groups`` ended at max_replicates, where it does not hold."""
    units = dataset[selection.metric].attrs.get("units", "")
    zone = (
        f"{selection.indifference * 100:g}% of the best first-stage mean"
        if selection.relative
        else f"{selection.indifference:g}{' ' + units if units and units != '1' else ''}"
    )
    best = "smallest" if selection.goal == "min" else "largest"
    factors = [d for d in dataset["status"].dims if d != "replicate"]
    others = [f for f in factors if f != selection.among]
    if selection.among is None:
        what = f"the cell with the {best} mean of {selection.metric}"
    else:
        at = f", at each {others[0]}" if len(others) == 1 else ""
        at = f", at each combination of {', '.join(others)}" if len(others) > 1 else at
        what = f"the level of {selection.among} with the {best} mean of {selection.metric}{at}"
    crn = (
        "common random numbers: paired seeds"
        if shares_seeds(dataset, selection)
        else "independent systems"
    )
    procedure = PROCEDURES[selection.procedure]
    if selection.procedure == "ocba":
        promise = (
            f"no guarantee ({procedure}): the budget goes where it matters most; approx. PCS "
            f"is Chen's Bonferroni estimate from the sample ({crn}; indifference zone {zone} "
            "for Rinott's count)"
        )
    elif selection.procedure == "gsp":  # a good selection, whatever the configuration
        promise = (
            f"{guarantee_kind(selection)}: a system whose mean is within {zone} of the best is "
            f"selected with probability >= {selection.pcs:g}, for normal outputs ({procedure}; "
            f"{crn})"
        )
    else:  # the indifference-zone guarantee
        promise = (
            f"{guarantee_kind(selection)}: the best is selected with probability >= "
            f"{selection.pcs:g} whenever its mean is at least {zone} better than every other's, "
            f"for normal outputs ({procedure}; {crn})"
        )
    unheld = unheld_words(selection, capped, groups)
    return [f"select: {what}", promise + (f"; it {unheld}" if unheld else "")]


def unheld_words(selection: Selection, capped: int, groups: int) -> str:
    """Where the guarantee does not hold (``capped`` of the ``groups`` ended at
    max_replicates before deciding), in words after "it"; empty where it holds everywhere
    or where there is none (OCBA)."""
    if not capped or selection.procedure == "ocba":
        return ""
    which = "the group" if groups == 1 else f"{capped} of the {groups} groups"
    return f"does not hold for {which} ended at max_replicates before deciding"


def count_notes(selection: Selection, systems: int, endings: set[str]) -> list[str]:
    """How the comparison count was made, and what each ending met means."""
    n0 = selection.first
    h = rules.rinott_h(systems, selection.pcs, n0 - 1)
    return [
        "rinott: the tasks Rinott's two-stage procedure (no elimination) needs for the same "
        "guarantee, N_i = max(n0, ceil((h S_i / delta)^2)) per system;",
        f"  S_i from the first n0 = {n0} replicates, h = {h:.4f} (k = {systems}, PCS "
        f"{selection.pcs:g}); saved: 1 - tasks / rinott",
        *(f"{name}: {words}" for name, words in ENDINGS.items() if name in endings),
    ]
