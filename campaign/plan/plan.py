"""The plan of a campaign: its spec checked against the model, and where each task stands.

`campaign.spec.load` checks everything it can without the model. Making the plan loads the model
once, lets it refuse the parameters of any cell before anything runs, and reads the ledger:
each task of the design is done, failed or missing (`campaign.plan.state.RunState`). The
`Plan` itself does not change: the spec, the model, the design and the digests of the
model's sources.

With a precision target, only the tasks of each cell's rounds so far count; the rounds are
replayed from the stored results (`campaign.plan.replicates.PrecisionRounds`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from campaign.analysis.stats import Rounds
from campaign.design.tasks import Design, cell_params, iter_cells
from campaign.errors import CampaignError, ParameterError
from campaign.models import check_params
from campaign.models.contract import BREAKDOWN, SAMPLE, Model
from campaign.plan.command_declaration import command_declaration
from campaign.plan.model_code import current_model
from campaign.plan.precision import precision_progress, precision_summary
from campaign.plan.program_sources import command_sources
from campaign.plan.replicates import check_returned_metrics, replicates_of, stopping_rule_of
from campaign.plan.sources import ON_CHANGE, Sources, compare, current_sources
from campaign.plan.state import Plan, RunState
from campaign.plan.target import campaign_spec
from campaign.results.ledger_table import read_table, records_table
from campaign.results.names import documented_name, name_clashes
from campaign.spec.describe import precision_target
from campaign.spec.load import Spec
from campaign.spec.program_metrics import DERIVED
from campaign.spec.types import DEFAULT_PERCENTILES
from campaign.store.folder import RESULTS_FILE, aside_folder_name
from campaign.store.identity import identity_difference
from campaign.store.ledger import Ledger

__all__ = [
    "Plan",
    "RunState",
    "check_model",
    "check_returned_metrics",
    "identity",
    "make_plan",
    "precision_progress",
    "precision_summary",
    "precision_target",
    "replay_rounds",
    "stopping_rule_of",
]


def check_model(spec: Spec) -> Model:
    """The spec's model, once it has accepted the spec: the metrics the spec names (when the
    model declares its metrics) and the parameters of every cell."""
    where = f"{spec.path or 'spec'}: "
    if spec.command is not None:
        model = command_declaration(spec.command)
        if spec.command.metrics.kind == "parse":  # imported here, as the results read it
            try:
                current_model(spec.command.metrics.name)
            except ValueError as error:
                raise CampaignError(f"{where}model.metrics.parse: {error}") from None
    else:
        try:
            model = current_model(spec.model)
        except ValueError as error:
            raise CampaignError(f"{where}model: {error}") from None
    check_declared_metrics(spec, model.metrics)
    needed = [("precision.metrics", m) for m in (spec.precision.metrics if spec.precision else ())]
    needed += [("select.metric", spec.selection.metric)] if spec.selection else []
    for key, metric in needed if model.metrics else ():
        documented = documented_name(metric, model.metrics)
        derived = DERIVED.match(metric)
        if documented is None and derived and derived["owner"] in model.samples:
            raise CampaignError(
                f"{where}{key}: {metric!r} is the size or a percentile of the sample "
                f"{derived['owner']!r} of model {spec.model}, which results derive from each "
                "task's sample; a target needs a metric the model returns, one number per task"
            )
        if documented is None:
            raise CampaignError(
                f"{where}{key}: {metric!r} is not a metric of model {spec.model}; its metrics: "
                f"{', '.join(model.metrics)}"
            )
        not_a_number = per_task_problem(metric, model.metrics[documented])
        if not_a_number:
            raise CampaignError(f"{where}{key}: {metric!r} of model {spec.model} {not_a_number}")
    check_target_units(spec, model.metrics)
    check_percentiles(spec, model)
    if model.checks:
        for cell in iter_cells(spec):
            try:
                check_params(model, spec.model, cell_params(spec, cell))
            except ValueError as error:
                levels = ", ".join(f"{f.name}={f.labels[i]}" for f, i in zip(spec.factors, cell))
                cell_text = f" (cell {levels})" if levels else ""
                raise CampaignError(f"{where}params{cell_text}: {error}") from None
    return model


def check_target_units(spec: Spec, declared: Mapping[str, Any] | None) -> None:
    """Refuse an absolute precision target (in metric units) over metrics the model declares
    in different units: one half-width cannot be seconds for one and a fraction for another."""
    precision = spec.precision
    if precision is None or precision.relative or not declared:
        return
    units = {}
    for metric in precision.metrics:
        documented = documented_name(metric, declared)
        if documented is not None and declared[documented].get("units") is not None:
            units[metric] = str(declared[documented]["units"])
    if len(set(units.values())) > 1:
        each = ", ".join(f"{metric} {unit}" for metric, unit in units.items())
        raise CampaignError(
            f"{spec.path or 'spec'}: precision.half_width: {precision.half_width:g} is in each "
            f"metric's units (relative: false), but their units differ: {each}; list metrics "
            "of one unit in precision.metrics, or use relative: true (a share of each mean)"
        )


def check_percentiles(spec: Spec, model: Model) -> None:
    """Refuse ``percentiles:`` (other than the default) of a campaign that keeps no sample of
    a model that declares its metrics: they would be ignored."""
    if spec.percentiles == DEFAULT_PERCENTILES or not model.metrics:
        return
    where = f"{spec.path or 'spec'}: percentiles: "
    if not model.samples:
        raise CampaignError(
            f"{where}model {spec.model} returns no sample (a 1-D array per task), so no "
            "percentiles are kept; leave percentiles out"
        )
    kept = [documented_name(metric, model.metrics) for metric in spec.metrics or model.metrics]
    if not any(name in model.samples for name in kept):
        raise CampaignError(
            f"{where}none of the kept metrics ({', '.join(spec.metrics or ())}) is a sample, so "
            f"no percentiles are kept; keep a sample of model {spec.model} in metrics: "
            f"({', '.join(model.samples)}), or leave percentiles out"
        )


def per_task_problem(metric: str, declared: Mapping[str, Any]) -> str | None:
    """Why a declared metric cannot be judged by a precision target or a selection, which
    need one number per task: it is a sample or a breakdown (None when it is a number)."""
    kind = declared.get("kind")
    if kind == SAMPLE:
        what = "a sample (a 1-D array per task)"
    elif kind == BREAKDOWN:
        what = f"a breakdown (numbers per {metric})"
    else:
        return None
    return f"is {what}, not one number per task; a target needs a metric with one number per task"


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
    stored = {"model": spec.model, "params": spec.params, "seed": spec.seed, "name": spec.name}
    if spec.command is not None:
        stored["command"] = spec.command.identity()
    return stored


def replay_rounds(design: Design, records: Mapping[str, dict[str, Any]]) -> Rounds | None:
    """The rounds stored records give a design (None without a precision target): what
    `campaign.results.assemble` needs beside the records."""
    replicates = replicates_of(design)
    replicates.replay(records_table(design, records), np.zeros(design.size, dtype=np.int8))
    return replicates.rounds


def make_plan(
    spec: str | Path | Spec,
    check_identity: bool = True,
    on_change: str = "refuse",
    *,
    model: Model | None = None,
    ledger: Ledger | None = None,
    compare_sources: bool | None = None,
    whole: bool = False,
) -> RunState:
    """Check the spec against its model and classify every task of the design as done,
    failed or missing, from the ledger alone.

    With ``check_identity``, the stored results must mean what the spec asks for: same model,
    params and seed, computed from the same model code and input files. Done tasks computed
    from other sources are refused in one line, unless ``on_change`` says to run them again
    ("rerun": they count as to run) or to keep them ("accept").

    ``model``: the spec's model as `check_model` returned it (checked here when not given);
    ``ledger``: the output folder's ledger, when the caller holds one already;
    ``compare_sources`` (default: ``check_identity``): name the done tasks computed from
    other sources (``changed``) even without checking the identity, as `status` does;
    ``whole``: read the records whole, once, and keep their table (`RunState.read`). With a
    precision target, only the tasks of each cell's rounds so far count; the rounds are
    replayed from the stored results (see `campaign.analysis.stats.precision_rounds`).
    """
    if on_change not in ON_CHANGE:
        raise CampaignError(f"on_change must be one of {', '.join(ON_CHANGE)}, got {on_change!r}")
    spec = campaign_spec(spec)
    model = model or check_model(spec)
    ledger = ledger or Ledger(spec.output)
    design = Design(spec)
    sources = change = unread = None
    if check_identity:
        ledger.check_identity(identity(spec))
    if check_identity if compare_sources is None else compare_sources:
        sources = design_sources(design)
        try:
            stored = ledger.read_identity() if ledger.has_records() else None
            lost = "missing" if stored is None and ledger.has_records() else None
        except CampaignError:  # campaign.json damaged: status still counts
            if check_identity:
                raise
            stored, lost = None, "damaged"
        if lost:
            unread = (
                f"  {spec.output / 'campaign.json'} is {lost}: these counts are the ledger's; "
                "`run` refuses the folder until it is restored or the campaign starts afresh "
                "(--new; new=True from Python)"
            )
        elif stored is not None and not check_identity:
            unread = other_campaign(spec, stored)
        change = compare((stored or {}).get("sources"), sources)
    state = RunState(Plan(spec, model, design, sources), ledger)
    state.read(whole=whole)
    count_clashes(state)
    if unread:
        state.damaged = "; ".join(filter(None, [state.damaged, unread]))
    state.change = change
    if change is None:
        return state
    state.mark_changed(change)
    if state.changed:
        keys = design.keys()
        changed = {keys[i][:16] for i in state.changed}
        state.change = change.narrowed(changed, sources, set(design.cell_digests))
        if on_change == "refuse":
            raise changed_refusal(state)
        if on_change == "rerun":
            state.set_changed_aside()
        else:  # kept with those of the design, they count as done once their level is back
            state.beyond = state.changed_beyond()
    return state


def count_clashes(state: RunState) -> None:
    """Count a stored success whose metrics clash with other tasks' as failed, as results.nc
    and so `run` count it (it runs again, with the model as it is now): read whole only when
    the status was read from the records' heads and a stored success holds a sample or a
    breakdown (`campaign.results.ledger_table.StoredStatus`), without which none can clash."""
    if state.done and state.replicates.may_clash:
        state.take_table(read_table(state.ledger, state.design))


def other_campaign(spec: Spec, stored: dict[str, Any]) -> str | None:
    """What `status` says of a folder whose stored results mean another campaign than
    ``spec`` (`run` refuses it), None when they mean the same."""
    detail = identity_difference(stored, identity(spec))
    if detail is None:
        return None
    return (
        f"  {spec.output} holds results of a different campaign ({detail}): these counts and "
        "its results.nc are theirs; `run` refuses the folder until the spec means what they "
        "do, or the campaign starts afresh (--new; new=True from Python)"
    )


def design_sources(design: Design) -> Sources:
    """Digests of the model's code and of the input files of every cell of the design."""
    spec = design.spec
    cells = (
        (digest, cell_params(spec, cell)) for digest, cell in zip(design.cell_digests, design.cells)
    )
    if spec.command is not None:
        return command_sources(spec.command, cells)
    return current_sources(spec.model, cells)


def changed_refusal(plan: RunState) -> ParameterError:
    """One line: which stored results were computed from other sources, and what to do."""
    count = len(plan.changed)
    results = "1 stored result was" if count == 1 else f"{count} stored results were"
    return ParameterError(
        f"{plan.spec.output}: {results} computed before {plan.change.describe(plan.spec.model)}; "
        "rerun with {on_change='rerun'} to compute them again (the earlier ones are kept in "
        f"{aside_folder_name('changed', '*')}), or with {{on_change='accept'}} to keep them as "
        f"they are (recorded in {RESULTS_FILE})",
        "on_change='rerun'",
        "on_change='accept'",
    )
