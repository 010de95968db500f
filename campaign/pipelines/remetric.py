"""Metrics later: recompute a finished campaign's metrics, or add new ones, from the outputs its
tasks kept, without running any simulation again.

Each finished task's kept outputs are read back (checked against their records) and given to
the metrics parser (`campaign.execute.command_metrics.metrics_from_outputs`, the function the
workers use at run time); the metrics it returns replace the stored ones of the same name and
join the others. The new records are stored in the ledger (a later success beats an earlier
one) and each says what recomputed it (``metrics_from``: the parser, the SHA-256 of its
code, when), so results.nc, written again, says so in its ``metrics_recomputed`` attribute
(as does every later results.nc made from those records). Nothing is stored unless every
finished task can be recomputed: tasks that kept no outputs, or whose outputs the parser
refuses (or raises on), are counted in one line first, the first named by key and levels.

A parser other than the program's own then defines the metrics it returned for the whole
campaign: campaign.json records it, and later runs, merges and verify compute those metrics
with it (`campaign.results.metric_parsers`); the program's own parser gives them back to the
program.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xarray as xr

from campaign.errors import BadValue, CampaignError, ParameterError
from campaign.models import describe_error
from campaign.plan.plan import make_plan
from campaign.plan.program_sources import PARSER_PREFIX
from campaign.plan.sources import Sources, combined_digest
from campaign.plan.target import campaign_spec
from campaign.results.check import check_declared, refusal
from campaign.results.metric_parsers import (
    DEFINITIONS,
    MetricsParser,
    command_parser,
    definitions_of,
    redefined,
    spec_parser,
    stamped,
    stamps,
)
from campaign.results.names import entry_owner, metric_values
from campaign.results.provenance import METRICS_FROM
from campaign.results.writing import kept_confidence, write_results
from campaign.spec.command_model import MetricsSource
from campaign.spec.load import Spec
from campaign.store.folder import RESULTS_FILE
from campaign.store.ledger import Ledger
from campaign.store.outputs import Archives, by_archive, reference

STORE_CHUNK = 10_000  # records per ledger file written


@dataclass
class Recomputed:
    dataset: xr.Dataset
    tasks: int
    metrics: list[str]
    results: Path


def remetric(
    target: Any,
    parser: MetricsParser | MetricsSource | None = None,
    confidence: float | None = None,
    say: Callable[[str], None] | None = None,
    rerun_unkept: bool = False,
) -> Recomputed:
    """Recompute the metrics of every finished task of the campaign of ``target`` (a spec file,
    an output folder, a dict or a `Spec`: `campaign.plan.target`) from its kept outputs with
    ``parser`` (a metrics source of command models; None: the spec's own), store them and
    write results.nc again. Refused in one line, before anything is stored, when a finished
    task kept no outputs (unless ``rerun_unkept``: their records are then set aside, so that
    `campaign run` computes them again) or its outputs do not parse. Finished tasks the
    ledger holds beyond the spec (levels or replicates it no longer has) are recomputed too,
    or set aside when they cannot be, so that none comes back with the replaced metrics.
    ``confidence``: of the intervals written (None: results.nc's own, else 0.95)."""
    say = say or (lambda message: None)
    if confidence is not None and not 0 < confidence < 1:
        raise BadValue("confidence", confidence, "must be between 0 and 1")
    spec = campaign_spec(target)
    own = parser is None  # the spec's own parser: what a run would compute them with
    own = own or spec.command is not None and parser == spec.command.metrics
    if parser is None:
        parser = spec_parser(spec)
    elif isinstance(parser, MetricsSource):
        parser = command_parser(parser)
    plan = make_plan(spec, on_change="accept")
    spec, ledger = plan.spec, plan.ledger
    with ledger.lock():
        records = ledger.load()
        keys = set(plan.design.keys())
        done = [
            records[key]
            for key in sorted(records)
            if key in keys and records[key]["status"] == "ok"
        ]
        if not done:
            raise CampaignError(f"remetric: {spec.output} holds no finished task to recompute")
        stamp = {
            "parser": parser.description,
            "digest": parser.digest,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        new, unkept = recompute(spec, done, parser, stamp, rerun_unkept)
        outside = [
            records[key]
            for key in sorted(records)
            if key not in keys and records[key]["status"] == "ok"
        ]
        beyond, dropped, reason = recompute_outside(spec.output, outside, parser, stamp)
        # first: a file set aside stores its other records again, as later ones
        folder = ledger.set_keys_aside(unkept, "unkept")
        beyond_folder = ledger.set_keys_aside(dropped, "unkept")
        store(ledger, new)
        store(ledger, beyond)
        names = sorted({name for record in new for name in stamps(record)[-1]["metrics"]})
        say(f"remetric: {len(new)} tasks recomputed with {parser.description}: {', '.join(names)}")
        define(ledger, parser, stamp, names, own)
        if unkept:
            say(
                f"remetric: {len(unkept)} tasks kept no outputs: their records are set aside in "
                f"{folder}; `campaign run` computes them again"
            )
        tell_beyond(say, len(beyond), len(dropped), reason, beyond_folder)
        if own and plan.sources is not None and absorb_parser(ledger, plan.sources):
            say(
                f"remetric: campaign.json now names the parser's code as it is "
                f"({spec.command.metrics.name}): `campaign run` keeps these results"
            )
        ledger.compact()
        if confidence is None:  # recomputing metrics changes none of the intervals' levels
            confidence = kept_confidence([spec.output / RESULTS_FILE], say)
        dataset = write_results(plan, confidence, say=say)
    return Recomputed(dataset, len(new), names, spec.output / "results.nc")


def store(ledger: Ledger, records: list[dict[str, Any]]) -> None:
    """Append ``records`` to the ledger, in files of `STORE_CHUNK` records."""
    for start in range(0, len(records), STORE_CHUNK):
        ledger.append(records[start : start + STORE_CHUNK])


def tell_beyond(
    say: Callable[[str], None], beyond: int, dropped: int, reason: str | None, folder: Path | None
) -> None:
    """What became of the finished tasks beyond the spec: recomputed, or set aside."""
    if beyond:
        say(
            f"remetric: {beyond} more finished tasks of levels or replicates the spec no "
            "longer has recomputed too, so that a spec that brings them back keeps them"
        )
    if dropped:
        say(
            f"remetric: {dropped} finished tasks of levels or replicates the spec no "
            f"longer has cannot be recomputed ({reason}): their records are set aside in "
            f"{folder}; a spec that brings them back computes them again"
        )


def define(
    ledger: Ledger, parser: MetricsParser, stamp: dict[str, str], names: list[str], own: bool
) -> None:
    """campaign.json: from now on ``parser`` defines the metrics ``names`` (unless it is the
    program's own), so that runs, merges and verify compute them with it."""
    stored = ledger.read_identity() or {}
    now = redefined(definitions_of(stored), parser, stamp, names, own)
    if not now and DEFINITIONS not in stored:
        return
    written = {key: value for key, value in stored.items() if key != DEFINITIONS}
    if now:
        written[DEFINITIONS] = [definition.stored() for definition in now]
    ledger.write_identity(written)


def absorb_parser(ledger: Ledger, current: Sources) -> bool:
    """After every finished task was recomputed with the spec's own parser, its code and the
    libraries it imports as they are now become what the stored results were computed from
    (campaign.json), so that `run` no longer refuses them as computed by changed code; a
    change of any other file (the program, an input) still shows. Returns whether anything
    changed."""
    stored = ledger.read_identity() or {}
    sources = dict(stored.get("sources") or {})
    files = dict(sources.get("model_files") or {})
    merged = {name: d for name, d in files.items() if not name.startswith(PARSER_PREFIX)}
    merged.update({n: d for n, d in current.code.items() if n.startswith(PARSER_PREFIX)})
    engine = dict(sorted(current.engine.items()))
    if not sources or (merged == files and sources.get("engine", engine) == engine):
        return False
    sources.update(model_files=dict(sorted(merged.items())), model_code=combined_digest(merged))
    if engine:
        sources["engine"] = engine
    ledger.write_identity({**stored, "sources": sources})
    return True


def undeclared(spec: Spec, metrics: Mapping[str, float]) -> str | None:
    """Why a program's metrics break its ``declare:`` (as at run time), or None."""
    if spec.command is None:
        return None
    try:
        check_declared(spec.command, metrics)
    except ValueError as error:
        return str(error)
    return None


def task_words(record: Mapping[str, Any]) -> str:
    """A task as a line names it: its key, its factors' levels and its replicate."""
    levels = ", ".join(f"{name}={level}" for name, level in (record.get("cell") or {}).items())
    where = f"{levels}, " if levels else ""
    return f"task {record['key']} ({where}replicate {record.get('replicate')})"


def parser_failure(error: Exception) -> str:
    """What a parser's exception says, on one line (the parser's own ValueError as it is)."""
    if isinstance(error, CampaignError | ValueError):
        return str(error)
    text = describe_error(error)
    if isinstance(error, FileNotFoundError):
        text += (
            " (a parser is given the task's kept outputs only: stdout, stderr, what keep: names)"
        )
    return text


def recompute(
    spec,
    done: list[dict[str, Any]],
    parser: MetricsParser,
    stamp: dict[str, str],
    rerun_unkept: bool = False,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The new records of the finished tasks ``done`` and the keys of those that kept no
    outputs (allowed with ``rerun_unkept``), or one line on the tasks that cannot be
    recomputed (kept no outputs; outputs missing, damaged or refused by the parser)."""
    factors = [factor.name for factor in spec.factors]
    unkept, refused, new = [], [], []
    with Archives(spec.output) as archives:
        for record in by_archive(done):
            found = recomputed(record, archives, parser, stamp)
            if found is None:
                unkept.append(record["key"])
                continue
            if isinstance(found, str):
                refused.append(f"{task_words(record)}: {found}")
                continue
            problem = refusal(found["metrics"], factors, spec.metrics)
            problem = problem or undeclared(spec, found["metrics"])
            if problem is not None:
                refused.append(f"{task_words(record)}: {problem}")
                continue
            new.append(found)
    if unkept and not rerun_unkept:
        raise ParameterError(  # rerun_unkept=True from Python, --rerun-unkept on a command line
            f"remetric: {len(unkept)} of {len(done)} finished tasks kept no outputs (a task that "
            "succeeds keeps only what the model's keep: names), so their metrics cannot be "
            "recomputed; nothing was stored: name what to keep in keep: and give "
            "{rerun_unkept=True} to set those tasks aside for `campaign run` to compute again",
            "rerun_unkept=True",
        )
    returned = {name for record in new for name in stamps(record)[-1]["metrics"]}
    before = {entry_owner(name) for record in done for name in record["metrics"]}
    unlisted = sorted(returned - before - set(spec.metrics or ()))  # new to the campaign
    if spec.metrics and unlisted and not refused:
        raise CampaignError(
            f"remetric: {parser.description} returns {', '.join(unlisted)}, new metrics the spec's "
            f"metrics: does not keep ({', '.join(spec.metrics)}); nothing was stored: add "
            "them to metrics: and give the spec file"
        )
    refused.sort()  # the first by task key
    if refused:
        raise CampaignError(
            f"remetric: {len(refused)} of {len(done)} finished tasks cannot be recomputed with "
            f"{parser.description}; nothing was stored; the first: {refused[0]}"
        )
    return new, unkept


def recomputed(
    record: dict[str, Any], archives: Archives, parser: MetricsParser, stamp: dict[str, str]
) -> dict[str, Any] | str | None:
    """A finished task's new record, its metrics recomputed by ``parser`` from its kept
    outputs and stamped so; why it cannot be (a line); or None when it kept no outputs."""
    if reference(record) is None:
        return None
    try:
        outputs = archives.read(record)
    except CampaignError as error:
        return str(error)
    try:
        metrics = metric_values(parser.parse(outputs))
    except Exception as error:  # noqa: BLE001 - a parser's failure is one task's finding
        return parser_failure(error)
    owners = sorted({entry_owner(name) for name in metrics})
    stamp_now = {**stamp, "metrics": owners}
    merged = {**record["metrics"], **metrics}
    return {**record, "metrics": merged, METRICS_FROM: stamped(stamps(record), stamp_now)}


def recompute_outside(
    output: Path, outside: list[dict[str, Any]], parser: MetricsParser, stamp: dict[str, str]
) -> tuple[list[dict[str, Any]], list[str], str | None]:
    """The finished tasks a ledger holds beyond the spec's design (levels or replicates it
    no longer has, which a later spec may bring back): their new records where ``parser`` can
    recompute them, else their keys, to be set aside (with the first reason), so that none
    comes back holding metrics of the definition the remetric replaced."""
    new, aside, reasons = [], [], []
    with Archives(output) as archives:
        for record in by_archive(outside):
            found = recomputed(record, archives, parser, stamp)
            if isinstance(found, dict):
                new.append(found)
                continue
            aside.append(record["key"])
            reasons.append((record["key"], f"{task_words(record)}: {found or 'kept no outputs'}"))
    return new, aside, min(reasons)[1] if reasons else None
