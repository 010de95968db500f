"""Metrics parsers of kept outputs, and the parsers that define a campaign's metrics.

A program's metrics are read from its outputs by its ``metrics:`` source, on the worker as
each task ends (`campaign.execute.command_metrics`). `campaign remetric` may recompute them,
or add new ones, with another parser: from then on, that parser defines those metrics for the
whole campaign. campaign.json records it (`DEFINITIONS`: the parser, the SHA-256 of its
code, the libraries its code imports as `campaign.plan.model_libraries` describes a spec's
own parser's, when, and the metrics it defines), and every pipeline that stores or compares metrics
applies it, so that one metric never means two things in one campaign:

- `run` gives each new finished task's kept outputs to the recorded parsers before it is
  stored (`Redefining`), its record stamped as a remetric's (``metrics_from``);
- `merge` recomputes the records of a folder that lacks a definition another holds;
- `verify` recomputes a rerun task's metrics with them before it compares.

A recorded parser that cannot be loaded, or whose code or libraries changed since, is refused
in one line before anything runs: the tasks it recomputed would mean something else than new ones.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError, ParameterError
from campaign.models import describe_error
from campaign.plan.model_libraries import model_libraries
from campaign.plan.sources import library_changes
from campaign.results.names import entry_owner, metric_values
from campaign.results.parser_code import code_digest, parser_digest, python_function
from campaign.results.provenance import METRICS_FROM
from campaign.spec.command_model import MetricsSource
from campaign.spec.load import Spec
from campaign.store.outputs import OUTPUTS, carries_bytes

DEFINITIONS = "metric_definitions"  # campaign.json's field

Parser = Callable[[Mapping[str, bytes]], Mapping[str, float]]


@dataclass(frozen=True)
class MetricsParser:
    """What turns a task's kept outputs into metrics, and what the results file says of it.
    ``source``: the ``metrics:`` source it reads by (None: a function given from Python,
    which no later run can load again)."""

    parse: Parser
    description: str  # "stdout", "file: out.json", "parse: module:function"
    digest: str  # "sha256:..." of the code that parses
    source: MetricsSource | None = None
    libraries: Mapping[str, str] | None = None  # a ``parse:`` parser's, as described here


def command_parser(source: MetricsSource) -> MetricsParser:
    """The metrics parser of command models for a ``metrics:`` source (stdout, a file, or
    ``module:function``): the function the workers use at run time."""
    from campaign.execute import command_metrics

    def parse(outputs: Mapping[str, bytes]) -> Mapping[str, float]:
        return command_metrics.metrics_from_outputs(source, outputs)

    if source.kind == "parse":
        function = python_function(source)
        digest = parser_digest(function, source.name.partition(":")[0])
        try:  # another version of one computes other metrics from the same outputs
            libraries = model_libraries(source.name)
        except ValueError as error:
            raise CampaignError(f"metrics parser {source.name}: {error}") from None
        return MetricsParser(parse, f"parse: {source.name}", digest, source, libraries)
    described = "stdout" if source.kind == "stdout" else f"{source.kind}: {source.name}"
    from campaign.execute import metric_text

    # The built-in parser reads the outputs through metric_text: both files are its code.
    digest = code_digest(command_metrics.metrics_from_outputs, metric_text.read_metrics)
    return MetricsParser(parse, described, digest, source)


def spec_parser(spec: Spec) -> MetricsParser:
    """The spec's own ``metrics:`` source (a program's), or one line saying what to give."""
    if spec.command is None:
        raise ParameterError(  # the parameter from Python, the options on a command line
            f"remetric: model {spec.model} is not a program and has no metrics: source of its "
            "own; give {source}, the parser of its kept outputs",
            "source",
        )
    return command_parser(spec.command.metrics)


@dataclass(frozen=True)
class Definition:
    """A parser that defines some of a campaign's metrics since a remetric."""

    parser: str  # its description
    digest: str  # of its code, then
    time: str  # of the remetric
    metrics: tuple[str, ...]  # those it defines now (a later remetric may take some over)
    kind: str | None = None  # its metrics source (None: given from Python)
    name: str = ""
    libraries: Mapping[str, str] | None = None  # None: recorded before libraries were

    def stamp(self) -> dict[str, Any]:
        """What a record computed with it says (``metrics_from``), as remetric stamps it."""
        return {
            "parser": self.parser,
            "digest": self.digest,
            "time": self.time,
            "metrics": list(self.metrics),
        }

    def stored(self) -> dict[str, Any]:
        stored = {**self.stamp(), "source": None if self.kind is None else [self.kind, self.name]}
        if self.libraries is not None:
            stored["libraries"] = dict(self.libraries)
        return stored

    @classmethod
    def read(cls, stored: Mapping[str, Any]) -> Definition:
        source = stored.get("source")
        kind, name = (source[0], source[1]) if source else (None, "")
        return cls(
            str(stored["parser"]),
            str(stored["digest"]),
            str(stored["time"]),
            tuple(stored.get("metrics") or ()),
            kind,
            name,
            stored.get("libraries"),
        )


