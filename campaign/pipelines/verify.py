"""Run a sample of a campaign's stored results again and compare them bit for bit.

A pure model gives the same metrics for the same params and seed, on any worker, in any
batch. One that reads a clock, the environment or an unseeded generator does not, and nothing
else would say so: `verify` reruns a few finished tasks (chosen from the campaign's seed, so
the same ones every time) through the same dispatch as `run`, stores nothing, and lists every
metric that came back different.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from campaign.cluster.cluster_options import ClusterOptions
from campaign.errors import BadValue, CampaignError
from campaign.execute import ExecutionOptions, dispatch
from campaign.execute.items import task_items
from campaign.plan.command_declaration import worker_code, worker_model
from campaign.plan.plan import make_plan
from campaign.plan.state import RunState
from campaign.plan.target import campaign_spec
from campaign.render.progress import Progress
from campaign.results.metric_parsers import definitions_of, loaded, redefine, redefined_by
from campaign.store.outputs import OUTPUTS, Archives, by_archive, carries_bytes, digest, reference

DEFAULT_SAMPLE = 10
NO_RETRIES = ExecutionOptions(retries=0)  # a rerun to compare: a failure is a finding


@dataclass(frozen=True)
class Mismatch:
    """A sampled task's metric that came back other than stored (None: not returned)."""

    key: str
    metric: str
    stored: Any
    now: Any

    def line(self) -> str:
        return f"{self.key}: {self.metric}: stored {_text(self.stored)}, now {_text(self.now)}"


@dataclass
class Verdict:
    sampled: int
    mismatches: list[Mismatch] = field(default_factory=list)
    left_out: int = 0  # stored results computed from other code or inputs than now
    outputs: list[str] = field(default_factory=list)  # kept outputs missing or damaged

    @property
    def reproduced(self) -> int:
        return self.sampled - len({m.key for m in self.mismatches})

    def summary(self) -> str:
        return f"verify: {self.reproduced} of {self.sampled} sampled tasks reproduced bit for bit"


def sample(plan: RunState, records: dict[str, dict[str, Any]], count: int) -> tuple[list[int], int]:
    """Up to ``count`` finished tasks (indices), drawn from the campaign's seed, and how many
    finished tasks were left out as computed from other sources than now."""
    changed = set(plan.changed)
    done = [
        index
        for index, key in enumerate(plan.design.keys())
        if records.get(key, {}).get("status") == "ok"
    ]
    candidates = [index for index in done if index not in changed]
    chosen = np.random.default_rng(plan.spec.seed).permutation(len(candidates))[:count]
    return sorted(candidates[i] for i in chosen), len(done) - len(candidates)


def verify(
    target: Any,
    count: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    scheduler: str | None = None,
    say: Callable[[str], None] | None = None,
) -> Verdict:
    """Rerun ``count`` sampled finished tasks of the campaign of ``target`` (a spec file, an
    output folder, a dict or a `Spec`: `campaign.plan.target`) and compare each metric with
    its stored value, bit for bit (metrics a remetric redefined computed from the rerun's
    outputs by the parser it recorded)."""
    say = say or (lambda message: None)
    if count < 1:
        raise BadValue("count", count, "must be >= 1")
    where = ClusterOptions(workers=workers, scheduler=scheduler)
    plan = make_plan(campaign_spec(target), on_change="accept")
    records = plan.ledger.load()
    chosen, left_out = sample(plan, records, count)
    if not chosen:
        raise CampaignError(
            f"{plan.spec.output}: no finished task to verify"
            + (f" ({left_out} computed from other sources than now)" if left_out else "")
        )
    items = task_items(plan, chosen, f"verify-{uuid.uuid4().hex[:8]}")
    parsers = loaded(definitions_of(plan.ledger.read_identity()), str(plan.spec.output))
    now: dict[str, dict[str, Any]] = {}

    def collect(batch: list[dict[str, Any]]) -> None:
        for record in batch:  # metrics a remetric redefined: computed as the stored ones
            outputs = record.get(OUTPUTS) if carries_bytes(record) else None
            problem = redefine(record, outputs, parsers) if record["status"] == "ok" else None
            if problem is not None:
                record.update(status="failed", error=problem)
            now[record["key"]] = record

    with where.client(say) as client:
        quiet = Progress(0, enabled=False)
        model = worker_model(plan.spec, plan.sources, redefined_by(parsers))
        code = worker_code(model, plan.sources)
        dispatch(client, model, items, collect, NO_RETRIES, quiet, code=code)
    verdict = Verdict(sampled=len(items), left_out=left_out)
    verdict.outputs = output_problems(plan, records)
    for item in items:
        verdict.mismatches.extend(compare(item.key, records[item.key], now[item.key]))
    return verdict


def output_problems(plan: RunState, records: dict[str, dict[str, Any]]) -> list[str]:
    """One line per finished task of the design whose kept outputs are missing or damaged
    (every one is read and checked against the SHA-256 its record holds)."""
    keys = set(plan.design.keys())
    kept = [
        record
        for key, record in records.items()
        if key in keys and record["status"] == "ok" and reference(record) is not None
    ]
    problems = {}
    with Archives(plan.spec.output) as archives:
        for record in by_archive(kept):
            problem = archives.problem(record)
            if problem is not None:
                problems[record["key"]] = problem
    return [problems[key] for key in sorted(problems)]


def compare(key: str, stored: dict[str, Any], now: dict[str, Any]) -> list[Mismatch]:
    """Every metric of a task that differs between its stored record and its rerun."""
    if now["status"] != "ok":
        return [Mismatch(key, "(the task)", "ok", f"failed: {now.get('error', '')}")]
    before, after = stored["metrics"], now["metrics"]
    return [
        Mismatch(key, name, before.get(name), after.get(name))
        for name in sorted(set(before) | set(after))
        if not _same(before.get(name), after.get(name))
    ] + compare_outputs(key, stored, now)


def compare_outputs(key: str, stored: dict[str, Any], now: dict[str, Any]) -> list[Mismatch]:
    """Every kept output of a task whose rerun's bytes differ from the stored ones (by their
    SHA-256): a program that writes the time or an unseeded draw into what it keeps."""
    kept, again = reference(stored), now.get("outputs")
    if kept is None or not isinstance(again, dict):
        return []
    found = []
    for name, member in sorted(kept["members"].items()):
        data = again.get(name)
        if data is None:
            found.append(Mismatch(key, f"kept output {name}", "kept", None))
        elif digest(data) != member["sha256"]:
            found.append(
                Mismatch(
                    key,
                    f"kept output {name}",
                    f"sha256 {member['sha256'][:12]}",
                    f"sha256 {digest(data)[:12]}",
                )
            )
    return found


def _same(a: Any, b: Any) -> bool:
    """Bit for bit: 0.0 and -0.0 differ, NaN equals NaN."""
    if a is None or b is None:
        return a is b
    return float(a).hex() == float(b).hex()


def _text(value: Any) -> str:
    if value is None:
        return "(none)"
    return repr(float(value)) if isinstance(value, int | float) else str(value)
