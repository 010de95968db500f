"""A program's metrics as a spec writes them: where they come from (``model.metrics``) and
what each one is (``model.declare``), checked before any work.

```yaml
model:
  metrics: stdout                  # or {file: out.json}, or {parse: module:function}
  declare:
    mean_wait: {units: s, long_name: mean wait}         # a number (kind: scalar, the default)
    wait: {kind: sample, units: s}                      # a JSON array in the metrics object
    response: {kind: sample, units: s, file: resp.txt}  # a file of one number per line
    bsld: {kind: sample, file: jobs.csv, column: bsld}  # a column of a CSV file
    job_class: {kind: breakdown}                        # {"job_class": {label: {metric: n}}}
```

The kinds are a Python model's (`campaign.models.contract`): a number, a sample (a 1-D array
of numbers per task) or a breakdown (``{label: {metric: number}}``, named by its dimension).
A sample may lie in a file of its own (``file:``, with ``column:`` a CSV column); the metrics
source is then read only when some other metric is left to come from it. What each output
form can give is checked here: a ``file:`` or ``column:`` of a metric that is not a sample, a
breakdown named unlike a dimension, a name that a sample's or breakdown's derived metrics
take, a metrics source that nothing is left to come from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.models.contract import BREAKDOWN, SAMPLE, SCALAR
from campaign.results.names import metric_name_problem
from campaign.spec.schema_program import DECLARE, KINDS, METRICS_SOURCE

Fail = Callable[[str], CampaignError]

METRICS_KEYS = METRICS_SOURCE.names
DECLARE_KEYS = DECLARE.names
DIMENSION = re.compile(r"[a-z][a-z0-9_]*")  # a breakdown's name (results/names.BREAKDOWN_ENTRY)
DERIVED = re.compile(r"^(?P<owner>.+)_(count|p\d+)$")  # a sample's size and percentiles


@dataclass(frozen=True)
class SampleFile:
    """A sample read from a file of the task's folder: one number per line, or the column
    ``column`` of a CSV file with a header row."""

    metric: str
    file: str
    column: str = ""

    def __str__(self) -> str:
        where = f"{self.file} column {self.column}" if self.column else self.file
        return f"sample {self.metric}: {where}"


@dataclass(frozen=True)
class MetricsSource:
    """Where a task's metrics come from: ``kind`` "stdout", "file" (``name``: a file of the
    task's folder: JSON, a one-row CSV or key=value lines) or "parse" (``name``:
    ``module:function``, given the folder of the outputs); and the ``samples`` read from files
    of their own. ``main``: whether the source is read at all (not when every declared metric
    lies in a file of its own)."""

    kind: str = "stdout"
    name: str = ""
    samples: tuple[SampleFile, ...] = ()
    main: bool = True

    def __str__(self) -> str:
        main = self.kind if self.kind == "stdout" else f"{{{self.kind}: {self.name}}}"
        if not self.samples:
            return main
        files = ", ".join(str(sample) for sample in self.samples)
        return f"{main}; {files}" if self.main else files


@dataclass(frozen=True)
class DeclaredMetric:
    """One entry of ``model.declare``: units, long name, kind and, for a sample in a file of
    its own, where it lies."""

    name: str
    units: str = "1"
    long_name: str = ""
    kind: str = SCALAR
    file: str = ""
    column: str = ""

    def documented(self) -> dict[str, str]:
        """As a model's metrics table documents a metric."""
        doc = {"units": self.units, "long_name": self.long_name or self.name}
        return doc if self.kind == SCALAR else {**doc, "kind": self.kind}


def parse_metrics_source(
    raw: Any, declared: tuple[DeclaredMetric, ...], fail: Fail, given: bool = True
) -> MetricsSource:
    """``model.metrics`` (``given``: written in the spec, not the default), with the samples
    ``declared`` in files of their own."""
    source = parse_main_source(raw, fail)
    samples = tuple(SampleFile(d.name, d.file, d.column) for d in declared if d.file)
    main = not declared or any(not d.file for d in declared)
    if not main and given:
        raise fail(
            f"model.metrics: every metric of model.declare lies in a file of its own, so "
            f"{raw!r} would never be read: remove metrics:"
        )
    for sample in samples:
        if main and source.kind == "file" and sample.file == source.name:
            raise fail(
                f"model.declare.{sample.metric}.file: {sample.file!r} is also the file of "
                "metrics: (read as a JSON object, key=value lines or a one-row CSV); a sample's "
                "file holds that sample only"
            )
    return MetricsSource(source.kind, source.name, samples, main)


