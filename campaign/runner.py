"""Tie the data flow together: spec -> design -> ledger -> dispatch -> results.nc.

This is the one place that knows the order of the steps; each step lives in its own module.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from campaign.cluster import check_cluster_options, open_client
from campaign.design import Design, cell_params
from campaign.errors import CampaignError
from campaign.execute import WAIT_WORKERS_SECONDS, Item, dispatch
from campaign.ledger import Ledger
from campaign.models import load_model
from campaign.progress import Progress
from campaign.results import (
    PRECISION_STATES,
    STATUS_FAILED,
    STATUS_MISSING,
    STATUS_OK,
    CheckedStore,
    assemble,
    failure_table,
    precision_rounds_of,
    source_provenance,
    task_table,
    write_netcdf,
)
from campaign.sources import ON_CHANGE, Change, Sources, compare, current_sources, task_inputs
from campaign.spec import Spec, load_spec
from campaign.stats import Rounds

RESULTS_FILE = "results.nc"


@dataclass
class Plan:
    """What a spec asks for, against what its output folder already holds (task indices)."""

    spec: Spec
    design: Design
    ledger: Ledger
    done: int = 0
    failed: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    damaged: str | None = None  # one line on damaged ledger records skipped, if any
    rounds: Rounds | None = None  # with a precision target: where each cell stands
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


def identity(spec: Spec) -> dict[str, Any]:
    """What stored results depend on; an edit of any of these makes them mean something else."""
    return {"model": spec.model, "params": spec.params, "seed": spec.seed, "name": spec.name}


def as_spec(spec: str | Path | Spec) -> Spec:
    return spec if isinstance(spec, Spec) else load_spec(spec)


def make_plan(
    spec: str | Path | Spec, check_identity: bool = True, on_change: str = "refuse"
) -> Plan:
    """Classify every task of the design as done, failed or missing, from the ledger alone.

    With ``check_identity``, the stored results must mean what the spec asks for: same model,
    params and seed, computed from the same model code and input files. Done tasks computed
    from other sources are refused in one line, unless ``on_change`` says to run them again
    ("rerun": they count as to run) or to keep them ("accept").

    With a precision target, only the tasks of each cell's rounds so far count; the rounds
    are replayed from the stored results (see `campaign.stats.precision_rounds`).
    """
    if on_change not in ON_CHANGE:
        raise CampaignError(f"on_change must be one of {', '.join(ON_CHANGE)}, got {on_change!r}")
    spec = as_spec(spec)
    ledger = Ledger(spec.output)
    plan = Plan(spec=spec, design=Design(spec), ledger=ledger)
    if check_identity:
        ledger.check_identity(identity(spec))
        plan.sources = design_sources(plan.design)
        stored = ledger.read_identity() if ledger.has_records() else None
        plan.change = compare((stored or {}).get("sources"), plan.sources)
    if spec.precision is not None:
        _plan_rounds(plan)
    else:
        statuses = ledger.statuses()
        plan.damaged = ledger.damage_note()
        change = plan.change
        for index, key in enumerate(plan.design.keys()):
            ok = statuses.get(key)
            if ok is None:
                plan.missing.append(index)
            elif not ok:
                plan.failed.append(index)
            elif change is not None and change.affects(key):
                plan.changed.append(index)
            else:
                plan.done += 1
    if plan.changed:
        keys = plan.design.keys()
        plan.change = plan.change.narrowed({keys[i][:16] for i in plan.changed}, plan.sources)
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


def _plan_rounds(plan: Plan) -> Plan:
    """Classify the tasks of a precision campaign's rounds so far, replayed from the ledger."""
    spec = plan.spec
    records = plan.ledger.load()
    plan.damaged = plan.ledger.damage_note()
    check_returned_metrics(spec, records)
    status, columns, _ = task_table(plan.design, records, spec.precision.metrics)
    plan.rounds = precision_rounds_of(spec, status, columns)
    planned = np.flatnonzero(np.arange(spec.replicates) < plan.rounds.target[:, None])
    done = planned[status[planned] == STATUS_OK]
    if plan.change is not None:
        keys = plan.design.keys()
        changed = np.array([plan.change.affects(keys[i]) for i in done], dtype=bool)
        plan.changed = done[changed].tolist()
        done = done[~changed]
    plan.done = int(done.size)
    plan.failed = planned[status[planned] == STATUS_FAILED].tolist()
    plan.missing = planned[status[planned] == STATUS_MISSING].tolist()
    return plan


def check_returned_metrics(spec: Spec, records: dict[str, dict[str, Any]]) -> None:
    """Refuse precision metrics that a finished task did not return (a misspelt name)."""
    for record in records.values():
        if record["status"] != "ok":
            continue
        returned = record.get("metrics") or {}
        for metric in spec.precision.metrics:
            if metric not in returned:
                raise CampaignError(
                    f"{spec.path or 'spec'}: precision.metrics: {metric!r} is not a metric "
                    f"model {spec.model} returns; it returned: {', '.join(returned) or 'none'}"
                )
        return


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


