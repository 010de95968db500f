"""How many replicates each cell runs: a fixed count, rounds until a precision target, or the
stages of a selection (`campaign.plan.selection.SelectionRounds`).

Both policies answer the same questions, so no caller asks which one a spec has: how many
replicates the design may hold per cell (``most``), which of them each cell runs now (the
replicate ``window``, computed once per decision), where the stored results stand (``read``),
what a finished batch changes (``enter``, ``decide``) and how to say it.

With a precision target the rounds follow from the stored results alone: the stopping rule
(`campaign.analysis.stats`) decides them from the task table (per task, its status and its
precision metrics' values), which `read` replays from the ledger and a run extends batch by
batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import numpy as np

from campaign.analysis.selection import Selections
from campaign.analysis.stats import Rounds, StoppingRule, precision_rounds
from campaign.design.tasks import Design
from campaign.errors import CampaignError
from campaign.models.contract import Model
from campaign.plan.selection import SelectionRounds
from campaign.results.ledger_table import TaskTable, first_finished, read_status, read_table
from campaign.results.status import STATUS_FAILED, STATUS_MISSING
from campaign.spec.load import Precision, Spec
from campaign.store.ledger import Ledger


class Replicates(Protocol):
    """What a replicate policy answers (`FixedReplicates`, `PrecisionRounds`,
    `SelectionRounds`)."""

    most: int  # replicates the design may hold per cell
    rounds: Rounds | None  # where each cell stands against a precision target, if any
    stages: Selections | None  # where each group of a selection stands, if any
    window: np.ndarray  # cells x most: the replicates each cell runs now
    this_round: str  # words after "to run" in what a run says
    may_clash: bool  # read from the records' heads, a success holding a sample: see `read`

    def read(self, ledger: Ledger, check: bool, table: TaskTable | None = None) -> np.ndarray: ...
    def replay(self, table: TaskTable, status: np.ndarray) -> None: ...
    def enter(self, record: dict[str, Any], index: int) -> None: ...
    def forget(self, indices: list[int]) -> None: ...
    def decide(self, status: np.ndarray) -> None: ...
    def first(self, todo: list[int], done: int, model: Model) -> list[int]: ...
    def scope(self) -> str: ...


def replicates_of(design: Design) -> FixedReplicates | PrecisionRounds | SelectionRounds:
    """The replicate policy of a design's spec."""
    if design.spec.selection is not None:
        return SelectionRounds(design, design.spec.selection)
    if design.spec.precision is None:
        return FixedReplicates(design)
    return PrecisionRounds(design, design.spec.precision)


class FixedReplicates:
    """Every cell runs all ``replicates`` of the spec, from the start."""

    rounds = None
    stages = None
    this_round = ""
    may_clash = False

    def __init__(self, design: Design):
        self.design = design
        self.most = design.spec.replicates
        self.window = np.ones((len(design.cells), self.most), dtype=bool)

    def read(
        self, ledger: Ledger, check: bool = True, table: TaskTable | None = None
    ) -> np.ndarray:
        """Per task, its stored status (from the records' heads: no record is parsed whole,
        unless the spec may refuse a stored success for its metrics: `read_status`);
        ``may_clash`` says whether a stored success holds a sample, so that the records must
        be read whole to count a metric clashing across tasks. ``table``: the records read
        whole already, which count as results.nc counts them."""
        if table is not None:
            self.may_clash = False
            return table.status.copy()
        stored = read_status(ledger, self.design)
        self.may_clash = stored.may_clash
        return stored.status

    def replay(self, table: TaskTable, status: np.ndarray) -> None:
        """Nothing to replay: the window does not depend on results."""

    def enter(self, record: dict[str, Any], index: int) -> None:
        """Nothing to keep of a record: the window does not depend on results."""

    def forget(self, indices: list[int]) -> None:
        """Nothing kept to forget."""

    def decide(self, status: np.ndarray) -> None:
        """The window stays: every replicate runs."""

    def first(self, todo: list[int], done: int, model: Model) -> list[int]:
        return todo

    def scope(self) -> str:
        design = self.design
        return f"{design.size} tasks ({len(design.cells)} cells x {self.most} replicates)"