def parse_main_source(raw: Any, fail: Fail) -> MetricsSource:
    allowed = "stdout, {file: NAME} or {parse: module:function}"
    if raw == "stdout":
        return MetricsSource()
    if not isinstance(raw, dict) or len(raw) != 1 or next(iter(raw)) not in METRICS_KEYS:
        raise fail(f"model.metrics: {raw!r} is not allowed; use {allowed}")
    kind, name = next(iter(raw.items()))
    if not isinstance(name, str) or not name:
        raise fail(f"model.metrics.{kind}: expected a name, got {name!r}")
    if kind == "parse" and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", name):
        raise fail(f"model.metrics.parse: {name!r} is not 'package.module:function'")
    if kind == "file":
        check_folder_file(name, "model.metrics.file", fail)
    return MetricsSource(kind, name)


def check_folder_file(name: str, key: str, fail: Fail) -> None:
    if Path(name).is_absolute() or ".." in Path(name).parts:
        raise fail(f"{key}: {name!r} must name a file of the task's folder")


def parse_declare(raw: Any, fail: Fail) -> tuple[DeclaredMetric, ...]:
    """``model.declare``: ``{metric: {units, long_name, kind, file, column}}``."""
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        raise fail(
            f"model.declare: expected a mapping metric: {{units, long_name, kind}}, got {raw!r}"
        )
    declared = tuple(declared_metric(name, doc, fail) for name, doc in raw.items())
    check_derived_names(declared, fail)
    return declared


def declared_metric(name: Any, doc: Any, fail: Fail) -> DeclaredMetric:
    problem = metric_name_problem(name) if isinstance(name, str) else "is no name"
    if problem is not None:
        raise fail(f"model.declare: {problem}")
    doc = DECLARE.check(doc or {}, fail, f"model.declare.{name}")
    kind = doc.get("kind", SCALAR)
    if kind not in KINDS:
        kinds = "; ".join(f"{k}: {words}" for k, words in KINDS.items())
        raise fail(f"model.declare.{name}.kind: {kind!r} is not allowed; use {kinds}")
    file, column = doc.get("file"), doc.get("column")
    if (file is not None or column is not None) and kind != SAMPLE:
        raise fail(
            f"model.declare.{name}: file: and column: say where a sample lies (a file of "
            f"numbers), and {name!r} is declared kind: {kind}; write kind: sample, or take "
            "the metric from metrics:"
        )
    if column is not None and file is None:
        raise fail(f"model.declare.{name}.column: names a column of file:, which is missing")
    for key, value in (("file", file), ("column", column)):
        if value is not None and (not isinstance(value, str) or not value):
            raise fail(f"model.declare.{name}.{key}: expected a name, got {value!r}")
    if file is not None:
        check_folder_file(file, f"model.declare.{name}.file", fail)
    if kind == BREAKDOWN and not DIMENSION.fullmatch(name):
        raise fail(
            f"model.declare.{name}: a breakdown is named by its dimension (results hold "
            f"<metric>_by_{name}): use lowercase letters, digits and '_', starting with a letter"
        )
    units, long = str(doc.get("units", "1")), str(doc.get("long_name", name))
    return DeclaredMetric(name, units, long, kind, file or "", column or "")


def check_derived_names(declared: tuple[DeclaredMetric, ...], fail: Fail) -> None:
    """Refuse a metric named as results name a sample's size or percentile (``wait_p95``
    beside the sample ``wait``) or a breakdown's variable (``mean_wait_by_job_class``)."""
    samples = {d.name for d in declared if d.kind == SAMPLE}
    breakdowns = {d.name for d in declared if d.kind == BREAKDOWN}
    for metric in declared:
        match = DERIVED.match(metric.name)
        if match and match["owner"] in samples:
            raise fail(
                f"model.declare: {metric.name!r} is the name results give to the size or a "
                f"percentile of the sample {match['owner']!r}; rename one of them"
            )
        owner, by, dimension = metric.name.rpartition("_by_")
        if by and owner and dimension in breakdowns:
            raise fail(
                f"model.declare: {metric.name!r} is the name results give to {owner!r} per "
                f"label of the breakdown {dimension!r}; rename one of them"
            )
