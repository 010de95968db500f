"""The plan of a campaign: its spec checked against the model, and where each task stands.

`campaign.spec.load` checks everything it can without the model. Making the plan loads the model
once, lets it refuse the parameters of any cell before anything runs, and reads the ledger:
each task of the design is done, failed or missing. The plan holds the model and the ledger
for everything a command does after that.

With a precision target, the plan also holds the task table its rounds are decided from (per
task, its status and its precision metrics' values). A run enters each stored batch into it,
and the stopping rule (`campaign.analysis.stats`) decides the next round from those arrays: the
rounds follow from the stored results alone, as `make_plan` replays them from the ledger.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from campaign.analysis.stats import Rounds, StoppingRule, judge, precision_rounds
from campaign.design.tasks import Design, cell_params, iter_cells
from campaign.errors import CampaignError
from campaign.models import check_params, load_model
from campaign.models.contract import Model
from campaign.plan.sources import ON_CHANGE, Change, Sources, compare, current_sources
from campaign.results.assemble import PRECISION_STATES, storable_records, task_table
from campaign.results.names import documented_name, name_clashes
from campaign.results.status import STATUS_FAILED, STATUS_MISSING, STATUS_OK
from campaign.spec.load import Precision, Spec, load_spec
from campaign.store.ledger import Ledger

RESULTS_FILE = "results.nc"


def as_spec(spec: str | Path | Spec) -> Spec:
    return spec if isinstance(spec, Spec) else load_spec(spec)


def check_model(spec: Spec) -> Model:
    """The spec's model, once it has accepted the spec: the metrics the spec names (when the
    model declares its metrics) and the parameters of every cell."""
    where = f"{spec.path or 'spec'}: "
    try:
        model = load_model(spec.model)
    except ValueError as error:
        raise CampaignError(f"{where}model: {error}") from None
    check_declared_metrics(spec, model.metrics)
    if spec.precision is not None and model.metrics:
        for metric in spec.precision.metrics:
            if documented_name(metric, model.metrics) is None:
                raise CampaignError(
                    f"{where}precision.metrics: {metric!r} is not a metric of model "
                    f"{spec.model}; its metrics: {', '.join(model.metrics)}"
                )
    if model.checks:
        for cell in iter_cells(spec):
            try:
                check_params(model, spec.model, cell_params(spec, cell))
            except ValueError as error:
                levels = ", ".join(f"{f.name}={f.labels[i]}" for f, i in zip(spec.factors, cell))
                cell_text = f" (cell {levels})" if levels else ""
                raise CampaignError(f"{where}params{cell_text}: {error}") from None
    return model


def check_declared_metrics(spec: Spec, declared: Mapping[str, Any] | None) -> None:
    """Refuse kept metrics the model does not declare, or that clash with the factors.

    Without a declaration (a model's ``metrics``) the names are known only from results, where
    the engine checks them as they arrive.
    """
    if not declared:
        return
    where = f"{spec.path or 'spec'}: "
    documented = ", ".join(declared)
    for metric in spec.metrics or ():
        if documented_name(metric, declared) is None:
            raise CampaignError(
                f"{where}metrics: {metric!r} is not a metric of model {spec.model}; its metrics: "
                f"{documented}"
            )
    kept = spec.metrics or [name for name in declared if "{" not in name]
    clashes = name_clashes([f.name for f in spec.factors], kept)
    if clashes:
        reason = next(iter(clashes.values()))
        hint = "" if spec.metrics else ": list the metrics to keep in 'metrics:', without it"
        raise CampaignError(
            f"{where}{reason} (model {spec.model}); a results file cannot hold both{hint}"
        )


def identity(spec: Spec) -> dict[str, Any]:
    """What stored results depend on; an edit of any of these makes them mean something else."""
    return {"model": spec.model, "params": spec.params, "seed": spec.seed, "name": spec.name}


def stopping_rule_of(precision: Precision) -> StoppingRule:
    """The stopping rule of a spec's precision target (`campaign.analysis.stats` knows no spec)."""
    return StoppingRule(
        precision.half_width,
        precision.relative,
        precision.min_replicates,
        precision.max_replicates,
        precision.confidence,
    )


@dataclass
class Tally:
    """The task table of a precision campaign: per task (in task order) its status and the
    value of each precision metric (NaN where it has none)."""

    status: np.ndarray
    values: dict[str, np.ndarray]

    @classmethod
    def of(cls, design: Design, records: Mapping[str, dict[str, Any]]) -> Tally:
        """The table of stored records, as a results file holds them
        (`campaign.results.assemble.storable_records`)."""
        spec = design.spec
        wanted = spec.precision.metrics
        status, values, _ = task_table(design, storable_records(records, spec), wanted)
        return cls(status, values)

    def rounds(self, precision: Precision) -> Rounds:
        """Where each cell stands: the stopping rule over cells x replicates arrays."""
        grid = self.status.reshape(-1, precision.max_replicates)
        metrics = [self.values[name].reshape(grid.shape) for name in precision.metrics]
        rule = stopping_rule_of(precision)
        return precision_rounds(metrics, grid != STATUS_MISSING, grid == STATUS_FAILED, rule)


def replay_rounds(design: Design, records: Mapping[str, dict[str, Any]]) -> Rounds | None:
    """The rounds stored records give a design (None without a precision target): what
    `campaign.results.assemble` needs beside the records."""
    if design.spec.precision is None:
        return None
    return Tally.of(design, records).rounds(design.spec.precision)


@dataclass
class Plan:
    """What a spec asks for, against what its output folder already holds (task indices)."""

    spec: Spec
    model: Model
    design: Design
    ledger: Ledger
    done: int = 0
    failed: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    damaged: str | None = None  # one line on damaged ledger records skipped, if any
    rounds: Rounds | None = None  # with a precision target: where each cell stands
    tally: Tally | None = None  # with a precision target: what the rounds are decided from
    metrics_checked: bool = False  # a finished task's metrics were checked against precision
    unchecked: dict[str, Any] | None = None  # the first finished task's record, to check
    sources: Sources | None = None  # digests of the model's code and inputs, as of now
    change: Change | None = None  # how they differ from those of the stored results
    changed: list[int] = field(default_factory=list)  # done tasks computed from other sources
    rerun_changed: bool = False  # the changed tasks count as to run

    @property
    def tasks(self) -> int:
        """Tasks of the design; with a precision target, those its rounds gave the cells so far."""
        if self.rounds is None:
            return self.design.size
        return int(self.rounds.target.sum())

    @property
    def to_run(self) -> list[int]:
        """Missing tasks and failed ones (a rerun retries failures, e.g. after a model fix),
        and with --rerun-changed those computed from other sources than now."""
        return self.failed + self.missing + (self.changed if self.rerun_changed else [])

    @property
    def results_path(self) -> Path:
        return self.spec.output / RESULTS_FILE

    def classify(self, statuses: Mapping[str, bool], change: Change | None = None) -> None:
        """Count every task of the design as done, failed or missing by its stored status
        (``statuses``: task key -> succeeded); with ``change``, a done task it affects counts
        as changed instead."""
        for index, key in enumerate(self.design.keys()):
            ok = statuses.get(key)
            if ok is None:
                self.missing.append(index)
            elif not ok:
                self.failed.append(index)
            elif change is not None and change.affects(key):
                self.changed.append(index)
            else:
                self.done += 1

    def replay(self, records: Mapping[str, dict[str, Any]]) -> None:
        """Decide the rounds of a precision campaign from its stored records, as a results
        file holds them (`campaign.results.assemble.storable_records`)."""
        self.tally = Tally.of(self.design, records)
        self.next_round()

    def stored(self, records: Iterable[dict[str, Any]], indices: Mapping[str, int]) -> None:
        """Enter records just stored in the ledger (``indices``: task key -> task index) into
        the task table, as the ledger reads them back: a success beats a failure, a later
        record an earlier one."""
        if self.tally is None:
            return
        status, values = self.tally.status, self.tally.values
        for record in records:
            index = indices.get(record["key"])
            if index is None:
                continue
            if record["status"] != "ok":
                if status[index] != STATUS_OK:
                    status[index] = STATUS_FAILED
                continue
            if not self.metrics_checked and self.unchecked is None:
                self.unchecked = record
            status[index] = STATUS_OK
            returned = record["metrics"]
            for name, column in values.items():
                column[index] = returned.get(name, np.nan)

    def next_round(self) -> None:
        """Where each cell stands by the stopping rule, and the tasks of its rounds so far.

        The first finished task's metrics must include the precision metrics (a misspelt
        name stops the run here, once the tasks sent have ended)."""
        spec, tally = self.spec, self.tally
        if self.unchecked is not None:
            record, self.unchecked = self.unchecked, None
            self.metrics_checked = check_returned_metrics(spec, [record])
        self.rounds = tally.rounds(spec.precision)
        planned = np.flatnonzero(np.arange(spec.replicates) < self.rounds.target[:, None])
        status = tally.status[planned]
        self.done = int(np.count_nonzero(status == STATUS_OK))
        self.failed = planned[status == STATUS_FAILED].tolist()
        self.missing = planned[status == STATUS_MISSING].tolist()


def make_plan(
    spec: str | Path | Spec,
    check_identity: bool = True,
    on_change: str = "refuse",
    *,
    model: Model | None = None,
    ledger: Ledger | None = None,
) -> Plan:
    """Check the spec against its model and classify every task of the design as done,
    failed or missing, from the ledger alone.

    With ``check_identity``, the stored results must mean what the spec asks for: same model,
    params and seed, computed from the same model code and input files. Done tasks computed
    from other sources are refused in one line, unless ``on_change`` says to run them again
    ("rerun": they count as to run) or to keep them ("accept").

    ``model``: the spec's model as `check_model` returned it (checked here when not given);
    ``ledger``: the output folder's ledger, when the caller holds one already. With a
    precision target, only the tasks of each cell's rounds so far count; the rounds are
    replayed from the stored results (see `campaign.analysis.stats.precision_rounds`).
    """
    if on_change not in ON_CHANGE:
        raise CampaignError(f"on_change must be one of {', '.join(ON_CHANGE)}, got {on_change!r}")
    spec = as_spec(spec)
    model = model or check_model(spec)
    ledger = ledger or Ledger(spec.output)
    plan = Plan(spec=spec, model=model, design=Design(spec), ledger=ledger)
    if check_identity:
        ledger.check_identity(identity(spec))
        plan.sources = design_sources(plan.design)
        stored = ledger.read_identity() if ledger.has_records() else None
        plan.change = compare((stored or {}).get("sources"), plan.sources)
    change = plan.change
    if spec.precision is not None:
        records = ledger.load()
        plan.damaged = ledger.damage_note()
        plan.metrics_checked = check_returned_metrics(spec, records.values())
        plan.replay(records)
        if change is not None:
            keys = plan.design.keys()
            planned = np.flatnonzero(np.arange(spec.replicates) < plan.rounds.target[:, None])
            done = planned[plan.tally.status[planned] == STATUS_OK]
            plan.changed = [int(i) for i in done if change.affects(keys[i])]
            plan.done -= len(plan.changed)
    else:
        statuses = ledger.statuses()
        plan.damaged = ledger.damage_note()
        plan.classify(statuses, change)
    if plan.changed:
        keys = plan.design.keys()
        plan.change = change.narrowed({keys[i][:16] for i in plan.changed}, plan.sources)
        if on_change == "refuse":
            raise CampaignError(changed_refusal(plan))
        plan.rerun_changed = on_change == "rerun"
        if not plan.rerun_changed:
            plan.done += len(plan.changed)
    return plan


def design_sources(design: Design) -> Sources:
    """Digests of the model's code and of the input files of every cell of the design."""
    spec = design.spec
    cells = (
        (digest, cell_params(spec, cell)) for digest, cell in zip(design.cell_digests, design.cells)
    )
    return current_sources(spec.model, cells)


def changed_refusal(plan: Plan) -> str:
    """One line: which stored results were computed from other sources, and what to do."""
    count = len(plan.changed)
    results = "1 stored result was" if count == 1 else f"{count} stored results were"
    return (
        f"{plan.spec.output}: {results} computed before {plan.change.describe(plan.spec.model)}; "
        "rerun with --rerun-changed to compute them again (the earlier ones are kept in "
        "ledger.changed-*), or with --accept-changed to keep them as they are (recorded in "
        "results.nc)"
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


def precision_summary(state: np.ndarray, replicates: np.ndarray, most: int) -> str:
    """One line on where the cells stand against a precision target."""
    state, replicates = np.ravel(state), np.ravel(replicates)
    parts = []
    met = replicates[state == PRECISION_STATES["met"]]
    if met.size:
        low, high = int(met.min()), int(met.max())
        counts = f"{low}" if low == high else f"{low} to {high}"
        parts.append(f"{_cells(met.size)} met the target with {counts} replicates")
    at_max = np.count_nonzero(state == PRECISION_STATES["at_max"])
    if at_max:
        parts.append(f"{_cells(at_max)} stopped at max_replicates ({most}) without meeting it")
    running = np.count_nonzero(state == PRECISION_STATES["running"])
    if running:
        parts.append(f"{_cells(running)} still running (later rounds follow their results)")
    waiting = np.count_nonzero(state == PRECISION_STATES["waiting"])
    if waiting:
        parts.append(f"{_cells(waiting)} waiting on failed tasks (a rerun retries them)")
    return "precision: " + "; ".join(parts)


def _cells(count: int) -> str:
    return f"{count} cell" if count == 1 else f"{count} cells"


def precision_target(precision: Precision) -> str:
    """The precision target in words, for `campaign validate` and `plan`."""
    return (
        f"precision: interval half-width at most {_bound(precision)} at "
        f"{precision.confidence * 100:g}% confidence, for {', '.join(precision.metrics)}"
    )


def _bound(precision: Precision) -> str:
    if precision.relative:
        return f"{precision.half_width * 100:g}% of |mean|"
    return f"{precision.half_width:g}"


def precision_progress(plan: Plan) -> list[str]:
    """Per precision metric, one line on where the cells stand against the target now: how
    many meet it (the stopping rule's test, `campaign.analysis.stats.judge`) and the widest
    interval, over the replicates of each cell's rounds so far."""
    spec, rounds, tally = plan.spec, plan.rounds, plan.tally
    precision = spec.precision
    shape = (len(plan.design.cells), spec.replicates)
    window = np.arange(spec.replicates) < rounds.target[:, None]
    lines = []
    for metric in precision.metrics:
        values = np.where(window, tally.values[metric].reshape(shape), np.nan)
        judged = judge(values, stopping_rule_of(precision))
        measured = np.flatnonzero(judged.n >= 2)
        line = f"  {metric}: "
        if measured.size:
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = judged.half_width[measured] / judged.target[measured]
            cell = measured[np.argmax(np.where(np.isnan(ratio), -np.inf, ratio))]
            half = judged.half_width[cell]
            if precision.relative:
                with np.errstate(invalid="ignore", divide="ignore"):
                    widest = f"{100 * half / abs(judged.mean[cell]):.3g}%"
            else:
                widest = f"{half:.3g}"
            levels = plan.design.cell_label(plan.design.cells[cell])
            where = ", ".join(f"{name}={label}" for name, label in levels.items())
            line += (
                f"{np.count_nonzero(judged.met)} of {shape[0]} {_plural(shape[0], 'cell')} "
                f"within {_bound(precision)}; widest {widest} ({where or 'the single cell'}, "
                f"{judged.n[cell]} replicates)"
            )
        unmeasured = shape[0] - measured.size
        if unmeasured:
            few = f"{unmeasured} {_plural(unmeasured, 'cell')} with fewer than 2 results"
            line += f"; {few}" if measured.size else f"no interval yet ({few})"
        lines.append(line)
    return lines


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"
