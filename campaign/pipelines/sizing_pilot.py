"""A pilot for sizing a campaign: the first replicates of every cell, run and stored as
results of the campaign itself (nothing is wasted: a later `run` does only the rest), then
the estimate of what the whole campaign costs (see `campaign.analysis.sizing`)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any

from campaign.analysis.sizing import Estimate, estimate
from campaign.errors import CampaignError
from campaign.pipelines.run import run
from campaign.plan.plan import make_plan
from campaign.plan.target import campaign_spec
from campaign.results.ledger_table import read_table
from campaign.results.resource_group import task_costs
from campaign.results.resources import Costs, cell_label
from campaign.results.writing import run_level, write_results

PILOT_REPLICATES = 2


def pilot(
    spec: Any,
    replicates: int = PILOT_REPLICATES,
    target_hours: float = 1.0,
    job_cores: int = 16,
    say: Callable[[str], None] | None = None,
    **run_options: Any,
) -> tuple[Costs, Estimate]:
    """Run the first ``replicates`` replicates of every cell of ``spec`` (those already stored
    are not run again), and estimate the whole campaign from every finished task of it (not
    from tasks its output folder holds of levels or replicates the spec no longer has)."""
    spec = campaign_spec(spec)
    if replicates < 1:
        raise CampaignError(f"pilot replicates must be >= 1, got {replicates}")
    first = min(replicates, spec.replicates)
    if spec.precision is not None:  # within the first round, which every cell runs
        first = min(first, spec.precision.min_replicates)
    if spec.selection is not None:  # within the first stage, which every system runs
        first = min(first, spec.selection.first)
    pilot_spec = dataclasses.replace(spec, replicates=first, precision=None, selection=None)
    confidence = run_level(spec)  # that of the campaign's runs: sizing it changes no interval
    run(pilot_spec, say=say, confidence=confidence, **run_options)
    plan = make_plan(spec, check_identity=False)
    write_results(plan, confidence, say=say)  # of the whole campaign, the pilot's tasks done
    table = read_table(plan.ledger, plan.design)  # the campaign's tasks alone
    if not table.costs.ok.any():  # no success: what failed, from the records
        check_pilot(spec, plan.ledger.load(only=set(plan.design.keys())))
    found = task_costs(table)
    cell_tasks = {
        cell_label({"cell": plan.design.cell_label(cell)}): spec.replicates
        for cell in plan.design.cells
    }
    try:
        planned = estimate(found, cell_tasks, target_hours, job_cores)
    except ValueError as error:
        raise CampaignError(f"{spec.name}: {error}") from None
    if spec.selection is not None:  # the stages stop when they decide: a cell's most
        planned = dataclasses.replace(
            planned, at_most=f"select.max_replicates: {spec.replicates} replicates a cell"
        )
    elif spec.precision is not None:  # the rounds stop when the target is met
        planned = dataclasses.replace(
            planned, at_most=f"precision.max_replicates: {spec.replicates} replicates a cell"
        )
    return found, planned


def check_pilot(spec: Any, records: dict[str, dict[str, Any]]) -> None:
    """Refuse to size a campaign from a pilot none of whose tasks succeeded (their wall times
    say what failing costs, not what the campaign will): one line with its commonest error."""
    if not records or any(record["status"] == "ok" for record in records.values()):
        return
    errors = Counter(str(record.get("error") or "no error text") for record in records.values())
    error, count = min(errors.items(), key=lambda item: (-item[1], item[0]))
    others = len(records) - count
    also = f"; {others} with other errors" if others else ""
    raise CampaignError(
        f"{spec.name}: every one of the pilot's {len(records)} tasks failed, nothing to size the "
        f"campaign from ({count} with: {error}{also}); fix that and size it again (`campaign "
        "status` lists the errors)"
    )