class PrecisionRounds:
    """Each cell runs replicates in rounds until every interval of the precision metrics meets
    the target (or ``max_replicates`` is reached); the rounds follow from the stored results.

    The first finished task's metrics must include the precision metrics: a misspelt name
    stops the run once the tasks sent have ended.
    """

    this_round = " in this round"
    stages = None
    may_clash = False  # the status is the task table's, read whole

    def __init__(self, design: Design, precision: Precision):
        self.design = design
        self.precision = precision
        self.most = precision.max_replicates
        self.values: dict[str, np.ndarray] = {}
        self.rounds: Rounds | None = None
        self.window = np.zeros((len(design.cells), self.most), dtype=bool)
        self.metrics_checked = False  # a finished task's metrics were checked
        self.unchecked: dict[str, Any] | None = None  # the first finished task's record

    def read(
        self, ledger: Ledger, check: bool = True, table: TaskTable | None = None
    ) -> np.ndarray:
        """Per task its stored status, the precision metrics' values, and the rounds they
        give; ``check``: refuse precision metrics a stored result lacks (``table``: the
        records read whole already)."""
        table = read_table(ledger, self.design) if table is None else table
        if check:
            self.metrics_checked = check_returned_metrics(self.design.spec, first_finished(table))
        status = np.full(self.design.size, STATUS_MISSING, dtype=np.int8)
        self.replay(table, status)
        return status

    def replay(self, table: TaskTable, status: np.ndarray) -> None:
        """Set ``status`` (per task) from the stored records' task table, as a results file
        holds them, with the precision metrics' values and the rounds they give."""
        self.values = {name: table.column(name).copy() for name in self.precision.metrics}
        status[:] = table.status
        self.decide(status)

    def enter(self, record: dict[str, Any], index: int) -> None:
        """Keep a finished task's precision metrics (and the first one's record, to check)."""
        if not self.metrics_checked and self.unchecked is None:
            self.unchecked = record
        returned = record["metrics"]
        for name, column in self.values.items():
            column[index] = returned.get(name, np.nan)

    def forget(self, indices: list[int]) -> None:
        """Drop the precision metrics' values of tasks whose results are set aside."""
        for column in self.values.values():
            column[indices] = np.nan

    def decide(self, status: np.ndarray) -> None:
        """Where each cell stands by the stopping rule, and the replicates of its rounds."""
        if self.unchecked is not None:
            record, self.unchecked = self.unchecked, None
            self.metrics_checked = check_returned_metrics(self.design.spec, [record])
        grid = status.reshape(-1, self.most)
        metrics = [self.values[name].reshape(grid.shape) for name in self.precision.metrics]
        rule = stopping_rule_of(self.precision)
        finished, failed = grid != STATUS_MISSING, grid == STATUS_FAILED
        self.rounds = precision_rounds(metrics, finished, failed, rule)
        self.window = np.arange(self.most) < self.rounds.target[:, None]

    def first(self, todo: list[int], done: int, model: Model) -> list[int]:
        """One task first, when nothing is done and the model declares no metrics: it shows
        whether the precision metrics exist."""
        return todo[:1] if not done and not model.metrics else todo

    def scope(self) -> str:
        return (
            f"{len(self.design.cells)} cells, replicates in rounds until each interval meets "
            f"the precision target (at most {self.most})"
        )


def stopping_rule_of(precision: Precision) -> StoppingRule:
    """The stopping rule of a spec's precision target (`campaign.analysis.stats` knows no spec)."""
    return StoppingRule(
        precision.half_width,
        precision.relative,
        precision.min_replicates,
        precision.max_replicates,
        precision.confidence,
    )


def check_returned_metrics(spec: Spec, records: Iterable[dict[str, Any]]) -> bool:
    """Refuse precision metrics that the first finished task did not return (a misspelt
    name); whether there was a finished task to look at."""
    for record in records:
        if record["status"] != "ok":
            continue
        returned = record.get("metrics") or {}
        for metric in spec.precision.metrics:
            if metric not in returned:
                raise CampaignError(
                    f"{spec.path or 'spec'}: precision.metrics: {metric!r} is not a metric "
                    f"model {spec.model} returns; it returned: {', '.join(returned) or 'none'}"
                )
        return True
    return False
