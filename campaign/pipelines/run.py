"""Tie the data flow together: spec -> plan -> dispatch -> ledger -> results.nc.

This is the one place that knows the order of the steps; each step lives in its own module.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from campaign.analysis.levels import ChosenLevels, check_rerun_chosen
from campaign.cluster.cluster_options import ClusterOptions
from campaign.cluster.main_guard import refuse_while_importing_main
from campaign.design.shards import EveryTask, Shard, as_shard, counts, placed
from campaign.errors import BadValue
from campaign.execute import dispatch
from campaign.execute.execution_options import WAIT_WORKERS_SECONDS, ExecutionOptions
from campaign.execute.items import TaskItems
from campaign.models.contract import Model
from campaign.plan.command_declaration import worker_code, worker_model
from campaign.plan.early_stop import SameFailure, StoppedEarly
from campaign.plan.outside_files import appeared_files, appeared_note
from campaign.plan.plan import check_model, identity, make_plan
from campaign.plan.sources import ON_CHANGE, Sources
from campaign.plan.state import RunState
from campaign.plan.target import campaign_spec
from campaign.render.progress import Progress
from campaign.results.check import CheckedStore
from campaign.results.metric_parsers import (
    DEFINITIONS,
    Definition,
    MetricsParser,
    Redefining,
    definitions_of,
    loaded,
    redefined_by,
)
from campaign.results.writing import run_level, write_results
from campaign.spec.load import Spec
from campaign.store.derived import DERIVED_NAMES
from campaign.store.folder import RESULTS_FILE, check_output
from campaign.store.ledger import Ledger
from campaign.store.outputs import KeepNotes, keep_outputs


def run(
    spec: str | Path | Spec,
    workers: int | None = None,
    scheduler: str | None = None,
    retries: int = 1,
    confidence: float | None = None,
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
    keep_going: bool = False,
    where: Sequence[str] = (),
) -> xr.Dataset:
    """Run what is missing of a campaign and return its results (also written to results.nc).

    Finished tasks are stored as they complete, so an interrupted run loses nothing: running
    it again runs only the rest. `scheduler` (an address) or `cluster` (a cluster file) choose
    the Dask cluster, `security` a TLS settings file (see `campaign.cluster.open`); `task_timeout`
    fails tasks running longer (seconds); `wait_workers` is how long to wait while there is no
    worker (default 60 s, no limit with a cluster file, whose batch jobs may queue for long).
    `replicate_tail` and `locality` switch tail work stealing / straggler replication and
    input locality of batches (see `campaign.execute.dispatch`); ``confidence``: `run_level`'s.
    `on_change` says what to do with stored results computed before the model's code or an
    input file changed: "refuse" (one error line, nothing runs), "rerun" (set them aside and
    compute them again) or
    "accept" (keep them; the choice is recorded in results.nc).

    ``shard`` ("I/N" or a `campaign.design.shards.Shard`) runs only that shard's part of the design
    into its own folder (``output``, else ``shard-I-of-N`` in the spec's output folder), which
    then holds its ledger but no results.nc: the Dataset returned is assembled in memory and
    says in its ``shard*`` attributes how far the shard stands; `campaign.pipelines.merge` joins the
    shards. ``output`` names the output folder instead of the spec's. ``batch_size`` fixes the
    tasks per batch (default: sized from measured durations); results do not depend on it.

    A run whose first results all fail alike (`campaign.plan.early_stop`) stops with one line
    naming it, what finished stored; ``keep_going`` runs every task regardless. ``where``
    (``{factor: level or [levels]}`` or "factor=level[,level]" texts): only those levels run.
    """
    refuse_while_importing_main()  # before the output folder is locked: its script's is
    say = say or (lambda message: None)
    shard = as_shard(shard)
    if on_change not in ON_CHANGE:
        raise BadValue("on_change", on_change, f"must be one of {', '.join(ON_CHANGE)}")
    if confidence is not None and not 0 < confidence < 1:
        raise BadValue("confidence", confidence, "must be between 0 and 1")
    hosts = ClusterOptions(workers, scheduler, cluster, security)
    if wait_workers is None:
        wait_workers = hosts.default_wait(WAIT_WORKERS_SECONDS)
    options = ExecutionOptions(
        retries=retries,
        task_timeout=task_timeout,
        wait_workers=wait_workers,
        replicate_tail=replicate_tail,
        locality=locality,
        batch_size=batch_size,
        progress=progress,
    )
    own = campaign_spec(spec)
    spec = placed(own, output, shard)
    if spec.resources is not None:  # every task asks them of a worker
        hosts = replace(hosts, resources=spec.resources.dask())
        options = replace(options, resources=spec.resources.dask())
    model = check_model(spec)  # every cell, before anything runs
    check_output(spec, given=output is not None and spec.output != own.output)
    shard = ChosenLevels.of(spec, shard, where) if where else shard
    ledger = Ledger(spec.output)
    with ledger.lock():
        confidence = confidence or run_level(spec, new)
        return _run_holding_the_output(
            spec, model, ledger, hosts, options, confidence, new, say, on_change, shard, keep_going
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
    keep_going: bool = False,
) -> xr.Dataset:
    """The steps of `run`, while this process alone may write the output folder."""
    plan, sources, parsers = prepared(spec, model, ledger, new, say, on_change, shard, confidence)
    todo = shard.mine(plan.to_run, plan.design)
    say(f"{spec.name}: {run_line(plan, shard, len(todo))}")
    if isinstance(shard, ChosenLevels):
        say(shard.describe())
    run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    attempted = np.zeros(plan.design.size, dtype=bool)  # a task fails at most once per run
    todo = plan.replicates.first(todo, plan.done, model)
    cells = np.unique(np.asarray(todo, dtype=np.int64) // spec.replicates).size  # of task i
    checks = Checks(None if keep_going else SameFailure(cells), parsers)
    notes = KeepNotes()  # what the program's keep: patterns left out, said at the end
    try:
        if todo:
            with where.client(say) as client:
                while todo:
                    attempted[todo] = True
                    execute_tasks(client, plan, todo, run_id, options, say, sources, checks, notes)
                    plan.next_round()
                    mine = np.asarray(shard.mine(plan.to_run, plan.design), dtype=np.int64)
                    todo = mine[~attempted[mine]].tolist()
    except StoppedEarly:
        finish(plan, spec, model, ledger, shard, confidence, say)  # what finished, in results.nc
        raise
    for line in notes.lines():
        say(line)
    appeared = appeared_files(spec.command, sources.code) if spec.command and sources else []
    if appeared:
        say(appeared_note(appeared))
    return finish(plan, spec, model, ledger, shard, confidence, say)


def prepared(
    spec: Spec,
    model: Model,
    ledger: Ledger,
    new: bool,
    say: Callable[[str], None],
    on_change: str,
    shard: Shard | EveryTask,
    confidence: float,
) -> tuple[RunState, Sources | None, list[tuple[Definition, MetricsParser]]]:
    """The plan of a run, the digests of its sources as they are now (what its results must
    be computed from) and the parsers a remetric recorded (loaded before anything changes),
    once the output folder is ready for it: earlier results set aside as asked (``new``,
    changed sources) or as needed (damaged records), campaign.json written.

    When stored results were set aside, results.nc is written again at once, without them
    (its attribute ``incomplete`` says why they are missing): were the run stopped, results.nc
    would otherwise go on showing what is no longer the campaign's."""
    if new:
        aside = ledger.set_aside(also=[RESULTS_FILE, *DERIVED_NAMES])
        if aside:
            say(f"Earlier results set aside in {aside}")
    plan = make_plan(spec, on_change=on_change, model=model, ledger=ledger)
    definitions = (
        definitions_of(ledger.read_identity()) if shard.mine(plan.to_run, plan.design) else []
    )
    parsers = loaded(definitions, str(spec.output))  # new tasks can be computed with them
    set_aside = []
    if plan.damaged:
        kept = plan.ledger.set_damaged_aside()
        say(f"{plan.damaged} (their files are kept in {kept})")
        set_aside.append(f"damaged records (their files in {kept})")
    sources, choice = plan.sources, None
    if plan.changed:
        choice = plan.source_choice(on_change)
        if plan.rerun_changed:
            check_rerun_chosen(plan, shard)  # with where, no changed result may stay
            change, beyond = plan.change, set()

            def affected(key: str) -> bool:
                if change.beyond(key):
                    beyond.add(key)
                return change.affects(key)

            moved, folder = ledger.set_records_aside(affected)
            others = (
                f" ({len(beyond)} of them of cells the spec no longer has, which may have read "
                "what changed: they run again once a spec has them)"
                if beyond
                else ""
            )
            say(
                f"{choice['change']}: {moved} stored results set aside in {folder}; they run "
                f"again{others}"
            )
            set_aside.append(f"{moved} results computed before {choice['change']} (in {folder})")
            plan = make_plan(spec, check_identity=False, model=model, ledger=ledger)
        else:
            beyond = choice.get("beyond")
            others = f" ({beyond} of them of cells the spec no longer has)" if beyond else ""
            say(
                f"{choice['change']}: {choice['results']} stored results kept as they are"
                f"{others} (as asked; recorded in results.nc)"
            )
    earlier = ledger.read_identity() if ledger.same_campaign(identity(spec)) else None
    inputs = sources.inputs if sources is not None else {}
    extra = shard.stored(plan.design, inputs)
    ledger.write_identity(stored_identity(spec, sources, earlier, choice, extra))
    if set_aside and shard.whole and (spec.output / RESULTS_FILE).exists():
        incomplete = (
            f"written as a run set aside {' and '.join(set_aside)} to compute them again: "
            "their tasks count as missing here until a run finishes (run the campaign again)"
        )
        now = make_plan(spec, check_identity=False, model=model, ledger=ledger)  # the run's own
        write_results(now, confidence, attrs={"incomplete": incomplete}, say=say)  # stays as is
        say(f"{RESULTS_FILE} written again without them: they count as missing until this run ends")
    return plan, sources, parsers


def finish(
    plan: RunState,
    spec: Spec,
    model: Model,
    ledger: Ledger,
    shard: Shard | EveryTask,
    confidence: float,
    say: Callable[[str], None],
) -> xr.Dataset:
    """The end of a run: the ledger compacted, results.nc written (a shard's: in memory)."""
    ledger.compact()
    if shard.whole:
        return write_results(plan, confidence, say=say)
    return shard_results(spec, model, ledger, shard, confidence)


@dataclass(frozen=True)
class Checks:
    """What a run does to finished tasks' records besides storing them."""

    watch: SameFailure | None  # stops the run when its first results all failed the same way
    parsers: list[tuple[Definition, MetricsParser]]  # recorded by remetric: applied to each


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
    choice made about changed sources is listed; the parsers a remetric recorded stay (see
    `campaign.results.metric_parsers`). ``extra``: more fields (a shard's).
    """
    stored = stored or {}
    record = identity(spec)
    if sources is not None:
        record["sources"] = sources.stored(stored.get("sources"))
    changes = list(stored.get("source_changes") or [])
    if choice is not None:
        changes.append(choice)
    if changes:
        record["source_changes"] = changes
    if stored.get(DEFINITIONS):  # metrics a remetric redefined: still theirs
        record[DEFINITIONS] = stored[DEFINITIONS]
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
    checks: Checks | None = None,
    notes: KeepNotes | None = None,
) -> None:
    """Run the given task indices on the cluster, storing each finished batch in the ledger,
    its tasks' kept outputs first (and, with a precision target, in the plan's task table);
    ``checks``: the metrics of finished tasks computed with the parsers a remetric recorded,
    and a watch that stops the run once its first results all failed the same way; ``notes``
    counts what the tasks' keep: patterns left out."""
    watch = checks.watch if checks else None
    spec = plan.spec
    items = TaskItems(plan, todo, run_id)  # made as dispatch takes them
    bar = Progress(len(items), enabled=options.progress)

    def stored(records: list[dict[str, Any]]) -> None:
        keep_outputs(spec.output, records)  # on disk before the records that name them
        plan.ledger.append(records)
        plan.stored(records)
        if notes is not None:
            notes.add(records)
        if watch is not None and watch.stop(records):
            raise watch.stopped(spec.path or spec.name)

    try:
        store = CheckedStore(spec, stored)
        if checks and checks.parsers:
            store = Redefining(checks.parsers, store)
        model = worker_model(spec, sources, redefined_by(checks.parsers if checks else []))
        code = worker_code(model, sources)
        dispatch(client, model, items, store, options, bar, say=say, code=code)
    finally:
        bar.finish()
