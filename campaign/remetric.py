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
refuses, are counted in one line first.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xarray as xr

from campaign.errors import CampaignError
from campaign.plan.plan import make_plan
from campaign.results.check import refusal
from campaign.results.names import metric_values
from campaign.results.provenance import METRICS_FROM
from campaign.runner import write_results
from campaign.store.outputs import Archives, reference
from campaign.verify import spec_of

STORE_CHUNK = 10_000  # records per ledger file written

Parser = Callable[[Mapping[str, bytes]], Mapping[str, float]]


@dataclass(frozen=True)
class MetricsParser:
    """What turns a task's kept outputs into metrics, and what the results file says of it."""

    parse: Parser
    description: str  # "stdout", "file: out.json", "parse: module:function"
    digest: str  # "sha256:..." of the code that parses


@dataclass
class Recomputed:
    dataset: xr.Dataset
    tasks: int
    metrics: list[str]
    results: Path


def command_parser(form: str | dict[str, str]) -> MetricsParser:
    """The metrics parser of command models for a ``metrics:`` form ("stdout", {"file": NAME}
    or {"parse": "module:function"}): the function the workers use at run time."""
    from campaign.execute import command_metrics

    source: Any = form
    if hasattr(command_metrics, "metrics_source"):
        try:
            source = command_metrics.metrics_source(form)
        except ValueError as error:
            raise CampaignError(f"remetric: {error}") from None

    def parse(outputs: Mapping[str, bytes]) -> Mapping[str, float]:
        return command_metrics.metrics_from_outputs(source, outputs)

    if isinstance(form, dict) and "parse" in form:
        function = python_function(form["parse"])
        return MetricsParser(parse, f"parse: {form['parse']}", code_digest(function))
    described = form if isinstance(form, str) else f"file: {form['file']}"
    return MetricsParser(parse, described, code_digest(command_metrics.metrics_from_outputs))


def python_function(reference_: str) -> Callable[..., Any]:
    """The function ``module:function`` names, or one line on why it cannot be loaded."""
    module_name, sep, name = reference_.partition(":")
    if not sep or not module_name or not name:
        raise CampaignError(f"--parse {reference_!r}: write module:function")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - any import error is the user's to fix
        raise CampaignError(f"--parse {reference_}: cannot import {module_name}: {error}") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise CampaignError(f"--parse {reference_}: {module_name} has no function {name!r}")
    return function


def code_digest(function: Callable[..., Any]) -> str:
    """SHA-256 of the source file that defines ``function``: which parser the results used."""
    try:
        path = inspect.getsourcefile(function)
        data = Path(path).read_bytes() if path else b""
    except (OSError, TypeError):
        data = b""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def remetric(
    target: str | Path,
    parser: MetricsParser,
    confidence: float = 0.95,
    say: Callable[[str], None] | None = None,
) -> Recomputed:
    """Recompute the metrics of every finished task of the campaign of ``target`` (a spec file
    or an output folder) from its kept outputs with ``parser``, store them and write
    results.nc again. Refused in one line, before anything is stored, when a finished task
    kept no outputs or its outputs do not parse."""
    say = say or (lambda message: None)
    if not 0 < confidence < 1:
        raise CampaignError(f"--confidence must be between 0 and 1, got {confidence}")
    plan = make_plan(spec_of(target), on_change="accept")
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
        new = recompute(spec, done, parser, stamp)
        for start in range(0, len(new), STORE_CHUNK):
            ledger.append(new[start : start + STORE_CHUNK])
        ledger.compact()
        names = sorted({name for record in new for name in record[METRICS_FROM]["metrics"]})
        say(f"remetric: {len(new)} tasks recomputed with {parser.description}: {', '.join(names)}")
        dataset = write_results(plan, confidence)
    return Recomputed(dataset, len(new), names, spec.output / "results.nc")


def recompute(
    spec, done: list[dict[str, Any]], parser: MetricsParser, stamp: dict[str, str]
) -> list[dict[str, Any]]:
    """The new records of the finished tasks ``done``, or one line on the tasks that cannot be
    recomputed (kept no outputs; outputs missing, damaged or refused by the parser)."""
    factors = [factor.name for factor in spec.factors]
    unkept, refused, new = [], [], []
    with Archives(spec.output) as archives:
        for record in done:
            if reference(record) is None:
                unkept.append(record["key"])
                continue
            try:
                metrics = metric_values(parser.parse(archives.read(record)))
            except (CampaignError, ValueError, TypeError) as error:
                refused.append(f"task {record['key']}: {error}")
                continue
            merged = {**record["metrics"], **metrics}
            problem = refusal(merged, factors, spec.metrics)
            if problem is not None:
                refused.append(f"task {record['key']}: {problem}")
                continue
            stamped = {**stamp, "metrics": sorted(metrics)}
            new.append({**record, "metrics": merged, METRICS_FROM: stamped})
    if unkept:
        raise CampaignError(
            f"remetric: {len(unkept)} of {len(done)} finished tasks kept no outputs (the spec "
            "kept none for tasks that succeed: keep: stdout or keep: [FILE] says what to keep), "
            "so their metrics cannot be recomputed; nothing was stored (run them again with "
            "`campaign run SPEC --new` to keep their outputs)"
        )
    returned = {name for record in new for name in record[METRICS_FROM]["metrics"]}
    before = {name for record in done for name in record["metrics"]}
    unlisted = sorted(returned - before - set(spec.metrics or ()))  # new to the campaign
    if spec.metrics and unlisted and not refused:
        raise CampaignError(
            f"remetric: {parser.description} returns {', '.join(unlisted)}, new metrics the spec's "
            f"metrics: does not keep ({', '.join(spec.metrics)}); nothing was stored: add "
            "them to metrics: and give the spec file"
        )
    if refused:
        raise CampaignError(
            f"remetric: {len(refused)} of {len(done)} finished tasks cannot be recomputed with "
            f"{parser.description}; nothing was stored; the first: {refused[0]}"
        )
    return new
