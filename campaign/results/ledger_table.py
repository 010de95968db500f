"""The task table of a design read from its stored records: per task (in task order) its
status, metric values, error text and cost, in arrays of a few bytes per task, and which
metrics its success returned (a metric it did not return is NaN in its column, but absent,
not an undefined value: `TaskTable.absent`).

`read_table` reads the ledger a chunk of records at a time (`Ledger.fold_records`), so that
no record is held beyond its chunk: the memory grows by the arrays' bytes per task (8 per
metric), not by the records' hundreds. The records are entered in the order the ledger
resolves them (a later record of a task wins, unless it failed where an earlier one
succeeded), so the table is the one `records_table` makes from `Ledger.load`'s records.

A finished task whose metrics the spec refuses counts as failed, saying why
(`campaign.results.check`): a metric the spec's ``metrics:`` keeps left out, or a program's
metrics breaking its ``declare:``, is seen record by record (`refusal_now`: as a task run
now would fail); names that clash across records (without ``metrics:``), and a metric given
as a number by some records and as a sample or a breakdown by others, are known only once
every record is read, and then, rarely, the records are read again whole
(`campaign.results.check.storable_records`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from campaign.design.tasks import Design
from campaign.results.check import (
    judges_metrics,
    kept_names,
    kind_clashes,
    refusal_now,
    storable_records,
)
from campaign.results.codes import Codes
from campaign.results.names import SAMPLE_MARK, entry_owner, name_clashes
from campaign.results.provenance import METRICS_FROM, recomputation
from campaign.results.status import STATUS_FAILED, STATUS_MISSING, STATUS_OK
from campaign.spec.load import Spec
from campaign.store.ledger import Ledger
from campaign.store.scan import Heads

SAMPLE_BYTES = SAMPLE_MARK.encode()  # in a ledger line holding a sample or a breakdown


@dataclass
class TaskCosts:
    """Per task, what its stored record says it cost (measured: finished, with a wall time)."""

    measured: np.ndarray  # bool
    ok: np.ndarray  # bool: the record succeeded (before any check of its metrics)
    elapsed: np.ndarray  # seconds, NaN where not measured
    peak_memory: np.ndarray  # bytes, NaN where not measured
    workers: Codes  # the address of the worker that ran it


@dataclass
class TaskTable:
    """What the stored records say of each task of a design (in task order)."""

    design: Design
    status: np.ndarray  # int8: STATUS_MISSING, STATUS_OK or STATUS_FAILED
    columns: dict[str, np.ndarray]  # metric entries (float64; NaN where a task has none)
    errors: Codes  # a failed task's error text
    costs: TaskCosts
    recomputed: dict[tuple[str, str, str, tuple[str, ...]], int]  # per recomputation, tasks
    first_metrics: dict[str, Any] | None  # the metrics of the first finished record read
    returned: dict[str, np.ndarray] = field(default_factory=dict)  # per metric (a sample by
    # its name), bool per task: its success returned it (a NaN value too)

    def absent(self, metric: str) -> np.ndarray:
        """Per task, whether it finished without returning ``metric`` (a sample by its name):
        its value is NaN in the columns, but was never given, so it is no undefined value."""
        ok = self.status == STATUS_OK
        returned = self.returned.get(metric)
        return ok if returned is None else ok & ~returned

    def column(self, name: str) -> np.ndarray:
        """A metric's values per task (NaN throughout where no task has it)."""
        found = self.columns.get(name)
        return found if found is not None else np.full(self.design.size, np.nan)

    def kept(self, wanted: Iterable[str] | None) -> dict[str, np.ndarray]:
        """The columns a results file keeps of ``wanted`` metrics (a sample's or breakdown's
        entries by their owner; every wanted one, NaN where no task has it), or all."""
        if wanted is None:
            return dict(self.columns)
        wanted = tuple(wanted)
        kept = {name: self.column(name) for name in wanted}
        for name, column in self.columns.items():
            if name not in kept and entry_owner(name) in wanted:
                kept[name] = column
        return kept


def wanted_metrics(spec: Spec) -> tuple[str, ...] | None:
    """The metrics a table of ``spec``'s records keeps: those its ``metrics:`` names and
    those its precision target or selection decides by (None without ``metrics:``: all)."""
    if spec.metrics is None:
        return None
    deciding = list(spec.precision.metrics) if spec.precision else []
    deciding += [spec.selection.metric] if spec.selection else []
    return tuple(dict.fromkeys([*spec.metrics, *deciding]))