def definitions_of(identity: Mapping[str, Any] | None) -> list[Definition]:
    """The definitions campaign.json records (none before any remetric)."""
    return [Definition.read(entry) for entry in (identity or {}).get(DEFINITIONS) or ()]


def redefined(
    definitions: list[Definition],
    parser: MetricsParser,
    stamp: Mapping[str, Any],
    returned: Iterable[str],
    own: bool,
) -> list[Definition]:
    """The definitions after a remetric with ``parser`` returned the metrics ``returned``:
    they are its from now on (``own``: the program's own parser, which needs no recording),
    and no earlier parser's."""
    returned = sorted(set(returned))
    kept = []
    for definition in definitions:
        metrics = tuple(m for m in definition.metrics if m not in returned)
        if metrics:
            kept.append(Definition(**{**definition.__dict__, "metrics": metrics}))
    if own or not returned:
        return kept
    source = parser.source
    return [
        *kept,
        Definition(
            parser.description,
            parser.digest,
            str(stamp["time"]),
            tuple(returned),
            source.kind if source else None,
            source.name if source else "",
            parser.libraries,
        ),
    ]


def loaded(definitions: list[Definition], where: str) -> list[tuple[Definition, MetricsParser]]:
    """Each definition's parser, loaded here, or one line on why new tasks cannot be computed
    with it (it cannot be loaded, or its code changed since the remetric: the tasks it
    recomputed would then mean something else than new ones)."""
    parsers = []
    for definition in definitions:
        metrics = ", ".join(definition.metrics)
        said = (
            f"{where}: metrics {metrics} were recomputed by `campaign remetric` with "
            f"{definition.parser}"
        )
        again = (
            "give the same parser to `campaign remetric` (every finished task recomputed "
            "with it as it is now), then run again"
        )
        if definition.kind is None:
            raise CampaignError(
                f"{said}, a function given from Python, which cannot be loaded to compute new "
                f"tasks' {metrics} the same way; {again}"
            )
        try:
            parser = command_parser(MetricsSource(definition.kind, definition.name))
        except CampaignError as error:
            raise CampaignError(f"{said}, which cannot be loaded now ({error}); {again}") from None
        if definition.kind == "parse" and parser.digest != definition.digest:
            raise CampaignError(
                f"{said}, whose code has changed since: new tasks would get another {metrics} "
                f"than the stored ones; {again}"
            )
        changed = library_changes(definition.libraries, parser.libraries or {})
        if changed:
            raise CampaignError(
                f"{said}, whose libraries have changed since ({'; '.join(changed)}): new tasks "
                f"would get another {metrics} than the stored ones; {again}"
            )
        parsers.append((definition, parser))
    return parsers


def redefined_by(parsers: list[tuple[Definition, MetricsParser]]) -> list[str]:
    """The metrics the loaded ``parsers`` compute after each task from its kept outputs."""
    return [metric for definition, _ in parsers for metric in definition.metrics]


