"""Records checked before they are stored: a finished task whose metrics a results file
cannot hold (a metric the spec keeps left out, a name that clashes) is stored as failed,
saying why, so that results.nc is always written and a rerun retries it once fixed.

Stored records are judged by the spec as it is now (`refusal_now`): a spec that came to keep
a metric in ``metrics:``, or to ``declare`` a program's metrics, after results were stored
refuses those that break it as a task run now would be refused, so that every command
counts them failed, a rerun retries them, and the same spec gives the same results whatever
the output folder held."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from campaign.models.contract import BREAKDOWN, SAMPLE, SCALAR
from campaign.results.names import (
    BREAKDOWN_ENTRY,
    DERIVED,
    SAMPLE_MARK,
    entry_owner,
    name_clashes,
    sample_names,
)
from campaign.spec.command_model import CommandSpec


def refusal(
    metrics: Mapping[str, float],
    factors: list[str],
    wanted: tuple[str, ...] | None,
    others: Iterable[str] = (),
) -> str | None:
    """Why a finished task's metrics cannot go into the results file; None when they can.

    A metric the spec keeps (``wanted``) must be there; without ``wanted`` every returned
    name is kept, and none may take the name of a factor or of a summary variable of
    another metric (``others``: the names other tasks returned). A kept metric may not be of
    another kind than in other tasks (`kind_clashes`).
    """
    if wanted:
        returned = {entry_owner(name) for name in metrics}
        missing = [name for name in wanted if name not in returned]
        if missing:
            return (
                f"the model returned no metric {missing[0]!r}, which the spec's metrics: "
                f"keeps; it returned: {', '.join(metrics) or 'none'}"
            )
        clashes = kind_clashes(kept_names([*others, *metrics], wanted))
    else:
        clashes = {
            **kind_clashes([*others, *metrics]),
            **name_clashes(factors, [*others, *metrics]),
        }
    for name in metrics:
        if name in clashes:
            return f"{clashes[name]}; a results file cannot hold both"
    return None


def kept_names(names: Iterable[str], wanted: tuple[str, ...] | None) -> list[str]:
    """The names a results file keeps of ``names`` (all of them without ``metrics:``)."""
    if not wanted:
        return list(names)
    return [name for name in names if entry_owner(name) in wanted]


def kind_clashes(names: Iterable[str]) -> dict[str, str]:
    """The names, among those finished tasks returned, that one results variable would hold
    with a metric of another kind, each with the reason: a number that other tasks give as a
    sample or a breakdown, or named as what results derive from one (``wait_p95`` beside a
    sample ``wait``, ``mean_wait_by_job_class``), and a sample other tasks give as a
    breakdown. The number (or the sample) is blamed, whichever task came first."""
    names = set(names)
    if not any(SAMPLE_MARK in name for name in names):
        return {}  # no sample, no breakdown
    samples = set(sample_names(names))
    breakdowns: set[str] = set()
    derived: dict[str, str] = {}  # a breakdown's metric's variable -> the breakdown
    for name in names:
        match = BREAKDOWN_ENTRY.match(name)
        if match:
            breakdowns.add(match["dimension"])
            derived[f"{match['metric']}_by_{match['dimension']}"] = match["dimension"]
    if not samples and not breakdowns:
        return {}
    clashes = {}
    for sample in samples & breakdowns:
        clashes[f"{sample}{SAMPLE_MARK}n"] = (
            f"metric {sample!r} is a sample in this task and a breakdown in others"
        )
    for name in names:
        if SAMPLE_MARK in name:
            continue
        match = DERIVED.match(name)
        if name in samples or name in breakdowns:
            kind = "a sample" if name in samples else "a breakdown"
            clashes[name] = f"metric {name!r} is a number in this task and {kind} in others"
        elif match and match["owner"] in samples:
            clashes[name] = (
                f"metric {name!r} has the name of a metric results derive from the sample "
                f"{match['owner']!r} of other tasks (its size or a percentile)"
            )
        elif name in derived:
            clashes[name] = (
                f"metric {name!r} has the name results give a metric of the breakdown "
                f"{derived[name]!r} of other tasks"
            )
    return clashes


def refusal_now(metrics: Mapping[str, float], spec) -> str | None:
    """The error a finished task returning ``metrics`` ends with when ``spec`` runs it now: a
    program's metrics that break its ``declare:`` (as the worker checks them), a metric the
    spec's ``metrics:`` keeps left out; None when the spec takes them. Names that clash
    across tasks are another matter (`storable_records`)."""
    command = spec.command
    if command is not None and command.declare:
        try:
            check_declared(command, metrics)
        except ValueError as error:
            return str(error)
    if spec.metrics:
        problem = refusal(metrics, [f.name for f in spec.factors], spec.metrics)
        if problem is not None:
            return f"ValueError: {problem}"
    return None


def judges_metrics(spec) -> bool:
    """Whether ``spec`` can refuse a stored success for its metrics (`refusal_now`): so a
    task's status needs its record's metrics, not only its head."""
    return bool(spec.metrics) or bool(spec.command is not None and spec.command.declare)


def judged(record: dict[str, Any], spec) -> dict[str, Any]:
    """A stored record as ``spec`` takes it now: a success whose metrics it refuses is a
    failure with that error (a copy; the record as it is otherwise)."""
    if record["status"] != "ok":
        return record
    error = refusal_now(record["metrics"], spec)
    if error is None:
        return record
    failed = {key: value for key, value in record.items() if key != "metrics"}
    return {**failed, "status": "failed", "error": error, "traceback": ""}


def as_failed(record: dict[str, Any], error: str) -> None:
    """Turn a finished task's record into a failed one, in place (the driver counts it so)."""
    record.pop("metrics", None)
    record.update(status="failed", error=f"ValueError: {error}", traceback="")