def run(
    spec: str | Path | Spec,
    workers: int | None = None,
    scheduler: str | None = None,
    retries: int = 1,
    confidence: float = 0.95,
    new: bool = False,
    progress: bool = True,
    say: Callable[[str], None] | None = None,
    cluster: str | Path | None = None,
    security: str | Path | None = None,
    task_timeout: float | None = None,
    wait_workers: float | None = None,
    replicate_tail: bool = True,
    locality: bool = True,
    on_change: str = "refuse",
) -> xr.Dataset:
    """Run what is missing of a campaign and return its results (also written to results.nc).

    Finished tasks are stored as they complete, so an interrupted run loses nothing: running
    it again runs only the rest. `scheduler` (an address) or `cluster` (a cluster file) choose
    the Dask cluster, `security` a TLS settings file (see `campaign.cluster`); `task_timeout`
    fails tasks running longer (seconds); `wait_workers` is how long to wait while there is no
    worker (default 60 s, no limit with a cluster file, whose batch jobs may queue for long).
    `replicate_tail` and `locality` switch tail work stealing / straggler replication and
    input locality of batches (see `campaign.execute.dispatch`). `on_change` says what to do
    with stored results computed before the model's code or an input file changed: "refuse"
    (one error line, nothing runs), "rerun" (set them aside and compute them again) or
    "accept" (keep them; the choice is recorded in results.nc).
    """
    say = say or (lambda message: None)
    if on_change not in ON_CHANGE:
        raise CampaignError(f"on_change must be one of {', '.join(ON_CHANGE)}, got {on_change!r}")
    if retries < 0:
        raise CampaignError(f"--retries must be >= 0, got {retries}")
    if not 0 < confidence < 1:
        raise CampaignError(f"--confidence must be between 0 and 1, got {confidence}")
    if workers is not None and workers < 1:
        raise CampaignError(f"--workers must be >= 1, got {workers}")
    if workers is not None and (scheduler or cluster):
        raise CampaignError(
            "--workers sizes the embedded cluster; with --scheduler or --cluster the cluster's "
            "own workers run the tasks (start more with cluster/start-workers.sh or its scale)"
        )
    if task_timeout is not None and not task_timeout > 0:
        raise CampaignError(f"--task-timeout must be > 0 seconds, got {task_timeout}")
    if wait_workers is None:
        wait_workers = float("inf") if cluster else WAIT_WORKERS_SECONDS
    if not wait_workers >= 0:
        raise CampaignError(f"--wait-workers must be >= 0 seconds, got {wait_workers}")
    check_cluster_options(scheduler, cluster, security)
    spec = as_spec(spec)
    check_output(spec)
    with Ledger(spec.output).lock():
        return _run_holding_the_output(
            spec,
            workers=workers,
            scheduler=scheduler,
            retries=retries,
            confidence=confidence,
            new=new,
            progress=progress,
            say=say,
            cluster=cluster,
            security=security,
            task_timeout=task_timeout,
            wait_workers=wait_workers,
            replicate_tail=replicate_tail,
            locality=locality,
            on_change=on_change,
        )


def check_output(spec: Spec) -> None:
    """Refuse, before any work, an output folder a file stands in for (or in the way of), and
    a results.nc that is not a file."""
    where = f"{spec.path or 'spec'}: output: "
    for place in (spec.output, *spec.output.parents):
        if place.exists():
            if not place.is_dir():
                raise CampaignError(
                    f"{where}{place} is a file; output must name a folder (made if missing)"
                )
            break
    results = spec.output / RESULTS_FILE
    if results.exists() and not results.is_file():
        raise CampaignError(
            f"{where}{results} is not a file; move it away, `run` writes its results there"
        )