def first_finished(table: TaskTable) -> list[dict[str, Any]]:
    """The first finished record read (as far as its metrics go), to check the names of
    the metrics a campaign decides by; none when no task finished."""
    metrics = table.first_metrics
    return [] if metrics is None else [{"status": "ok", "metrics": metrics}]


@dataclass
class StoredStatus:
    """Each task's stored status, and whether it may still change once every record is read
    whole: read from the heads, while a stored success holds a sample or a breakdown (an
    entry ``name@...``), whose metric may clash with other tasks' (`kind_clashes`)."""

    status: np.ndarray  # int8 per task
    may_clash: bool


def read_status(ledger: Ledger, design: Design) -> StoredStatus:
    """Each task's stored status (int8; a success beats a failure), from the key and status
    at the head of each record (a checksummed line's JSON is not parsed), and in the same
    pass whether a success holds a sample; when the spec can refuse a success for its
    metrics (`campaign.results.check.judges_metrics`), from the records read whole, so that
    a task counts as results.nc counts it."""
    if judges_metrics(design.spec):
        return StoredStatus(read_table(ledger, design).status, may_clash=False)

    def fold(chunks: Iterator[Heads]) -> StoredStatus:
        seen = np.zeros(design.size, dtype=bool)
        succeeded = np.zeros(design.size, dtype=bool)
        samples = False
        for chunk in chunks:
            indices = design.lookup.indices(chunk.keys)
            mine = indices >= 0
            seen[indices[mine]] = True
            succeeded[indices[mine & chunk.ok]] = True
            if not samples:
                ok = zip(chunk.lines, chunk.ok)
                samples = any(SAMPLE_BYTES in line for line, good in ok if good)
        status = np.full(design.size, STATUS_MISSING, dtype=np.int8)
        status[seen] = STATUS_FAILED
        status[succeeded] = STATUS_OK
        return StoredStatus(status, may_clash=samples)

    return ledger.fold_heads(fold)


def read_table(ledger: Ledger, design: Design) -> TaskTable:
    """The task table of ``design`` from ``ledger``, read a chunk of records at a time."""
    spec = design.spec

    def fold(chunks: Iterator[list[dict[str, Any]]]) -> _Builder:
        builder = _Builder(design, wanted_metrics(spec), spec.metrics)
        for chunk in chunks:
            builder.enter(chunk, design.lookup.indices([record["key"] for record in chunk]))
        return builder

    builder = ledger.fold_records(fold)
    if builder.clashes():  # known only now: read the records whole, and check them so
        return records_table(design, ledger.load())
    return builder.table()


def records_table(design: Design, records: Mapping[str, dict[str, Any]]) -> TaskTable:
    """The task table of ``design`` from records by task key (`Ledger.load`)."""
    spec = design.spec
    checked = storable_records(records, spec)
    builder = _Builder(design, wanted_metrics(spec), spec.metrics)
    values = list(checked.values())
    builder.enter(values, design.lookup.indices([record["key"] for record in values]))
    return builder.table()