def storable_records(records: Mapping[str, dict[str, Any]], spec) -> Mapping[str, dict[str, Any]]:
    """The records, with finished tasks whose metrics a results file cannot hold as failed.

    Results stored before their names were checked (or that clash only with another
    task's names) are caught here, so results.nc is always written.
    """
    factors = [f.name for f in spec.factors]
    names: set[str] = set()
    for record in records.values():
        if record["status"] == "ok":
            names.update(record["metrics"])
    others = kept_names(sorted(names), spec.metrics)
    if not kind_clashes(others) and (spec.metrics or not name_clashes(factors, others)):
        return records
    checked = dict(records)
    for key, record in records.items():
        if record["status"] != "ok":
            continue
        problem = refusal(record["metrics"], factors, spec.metrics, others)
        if problem is not None:
            checked[key] = failed = dict(record)
            as_failed(failed, problem)
    return checked


class CheckedStore:
    """Stores finished tasks' records through ``store`` (the ledger's ``append``), each ok
    record first checked: one whose metrics a results file cannot hold (a metric the spec's
    ``metrics:`` keeps left out, a name that clashes) is stored as failed, saying why, so
    that the others stand, results.nc is written and a rerun retries it once the model or
    spec is fixed. (A metric misspelt in ``metrics:`` fails every task the same way, which
    stops the run early: `campaign.plan.early_stop`.)"""

    def __init__(self, spec, store: Callable[[list[dict[str, Any]]], Any]):
        self.spec = spec
        self.store = store
        self.factors = [f.name for f in spec.factors]
        self.seen: set[str] = set()

    def __call__(self, records: list[dict[str, Any]]) -> None:
        for record in records:
            if record["status"] != "ok":
                continue
            problem = refusal(record["metrics"], self.factors, self.spec.metrics, self.seen)
            if problem is None:
                self.seen.update(record["metrics"])
                continue
            as_failed(record, problem)
        self.store(records)


KIND_WORDS = {
    SCALAR: ("a number (kind: scalar, the default)", "a number"),
    SAMPLE: ("a sample (kind: sample)", "an array of numbers"),
    BREAKDOWN: ("a breakdown (kind: breakdown)", "an object of label: {metric: number}"),
}


def given_kinds(entries: Mapping[str, float]) -> tuple[dict[str, str], dict[str, str]]:
    """What a task's stored entries hold: each metric's kind, and the metrics inside each
    breakdown (metric -> its dimension)."""
    kinds: dict[str, str] = {}
    inside: dict[str, str] = {}
    for entry in entries:
        match = BREAKDOWN_ENTRY.match(entry)
        if match:
            kinds[match["dimension"]] = BREAKDOWN
            inside.setdefault(match["metric"], match["dimension"])
            continue
        owner, mark, _ = entry.partition(SAMPLE_MARK)
        if mark and f"{owner}{SAMPLE_MARK}n" in entries:
            kinds[owner] = SAMPLE
        else:
            kinds[entry] = SCALAR
    return kinds, inside


def check_declared(command: CommandSpec, entries: Mapping[str, float]) -> None:
    """With declared metrics, the program must give each of them, of its declared kind, and
    no other (a breakdown's metrics too); ``entries`` as a record stores them."""
    declared = {metric.name: metric.kind for metric in command.declare}
    if not declared:
        return
    kinds, inside = given_kinds(entries)
    names = ", ".join(declared)
    for name in sorted(set(kinds) - set(declared)):
        raise ValueError(f"metric {name!r} is not declared in model.declare ({names})")
    for name in sorted(set(inside) - set(declared)):
        raise ValueError(
            f"metric {name!r} of breakdown {inside[name]!r} is not declared in model.declare "
            f"({names})"
        )
    for name, kind in [*kinds.items(), *((name, SCALAR) for name in inside)]:
        if declared[name] != kind:
            raise ValueError(
                f"metric {name!r} is declared {KIND_WORDS[declared[name]][0]} but the program "
                f"gave {KIND_WORDS[kind][1]}"
            )
    given = {*kinds, *inside, *command.redefined}  # a remetric's parser gives those after
    missing = [name for name in declared if name not in given]
    if missing:
        raise ValueError(f"declared metric {missing[0]!r} is missing from the program's output")