def _run_holding_the_output(
    spec: Spec,
    workers: int | None,
    scheduler: str | None,
    retries: int,
    confidence: float,
    new: bool,
    progress: bool,
    say: Callable[[str], None],
    cluster: str | Path | None,
    security: str | Path | None,
    task_timeout: float | None,
    wait_workers: float,
    replicate_tail: bool,
    locality: bool,
    on_change: str,
) -> xr.Dataset:
    """The steps of `run`, while this process alone may write the output folder."""
    ledger = Ledger(spec.output)
    if new:
        aside = ledger.set_aside(also=[RESULTS_FILE])
        if aside:
            say(f"Earlier results set aside in {aside}")
    plan = make_plan(spec, on_change=on_change)
    if plan.damaged:
        kept = plan.ledger.set_damaged_aside()
        say(f"{plan.damaged} (their files are kept in {kept})")
    sources, choice = plan.sources, None
    if plan.changed:
        choice = source_choice(plan, on_change)
        if plan.rerun_changed:
            moved, folder = ledger.set_records_aside(plan.change.affects)
            say(f"{choice['change']}: {moved} stored results set aside in {folder}; they run again")
            plan = make_plan(spec, check_identity=False)
        else:
            say(
                f"{choice['change']}: {choice['results']} stored results kept as they are "
                "(--accept-changed; recorded in results.nc)"
            )
    earlier = ledger.read_identity() if ledger.same_campaign(identity(spec)) else None
    ledger.write_identity(stored_identity(spec, sources, earlier, choice))
    say(
        f"{spec.name}: {plan.design.size} tasks ({len(plan.design.cells)} cells x "
        f"{spec.replicates} replicates); {plan.done} already done, {len(plan.to_run)} to run"
        if spec.precision is None
        else f"{spec.name}: {len(plan.design.cells)} cells, replicates in rounds until each "
        f"interval meets the precision target (at most {spec.replicates}); {plan.done} already "
        f"done, {len(plan.to_run)} to run in this round"
    )
    run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    attempted: set[int] = set()  # a task fails at most once per run; a rerun retries it
    todo = plan.to_run
    if spec.precision is not None and not plan.done and not declares_metrics(spec.model):
        todo = todo[:1]  # one task first shows whether the precision metrics exist
    if todo:
        with open_client(
            scheduler=scheduler, workers=workers, cluster=cluster, security=security, say=say
        ) as client:
            while todo:
                attempted.update(todo)
                execute_tasks(
                    client,
                    plan,
                    todo,
                    run_id,
                    retries,
                    progress,
                    task_timeout=task_timeout,
                    wait_workers=wait_workers,
                    say=say,
                    replicate_tail=replicate_tail,
                    locality=locality,
                    code=sources.code_digest,
                )
                if spec.precision is None:
                    break
                plan = make_plan(spec, check_identity=False)
                todo = [index for index in plan.to_run if index not in attempted]
    ledger.compact()
    return write_results(spec, confidence)


def source_choice(plan: Plan, on_change: str) -> dict[str, Any]:
    """What a run did with stored results computed from other sources, for the provenance."""
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "choice": "rerun" if on_change == "rerun" else "accept",
        "change": plan.change.describe(plan.spec.model),
        "results": len(plan.changed),
    }


def stored_identity(
    spec: Spec,
    sources: Sources | None,
    stored: dict[str, Any] | None,
    choice: dict[str, Any] | None,
) -> dict[str, Any]:
    """campaign.json: what the stored results mean and what they were computed from.

    From ``stored`` (campaign.json of the same campaign, if any), input digests of files the
    design no longer reads are kept (a level removed and added back is no change), and every
    choice made about changed sources is listed.
    """
    stored = stored or {}
    record = identity(spec)
    if sources is not None:
        current = sources.stored()
        earlier = (stored.get("sources") or {}).get("inputs") or {}
        current["inputs"] = dict(sorted({**earlier, **current["inputs"]}.items()))
        record["sources"] = current
    changes = list(stored.get("source_changes") or [])
    if choice is not None:
        changes.append(choice)
    if changes:
        record["source_changes"] = changes
    return record


def execute_tasks(
    client: Any,
    plan: Plan,
    todo: list[int],
    run_id: str,
    retries: int,
    progress: bool,
    **dispatch_options: Any,
) -> None:
    """Run the given task indices on the cluster, storing each finished batch in the ledger."""
    spec, design = plan.spec, plan.design
    model = load_model(spec.model)
    params_by_cell: dict[tuple[int, ...], dict[str, Any]] = {}
    group_by_cell: dict[tuple[int, ...], Any] = {}
    items = []
    for task in design.tasks(todo):
        params = params_by_cell.get(task.cell)
        if params is None:
            params = params_by_cell[task.cell] = cell_params(spec, task.cell)
            group_by_cell[task.cell] = task_inputs(model, params) if model.inputs else None
        meta = {
            "key": task.key,
            "cell": design.cell_label(task.cell),
            "replicate": task.replicate,
            "run": run_id,
        }
        group = group_by_cell[task.cell]  # dispatch batches tasks of one group together
        items.append(Item(key=task.key, params=params, seed=task.seed, meta=meta, group=group))
    bar = Progress(len(items), enabled=progress)
    try:
        store = CheckedStore(spec, plan.ledger.append)
        dispatch(client, spec.model, items, store, retries, bar, **dispatch_options)
    finally:
        bar.finish()


def declares_metrics(model_name: str) -> bool:
    """Whether a model declares its metrics (then a spec's metric names are checked early)."""
    return bool(load_model(model_name).metrics)


def write_results(spec: Spec, confidence: float = 0.95) -> xr.Dataset:
    """Assemble results.nc from the ledger of a spec's output folder."""
    ledger = Ledger(spec.output)
    model = load_model(spec.model)
    design, records = Design(spec), ledger.load()
    dataset = assemble(design, records, confidence, model.metrics, model.headline)
    dataset.attrs.update(source_provenance(ledger.read_identity() or {}))
    failures = failure_table(dataset, design, records)
    try:
        write_netcdf(dataset, spec.output / RESULTS_FILE, failures)
    except OSError as error:
        raise CampaignError(
            f"cannot write {spec.output / RESULTS_FILE}: {error.strerror or error}; every "
            "finished result is kept in the ledger: fix this and run again (nothing reruns)"
        ) from None
    return dataset
