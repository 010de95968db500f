"""Records checked before they are stored: a finished task whose metrics a results file
cannot hold (a metric the spec keeps left out, a name that clashes) is stored as failed,
saying why, so that results.nc is always written and a rerun retries it once fixed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from campaign.results.names import entry_owner, name_clashes


def refusal(
    metrics: Mapping[str, float],
    factors: list[str],
    wanted: tuple[str, ...] | None,
    others: Iterable[str] = (),
) -> str | None:
    """Why a finished task's metrics cannot go into the results file; None when they can.

    A metric the spec keeps (``wanted``) must be there; without ``wanted`` every returned
    name is kept, and none may take the name of a factor or of a summary variable of
    another metric (``others``: the names other tasks returned).
    """
    if wanted:
        returned = {entry_owner(name) for name in metrics}
        missing = [name for name in wanted if name not in returned]
        if missing:
            return (
                f"the model returned no metric {missing[0]!r}, which the spec's metrics: "
                f"keeps; it returned: {', '.join(metrics) or 'none'}"
            )
        return None
    clashes = name_clashes(factors, [*others, *metrics])
    for name in metrics:
        if name in clashes:
            return f"{clashes[name]}; a results file cannot hold both"
    return None


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
    if not spec.metrics:
        for record in records.values():
            if record["status"] == "ok":
                names.update(record["metrics"])
    others = [] if spec.metrics else sorted(names)
    if not spec.metrics and not name_clashes(factors, others):
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
