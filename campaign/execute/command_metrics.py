"""A program's metrics, read from its outputs: one pure function of the bytes it left.

The worker reads a task's metrics with `metrics_from_outputs` as the task ends, and so does
recomputing metrics later from kept outputs: one code path. The outputs are named as a
task's kept outputs are: "stdout", "stderr" and "files/<path in the task's folder>".

- stdout (the default): a JSON object, or ``key=value`` lines (lines without ``=`` are the
  program's own words and are skipped);
- ``{file: NAME}``: a file of the task's folder: a JSON object, ``key=value`` lines, or a CSV
  of a header and one row;
- ``{parse: module:function}``: ``function(folder)`` returns the metrics, given a folder that
  holds the outputs (each file under its path, stdout and stderr as the files ``stdout`` and
  ``stderr``).

Every problem (a missing output, garbage, a value that is no number) is one ``ValueError`` line.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from campaign.results.names import metric_name_problem
from campaign.spec.command import MetricsSource

SHOWN = 60  # characters of garbage shown in an error


class FolderOutputs(Mapping[str, bytes]):
    """A task's outputs as they lie on the worker, read only when asked for: its folder's
    files (``files/...``) and its stdout and stderr files."""

    def __init__(self, folder: Path, streams: Mapping[str, Path]) -> None:
        self.folder = folder
        self.streams = dict(streams)

    def path(self, name: str) -> Path | None:
        if name in self.streams:
            return self.streams[name]
        if name.startswith("files/"):
            return self.folder / name.removeprefix("files/")
        return None

    def __getitem__(self, name: str) -> bytes:
        path = self.path(name)
        if path is None or not path.is_file():
            raise KeyError(name)
        return path.read_bytes()

    def __contains__(self, name: object) -> bool:
        path = self.path(name) if isinstance(name, str) else None
        return path is not None and path.is_file()

    def __iter__(self) -> Iterator[str]:
        yield from self.streams
        for path in sorted(self.folder.rglob("*")):
            if path.is_file():
                yield "files/" + path.relative_to(self.folder).as_posix()

    def __len__(self) -> int:
        return sum(1 for _ in self)


def metrics_from_outputs(source: MetricsSource, outputs: Mapping[str, bytes]) -> dict[str, float]:
    """The metrics a task's outputs hold, by ``source`` (see the module's doc)."""
    if source.kind == "stdout":
        return parse_text(outputs.get("stdout", b""), "stdout")
    if source.kind == "file":
        name = f"files/{source.name}"
        if name not in outputs:
            raise ValueError(f"the program wrote no {source.name} in its folder (metrics: file)")
        return parse_text(outputs[name], source.name)
    if source.kind == "parse":
        return parse_with(source.name, outputs)
    raise ValueError(f"unknown metrics source {source.kind!r}")


def parse_text(data: bytes, what: str) -> dict[str, float]:
    """A JSON object, key=value lines or a one-row CSV (with its header)."""
    text = data.decode("utf-8", errors="replace")
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"{what} is empty: expected a JSON object or key=value lines")
    if stripped.startswith("{"):
        return from_json(stripped, what)
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    last = lines[-1]
    if last.startswith("{") and last.endswith("}"):
        return from_json(last, what)  # a log, then the metrics as JSON on the last line
    if any("=" in line for line in lines):
        return from_key_values(lines, what)
    if len(lines) == 2 and "," in lines[0]:
        return from_csv(stripped, what)
    raise ValueError(
        f"{what} holds no metrics (expected a JSON object, key=value lines or a one-row CSV); "
        f"it begins {stripped[:SHOWN]!r}"
    )


def from_json(text: str, what: str) -> dict[str, float]:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ValueError(
            f"{what} is not valid JSON ({error}); it begins {text[:SHOWN]!r}"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"{what}: expected a JSON object of metric: number, got {text[:SHOWN]!r}")
    return {str(name): number(value, name, what) for name, value in data.items()}


def from_key_values(lines: list[str], what: str) -> dict[str, float]:
    metrics = {}
    for line in lines:
        if "=" not in line:
            continue  # the program's own words
        name, _, value = line.partition("=")
        name = name.strip()
        if metric_name_problem(name) is not None:
            continue  # not a metric line (a log line holding '=')
        metrics[name] = number(value.strip(), name, what)
    if not metrics:
        raise ValueError(f"{what} holds no key=value line naming a metric")
    return metrics


def from_csv(text: str, what: str) -> dict[str, float]:
    rows = list(csv.reader(io.StringIO(text)))
    header, values = rows[0], rows[1]
    if len(header) != len(values):
        raise ValueError(f"{what}: the CSV row has {len(values)} values for {len(header)} columns")
    return {name.strip(): number(value.strip(), name, what) for name, value in zip(header, values)}


def number(value: object, name: object, what: str) -> float:
    """A metric's value as a float; one line naming it when it is no number."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{what}: metric {name!r} is {value!r}, not a number")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            result = float(value)
        except ValueError:
            pass
        else:
            if not math.isnan(result) or value.strip().lower() == "nan":
                return result
    raise ValueError(f"{what}: metric {name!r} is {str(value)[:SHOWN]!r}, not a number")


def parse_with(reference: str, outputs: Mapping[str, bytes]) -> dict[str, float]:
    """Call ``module:function`` with a folder holding the outputs."""
    module_name, _, attribute = reference.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"metrics parser {reference}: cannot load it ({error})") from None
    if isinstance(outputs, FolderOutputs):
        return checked(function(with_streams(outputs)), reference)
    with tempfile.TemporaryDirectory(prefix="campaign-outputs-") as folder:
        for name, data in outputs.items():
            target = Path(folder) / (name.removeprefix("files/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return checked(function(Path(folder)), reference)


def with_streams(outputs: FolderOutputs) -> Path:
    """The task's folder, with its stdout and stderr in it as the files stdout and stderr."""
    for name, path in outputs.streams.items():
        target = outputs.folder / name
        if not target.exists():
            os.link(path, target)
    return outputs.folder


def checked(metrics: object, reference: str) -> dict[str, float]:
    if not isinstance(metrics, Mapping):
        raise ValueError(
            f"metrics parser {reference} returned {type(metrics).__name__}, not a dict"
        )
    return {str(name): number(value, name, reference) for name, value in metrics.items()}