def stamps(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The stamps of a record (``metrics_from``: one, or a list when several parsers)."""
    stamp = record.get(METRICS_FROM)
    if isinstance(stamp, Mapping):
        return [stamp]
    return [s for s in stamp if isinstance(s, Mapping)] if isinstance(stamp, list) else []


def stamped(earlier: list[Mapping[str, Any]], stamp: Mapping[str, Any]) -> Any:
    """A record's ``metrics_from`` once ``stamp``'s parser recomputed its metrics: the earlier
    stamps keep only the metrics it did not recompute (one stamp alone, not in a list)."""
    taken = set(stamp["metrics"])
    kept = []
    for old in earlier:
        metrics = [m for m in old.get("metrics") or () if m not in taken]
        if metrics:
            kept.append({**old, "metrics": metrics})
    return [*kept, dict(stamp)] if kept else dict(stamp)


def current(record: Mapping[str, Any], definitions: list[Definition]) -> bool:
    """Whether a record's metrics were computed with every definition (its stamps say so)."""
    have = {(s.get("parser"), s.get("digest"), s.get("time")) for s in stamps(record)}
    return all((d.parser, d.digest, d.time) in have for d in definitions)


def redefine(
    record: dict[str, Any],
    outputs: Mapping[str, bytes] | None,
    parsers: list[tuple[Definition, MetricsParser]],
) -> str | None:
    """Compute a finished task's metrics with the recorded parsers from its kept ``outputs``,
    in place (each parser's metrics replace the record's, the record stamped as remetric
    stamps); returns why it cannot be (the record left as it was), or None."""
    if not parsers:
        return None
    if outputs is None:
        named = ", ".join(definition.parser for definition, _ in parsers)
        return (
            f"it kept no outputs, and metrics of this campaign are computed from them by "
            f"{named} (`campaign remetric`): name what it reads in the model's keep:"
        )
    metrics, stamp = dict(record["metrics"]), record.get(METRICS_FROM)
    for definition, parser in parsers:
        try:
            found = metric_values(parser.parse(outputs))
        except Exception as error:  # noqa: BLE001 - a parser's failure is the task's
            text = str(error) if isinstance(error, ValueError | CampaignError) else None
            return f"metrics parser {definition.parser}: {text or describe_error(error)}"
        owned = set(definition.metrics)  # a sample's or breakdown's name for its entries
        returned = {entry_owner(name) for name in found}
        missing = [name for name in definition.metrics if name not in returned]
        if missing:
            return (
                f"metrics parser {definition.parser} returned no metric {missing[0]!r}, which it "
                "defines in this campaign"
            )
        metrics = {name: v for name, v in metrics.items() if entry_owner(name) not in owned}
        metrics.update({name: v for name, v in found.items() if entry_owner(name) in owned})
        stamp = stamped(stamps({METRICS_FROM: stamp}), definition.stamp())
    record["metrics"], record[METRICS_FROM] = metrics, stamp
    return None


class Redefining:
    """A run's store: each finished task's metrics computed with the recorded parsers from the
    outputs it brought back, before ``store`` (a task they cannot compute fails, saying why)."""

    def __init__(
        self,
        parsers: list[tuple[Definition, MetricsParser]],
        store: Callable[[list[dict[str, Any]]], Any],
    ):
        self.parsers, self.store = parsers, store

    def __call__(self, records: list[dict[str, Any]]) -> None:
        for record in records:
            if record["status"] != "ok":
                continue
            outputs = record.get(OUTPUTS) if carries_bytes(record) else None
            problem = redefine(record, outputs, self.parsers)
            if problem is not None:
                record.pop("metrics", None)
                record.update(status="failed", error=f"ValueError: {problem}", traceback="")
        self.store(records)


def common_definitions(folders: list[tuple[Path, Mapping[str, Any] | None]]) -> list[Definition]:
    """The definitions of metrics that output folders about to be joined (their paths and
    campaign.json) share: those of every folder that records any (a folder that records none
    has its records computed with them, `up_to_date`); folders whose remetrics differ are
    refused in one line."""
    found: tuple[Path, list[Definition]] | None = None
    for path, stored in folders:
        definitions = definitions_of(stored)
        if not definitions:
            continue
        if found is None:
            found = (path, definitions)
        elif definitions != found[1]:
            described = [", ".join(d.parser for d in ds) for ds in (found[1], definitions)]
            raise CampaignError(
                f"merge: {found[0]} and {path} hold metrics recomputed by `campaign remetric` "
                f"in other ways ({described[0]} against {described[1]}): give both the same "
                "remetric (the same parser, the same code) before they are merged"
            )
    return found[1] if found else []


def up_to_date(
    folder: Path,
    records: Mapping[str, dict[str, Any]],
    parsers: list[tuple[Definition, MetricsParser]],
    design: Container[str] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """New records for the finished tasks among ``records`` (those of the output folder
    ``folder``) computed before the recorded parsers defined some of their metrics, computed
    with them from their kept outputs; one line (nothing written) when one of the ``design``'s
    tasks (by key; None: every task) cannot be. Also the keys of the other tasks that cannot
    be (levels or replicates the spec no longer has), to be set aside: none may come back
    holding metrics of another definition."""
    from campaign.store.outputs import Archives, by_archive, reference

    definitions = [definition for definition, _ in parsers]
    stale = [r for r in records.values() if r["status"] == "ok" and not current(r, definitions)]
    new, refused, aside = [], [], []
    with Archives(folder) as archives:
        for record in by_archive(stale):
            record = dict(record)
            try:
                outputs = archives.read(record) if reference(record) is not None else None
            except CampaignError as error:
                problem = str(error)
            else:
                problem = redefine(record, outputs, parsers)
            if problem is None:
                new.append(record)
            elif design is None or record["key"] in design:
                refused.append(f"task {record['key']}: {problem}")
            else:
                aside.append(record["key"])
    if refused:
        refused.sort()
        metrics = ", ".join(m for d in definitions for m in d.metrics)
        raise CampaignError(
            f"merge: {len(refused)} finished tasks of {folder} hold metrics ({metrics}) that "
            "other folders recomputed by `campaign remetric`, and cannot be recomputed the same "
            f"way; nothing was written; the first: {refused[0]}"
        )
    return new, aside
