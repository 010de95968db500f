"""Tie the data flow together: spec -> plan -> dispatch -> ledger -> results.nc.

This is the one place that knows the order of the steps; each step lives in its own module.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import xarray as xr

from campaign.cluster.options import ClusterOptions
from campaign.design.shards import EveryTask, Shard, as_shard, counts, placed
from campaign.design.tasks import cell_params
from campaign.errors import BadValue, CampaignError
from campaign.execute import Item, dispatch
from campaign.execute.options import WAIT_WORKERS_SECONDS, ExecutionOptions
from campaign.models.contract import Model
from campaign.plan.command import worker_model
from campaign.plan.plan import Plan, as_spec, check_model, identity, make_plan
from campaign.plan.sources import ON_CHANGE, Sources, task_inputs
from campaign.plan.state import RunState
from campaign.render.progress import Progress
from campaign.results.assemble import assemble_with_groups
from campaign.results.check import CheckedStore
from campaign.results.netcdf import write_netcdf
from campaign.results.provenance import recomputed_provenance, source_provenance
from campaign.results.resources import resource_table
from campaign.results.table import failure_table
from campaign.spec.load import Spec
from campaign.store.durable import room_left, write_failure
from campaign.store.folder import RESULTS_FILE
from campaign.store.ledger import Ledger
from campaign.store.outputs import KeepNotes, keep_outputs


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
    shard: str | Shard | None = None,
    output: str | Path | None = None,
    batch_size: int | None = None,
) -> xr.Dataset:
    """Run what is missing of a campaign and return its results (also written to results.nc).

    Finished tasks are stored as they complete, so an interrupted run loses nothing: running
    it again runs only the rest. `scheduler` (an address) or `cluster` (a cluster file) choose
    the Dask cluster, `security` a TLS settings file (see `campaign.cluster.open`); `task_timeout`
    fails tasks running longer (seconds); `wait_workers` is how long to wait while there is no
    worker (default 60 s, no limit with a cluster file, whose batch jobs may queue for long).
    `replicate_tail` and `locality` switch tail work stealing / straggler replication and
    input locality of batches (see `campaign.execute.dispatch`). `on_change` says what to do
    with stored results computed before the model's code or an input file changed: "refuse"
    (one error line, nothing runs), "rerun" (set them aside and compute them again) or
    "accept" (keep them; the choice is recorded in results.nc).

    ``shard`` ("I/N" or a `campaign.design.shards.Shard`) runs only that shard's part of the design
    into its own folder (``output``, else ``shard-I-of-N`` in the spec's output folder), which
    then holds its ledger but no results.nc: the Dataset returned is assembled in memory and
    says in its ``shard*`` attributes how far the shard stands; `campaign.store.merge` joins the
    shards. ``output`` names the output folder instead of the spec's. ``batch_size`` fixes the
    tasks per batch (default: sized from measured durations); results do not depend on it.
    """
    say = say or (lambda message: None)
    shard = as_shard(shard)
    if on_change not in ON_CHANGE:
        raise BadValue("on_change", on_change, f"must be one of {', '.join(ON_CHANGE)}")
    if not 0 < confidence < 1:
        raise BadValue("confidence", confidence, "must be between 0 and 1")
    where = ClusterOptions(workers, scheduler, cluster, security)
    if wait_workers is None:
        wait_workers = where.default_wait(WAIT_WORKERS_SECONDS)
    options = ExecutionOptions(
        retries=retries,
        task_timeout=task_timeout,
        wait_workers=wait_workers,
        replicate_tail=replicate_tail,
        locality=locality,
        batch_size=batch_size,
        progress=progress,
    )
    spec = placed(as_spec(spec), output, shard)
    if spec.resources is not None:  # every task asks them of a worker
        where = replace(where, resources=spec.resources.dask())
        options = replace(options, resources=spec.resources.dask())
    model = check_model(spec)  # every cell, before anything runs
    check_output(spec)
    ledger = Ledger(spec.output)
    with ledger.lock():
        return _run_holding_the_output(
            spec, model, ledger, where, options, confidence, new, say, on_change, shard
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
    model: Model,
    ledger: Ledger,
    where: ClusterOptions,
    options: ExecutionOptions,
    confidence: float,
    new: bool,
    say: Callable[[str], None],
    on_change: str,
    shard: Shard | EveryTask,
) -> xr.Dataset:
    """The steps of `run`, while this process alone may write the output folder."""
    if new:
        aside = ledger.set_aside(also=[RESULTS_FILE])
        if aside:
            say(f"Earlier results set aside in {aside}")
    plan = make_plan(spec, on_change=on_change, model=model, ledger=ledger)
    if plan.damaged:
        kept = plan.ledger.set_damaged_aside()
        say(f"{plan.damaged} (their files are kept in {kept})")
    sources, choice = plan.sources, None
    if plan.changed:
        choice = source_choice(plan, on_change)
        if plan.rerun_changed:
            moved, folder = ledger.set_records_aside(plan.change.affects)
            say(f"{choice['change']}: {moved} stored results set aside in {folder}; they run again")
            plan = make_plan(spec, check_identity=False, model=model, ledger=ledger)
        else:
            say(
                f"{choice['change']}: {choice['results']} stored results kept as they are "
                "(as asked; recorded in results.nc)"
            )
    earlier = ledger.read_identity() if ledger.same_campaign(identity(spec)) else None
    inputs = sources.inputs if sources is not None else {}
    extra = shard.stored(plan.design, inputs)
    ledger.write_identity(stored_identity(spec, sources, earlier, choice, extra))
    todo = shard.mine(plan.to_run, plan.design)
    say(f"{spec.name}: {run_line(plan, shard, len(todo))}")
    run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    attempted: set[int] = set()  # a task fails at most once per run; a rerun retries it
    todo = plan.replicates.first(todo, plan.done, model)
    notes = KeepNotes()  # what the program's keep: patterns left out, said at the end
    if todo:
        with where.client(say) as client:
            while todo:
                attempted.update(todo)
                execute_tasks(client, plan, todo, run_id, options, say, sources, notes)
                plan.next_round()
                todo = [i for i in shard.mine(plan.to_run, plan.design) if i not in attempted]
    for line in notes.lines():
        say(line)
    ledger.compact()
    if shard.whole:
        return write_results(plan, confidence)
    return shard_results(spec, model, ledger, shard, confidence)


def run_line(plan: RunState, shard: Shard | EveryTask, todo: int) -> str:
    """What a run says before it starts: the tasks, how many are done and to run."""
    round_ = plan.replicates.this_round
    if shard.whole:
        scope = plan.replicates.scope()
        return f"{scope}; {plan.done} already done, {todo} to run{round_}"
    return f"{counts(plan, shard).describe(shard)}; {todo} to run{round_} (into {plan.spec.output})"


def shard_results(
    spec: Spec, model: Model, ledger: Ledger, shard: Shard, confidence: float
) -> xr.Dataset:
    """A shard's results, in memory only (a shard's folder holds no results.nc: it holds part
    of a campaign), with how far the shard stands in its ``shard*`` attributes."""
    plan = make_plan(spec, check_identity=False, model=model, ledger=ledger)
    dataset = write_results(plan, confidence, write=False)
    mine_now = counts(plan, shard)
    dataset.attrs.update(
        shard=shard.label,
        shard_tasks=mine_now.tasks,
        shard_ok=mine_now.done,
        shard_failed=mine_now.failed,
        shard_missing=mine_now.missing,
    )
    return dataset


def source_choice(plan: RunState, on_change: str) -> dict[str, Any]:
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
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """campaign.json: what the stored results mean and what they were computed from.

    From ``stored`` (campaign.json of the same campaign, if any), input digests of files the
    design no longer reads are kept (a level removed and added back is no change), and every
    choice made about changed sources is listed. ``extra``: more fields (a shard's).
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
    record.update(extra or {})
    return record


def execute_tasks(
    client: Any,
    plan: RunState,
    todo: list[int],
    run_id: str,
    options: ExecutionOptions,
    say: Callable[[str], None],
    sources: Sources | None,
    notes: KeepNotes | None = None,
) -> None:
    """Run the given task indices on the cluster, storing each finished batch in the ledger,
    its tasks' kept outputs first (and, with a precision target, in the plan's task table);
    ``notes`` counts what the tasks' keep: patterns left out."""
    spec = plan.spec
    items = task_items(plan, todo, run_id)
    indices = {item.key: index for index, item in zip(todo, items)}
    bar = Progress(len(items), enabled=options.progress)

    def stored(records: list[dict[str, Any]]) -> None:
        keep_outputs(spec.output, records)  # on disk before the records that name them
        plan.ledger.append(records)
        plan.stored(records, indices)
        if notes is not None:
            notes.add(records)

    try:
        store = CheckedStore(spec, stored)
        model, code = worker_model(spec, sources), sources.code_digest if sources else None
        dispatch(client, model, items, store, options, bar, say=say, code=code)
    finally:
        bar.finish()


def task_items(plan: Plan | RunState, todo: list[int], run_id: str) -> list[Item]:
    """What dispatch sends for the given task indices: params (one dict per cell: the worker
    copies it for each task), seed, and the fields of the ledger record."""
    spec, design, model = plan.spec, plan.design, plan.model
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
    return items


def write_results(
    plan: RunState,
    confidence: float = 0.95,
    write: bool = True,
    attrs: dict[str, Any] | None = None,
) -> xr.Dataset:
    """Assemble results.nc from the ledger of a plan's output folder (``write``: and write it;
    ``attrs``: more global attributes)."""
    spec, design, model = plan.spec, plan.design, plan.model
    records = plan.ledger.load()
    plan.replay(records)
    dataset, groups = assemble_with_groups(
        design, records, confidence, model.metrics, model.headline, plan.rounds, plan.stages
    )
    dataset.attrs.update(source_provenance(plan.ledger.read_identity() or {}))
    dataset.attrs.update(recomputed_provenance(records))
    dataset.attrs.update(attrs or {})
    if not write:
        return dataset
    failures = failure_table(dataset, design, records)
    keys = set(design.keys())
    resources = resource_table({key: r for key, r in records.items() if key in keys})
    try:
        write_netcdf(dataset, spec.output / RESULTS_FILE, failures, resources, groups)
    except OSError as error:
        kept = "every finished result is kept in the ledger"
        raise CampaignError(
            f"cannot write {spec.output / RESULTS_FILE}: "
            f"{write_failure(error, spec.output, kept, 'run again (nothing reruns)')}"
        ) from None
    except RuntimeError as error:  # the netCDF library's, "HDF error"
        raise CampaignError(
            f"cannot write {spec.output / RESULTS_FILE}: {error}{room_left(spec.output)}; every "
            "finished result is kept in the ledger: fix this and run again (nothing reruns)"
        ) from None
    return dataset