class _Builder:
    """Enters records in the order the ledger resolves them (see the module's doc)."""

    def __init__(
        self, design: Design, wanted: tuple[str, ...] | None, kept: tuple[str, ...] | None
    ):
        size = design.size
        self.design = design
        self.wanted = wanted
        self.kept = kept  # the spec's metrics: (a record lacking one is refused)
        self.judged = judges_metrics(design.spec)  # whether a success may be refused
        self.factors = [factor.name for factor in design.spec.factors]
        self.status = np.zeros(size, dtype=np.int8)  # as stored, before any refusal
        self.refused = np.zeros(size, dtype=bool)
        self.columns = {name: np.full(size, np.nan) for name in wanted or ()}
        self.first: dict[str, tuple[int, int]] = {}  # name -> (task, place) first holding it
        self.keeps: dict[str, bool] = {}
        self.errors = Codes(size)
        self.stamps = Codes(size)
        self.costs = TaskCosts(
            np.zeros(size, dtype=bool),
            np.zeros(size, dtype=bool),
            np.full(size, np.nan),
            np.full(size, np.nan),
            Codes(size),
        )
        self.others: dict[str, tuple[bool, Any]] = {}  # records of keys beyond the design
        self.names: set[str] = set()  # every name a finished record returned
        self.first_metrics: dict[str, Any] | None = None
        self.returned: dict[str, np.ndarray] = {}  # per owner: the task's success returned it
        self.returned_of: dict[str, np.ndarray] = {}  # per entry: its owner's array

    def enter(self, records: list[dict[str, Any]], indices: np.ndarray) -> None:
        for record, index in zip(records, indices.tolist()):
            ok = record["status"] == "ok"
            if ok:
                self.names.update(record["metrics"])
                if self.first_metrics is None:
                    self.first_metrics = record["metrics"]
            if index < 0:
                previous = self.others.get(record["key"])
                if previous is None or not (previous[0] and not ok):
                    self.others[record["key"]] = (ok, _stamps(record))
                continue
            previous = self.status[index]
            if previous == STATUS_OK and not ok:
                continue  # a failure never beats a success
            if previous != STATUS_MISSING:
                self._forget(index)
            self.status[index] = STATUS_OK if ok else STATUS_FAILED
            self._enter(record, index, ok)

    def _forget(self, index: int) -> None:
        """Clear what an earlier record of the task entered."""
        for column in self.columns.values():
            column[index] = np.nan
        self.refused[index] = False
        for returned in self.returned.values():
            returned[index] = False
        self.errors.clear(index)
        self.stamps.clear(index)

    def _enter(self, record: dict[str, Any], index: int, ok: bool) -> None:
        stamps = _stamps(record)
        if stamps:
            self.stamps.set(index, stamps)
        self._enter_cost(record, index, ok)
        if not ok:
            self.errors.set(index, record.get("error", ""))
            return
        metrics = record["metrics"]
        error = refusal_now(metrics, self.design.spec) if self.judged else None
        if error is not None:
            self.refused[index] = True
            self.errors.set(index, error)
            return
        for place, (name, value) in enumerate(metrics.items()):
            column = self.columns.get(name)
            if column is None:
                keeps = self.keeps.get(name)
                if keeps is None:
                    keeps = self.keeps[name] = self.wanted is None or (
                        entry_owner(name) in self.wanted
                    )
                if not keeps:
                    continue
                column = self.columns[name] = np.full(self.design.size, np.nan)
            column[index] = value
            returned = self.returned_of.get(name)
            if returned is None:
                returned = self._returned(name)
            returned[index] = True
            first = self.first.get(name)
            if first is None or index < first[0]:
                self.first[name] = (index, place)

    def _returned(self, entry: str) -> np.ndarray:
        """The array saying which tasks returned the metric that owns ``entry``."""
        owner = entry_owner(entry)
        returned = self.returned.get(owner)
        if returned is None:
            returned = self.returned[owner] = np.zeros(self.design.size, dtype=bool)
        self.returned_of[entry] = returned
        return returned

    def _enter_cost(self, record: dict[str, Any], index: int, ok: bool) -> None:
        costs = self.costs
        measured = record["status"] in ("ok", "failed") and "elapsed" in record
        costs.measured[index] = measured
        costs.ok[index] = ok
        if not measured:
            costs.elapsed[index] = costs.peak_memory[index] = np.nan
            costs.workers.clear(index)
            return
        costs.elapsed[index] = float(record["elapsed"])
        costs.peak_memory[index] = float(record.get("peak_memory", np.nan))
        costs.workers.set(index, str(record.get("worker", "")))

    def clashes(self) -> bool:
        """Whether names returned clash: metrics of other kinds under one name, or (without
        ``metrics:``) other names (see the module's doc)."""
        names = kept_names(sorted(self.names), self.kept)
        if kind_clashes(names):
            return True
        return self.kept is None and bool(name_clashes(self.factors, names))

    def table(self) -> TaskTable:
        status = self.status.copy()
        status[self.refused] = STATUS_FAILED
        wanted = list(self.wanted or ())
        others = sorted(
            (name for name in self.columns if name not in wanted),
            key=lambda name: self.first.get(name, (self.design.size, 0)),
        )
        columns = {name: self.columns[name] for name in [*wanted, *others]}
        recomputed: dict[tuple[str, str, str, tuple[str, ...]], int] = {}
        counted = self.stamps.counts()
        for _, stamps in self.others.values():
            if stamps:
                counted[stamps] += 1
        for stamps, count in counted.items():
            for run in stamps:
                recomputed[run] = recomputed.get(run, 0) + count
        return TaskTable(
            self.design,
            status,
            columns,
            self.errors,
            self.costs,
            recomputed,
            self.first_metrics,
            self.returned,
        )


def _stamps(record: dict[str, Any]) -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
    """The recomputations a record's stamps name (`campaign.results.provenance`)."""
    stamps = record.get(METRICS_FROM)
    if not stamps:
        return ()
    listed = [stamps] if isinstance(stamps, Mapping) else stamps
    return tuple(recomputation(stamp) for stamp in listed if isinstance(stamp, Mapping))
