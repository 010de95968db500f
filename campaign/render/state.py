"""Where a campaign stands, in words: what `campaign validate`, `plan` and `status` print of
a spec and of a run's state (`campaign.plan.state.RunState`), for the whole design or one
shard of it."""

from __future__ import annotations

from typing import Any

from campaign.design.shards import Shard, as_shard, counts, mine
from campaign.errors import CampaignError
from campaign.plan.plan import identity
from campaign.plan.precision import precision_progress, precision_summary
from campaign.plan.selection import selection_summary
from campaign.render.costs import describe_costs
from campaign.results.check import judged
from campaign.results.ledger_table import read_table
from campaign.results.precision_variables import precision_state
from campaign.results.resource_group import task_costs
from campaign.results.spec_edited import other_spec_note
from campaign.spec.describe import describe_spec
from campaign.store.folder import SHARD_FOLDERS
from campaign.store.identity import identity_difference, read_identity


def validate_lines(spec: Any) -> list[str]:
    """A checked spec in words, and that it is valid."""
    return [describe_spec(spec), "spec is valid"]


def plan_lines(plan: Any, shard: str | Shard | None = None) -> list[str]:
    """What a run would do: the spec in words, damaged or changed stored results, the counts
    of tasks (of ``shard``'s, with one), and where precision rounds or a selection stand."""
    lines = [describe_spec(plan.spec)]
    if plan.damaged:
        lines.append(plan.damaged)
    if plan.changed:
        what = "would be kept as they are"
        if plan.beyond:
            what += f", and so would {plan.beyond} of cells the spec no longer has"
        if plan.rerun_changed:
            rounds = len(plan.again) < len(plan.changed)  # the rest as the rounds need them
            what = (
                f"would be set aside, {len(plan.again)} run again first"
                if rounds
                else ("would run again")
            )
        lines.append(
            f"{len(plan.changed)} stored results were computed before "
            f"{plan.change.describe(plan.spec.model)}: they {what}"
        )
    changed = f", {len(plan.again)} to compute again" if plan.rerun_changed else ""
    if shard is None:
        lines.append(
            f"plan: {plan.done} done, {len(plan.failed)} failed (will be retried), "
            f"{len(plan.missing)} missing{changed}; {len(plan.to_run)} tasks would run"
        )
        lines += results_lines(plan)[1:]
    else:
        shard = as_shard(shard)
        would = len(mine(plan.to_run, shard.owns(plan.design)))
        lines.append(f"plan: {counts(plan, shard).describe(shard)}; {would} tasks would run")
    return lines + precision_lines(plan)


def results_lines(plan: Any) -> list[str]:
    """Where results.nc is, and whether it holds another spec's numbers (the spec given is
    not the one it keeps, or its spec file was edited since): `run` writes this spec's, even
    with no task to run (fewer replicates, a level taken out). None when there is none."""
    if not plan.results_path.exists():
        return []
    other = other_spec_note(plan.results_path, plan.spec.text)
    return [f"results: {plan.results_path}"] + [f"  results.nc {other}"] * bool(other)


def status_lines(plan: Any, shard: str | Shard | None = None, limit: int = 20) -> list[str]:
    """Where the tasks stand (of ``shard``'s, with one), what they cost, the first ``limit``
    failed ones, and where the results are."""
    failed = plan.failed
    if shard is None:
        lines = [
            f"{plan.spec.name}: {plan.tasks} tasks: {plan.done} done, {len(plan.failed)} "
            f"failed, {len(plan.missing)} missing  (ledger {plan.ledger.folder})"
        ]
    else:
        shard = as_shard(shard)
        failed = [i for i in plan.failed if shard.owns(plan.design)[i]]
        where = f"(ledger {plan.ledger.folder})"
        lines = [f"{plan.spec.name}: {counts(plan, shard).describe(shard)}  {where}"]
    lines.append(f"  output: {plan.spec.output}")
    if shard is None:
        lines += shards_beside(plan.spec)
    if plan.damaged:
        lines.append(plan.damaged)
    if plan.changed:
        lines.append(
            f"  {len(plan.changed)} of the done results were computed before "
            f"{plan.change.describe(plan.spec.model)}: `campaign run` refuses them until told "
            "--rerun-changed (compute them again) or --accept-changed (keep them)"
        )
    lines += precision_lines(plan)
    table = plan.table if plan.table is not None else read_table(plan.ledger, plan.design)
    lines += describe_costs(task_costs(table, plan.replicates.window))
    lines += failed_lines(plan, failed, limit, table)
    return lines + results_lines(plan)


def shards_beside(spec: Any) -> list[str]:
    """A line naming the shard folders in the spec's output folder, whose tasks the counts
    above include only once merged (a sharded campaign's folder before its merge says 0
    done); another line for those holding another campaign (left from before `--new`), which
    `merge` refuses."""
    output, ours, others = spec.output, [], []
    wanted = identity(spec)
    for path in sorted(p for p in output.glob(SHARD_FOLDERS) if p.is_dir()):
        try:
            stored = read_identity(path)
        except CampaignError:  # damaged: `merge` says so
            stored = None
        differs = stored is not None and identity_difference(stored, wanted)
        (others if differs else ours).append((path.name, differs))
    lines = []
    if ours:
        lines.append(
            f"  shard folders in it: {', '.join(name for name, _ in ours)}; their tasks count "
            f"here once merged (`campaign merge {output} -o {output}`); `--shard I/N` counts "
            "one shard's"
        )
    if others:
        lines.append(
            f"  shard folders of another campaign in it ({others[0][1]}): "
            f"{', '.join(name for name, _ in others)}; `campaign merge` refuses them"
        )
    return lines


def unfinished(plan: Any, shard: str | Shard | None = None) -> bool:
    """Whether `status` ends with failures: failed tasks, or with a shard its failed or
    missing ones."""
    if shard is None:
        return bool(plan.failed)
    mine_now = counts(plan, as_shard(shard))
    return bool(mine_now.failed or mine_now.missing)


def precision_lines(plan: Any) -> list[str]:
    """With a precision target: where the cells stand, and per precision metric how far; with
    a selection, where its systems stand."""
    lines = []
    if plan.rounds is not None:
        state = precision_state(plan.rounds)
        lines.append(precision_summary(state, plan.rounds.target, plan.spec.replicates))
        lines += precision_progress(plan)
    if plan.stages is not None:
        lines.append(selection_summary(plan.stages.state, plan.spec.output))
    return lines


def failed_lines(plan: Any, failed: list[int], limit: int, table: Any = None) -> list[str]:
    """The first ``limit`` of the ``failed`` tasks, a line each with its levels, seed and
    error (``table``'s, for a success refused once every record was read)."""
    listed = list(plan.design.tasks(failed[:limit]))
    if not listed:  # nothing to read: a ledger of millions of records takes seconds to scan
        return []
    records = plan.ledger.load(only={task.key for task in listed})
    lines = []
    for index, task in zip(failed, listed):
        record = judged(records[task.key], plan.spec)  # a success the spec now refuses
        if record["status"] == "ok" and table is not None:  # its metrics clash with others'
            record = {**record, "error": table.errors.get(index)}
        cell = ", ".join(f"{k}={v}" for k, v in plan.design.cell_label(task.cell).items())
        lines.append(
            f"  failed: {cell or '(single cell)'} replicate {task.replicate} "
            f"(seed {task.seed}, {record.get('attempts', 1)} attempts): {record.get('error')}"
        )
    if len(failed) > limit:
        lines.append(f"  ... {len(failed) - limit} more failed tasks (--limit N shows more)")
    return lines
