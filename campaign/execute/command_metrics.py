"""A program's metrics, read from its outputs: one pure function of the bytes it left.

The worker reads a task's metrics with `metrics_from_outputs` as the task ends, and so does
recomputing metrics later from kept outputs: one code path. The outputs are named as a
task's kept outputs are: "stdout", "stderr" and "files/<path in the task's folder>"; on the
worker they are read from its files as streams (`campaign.execute.metric_text`), so a huge
output is never held whole.

- stdout (the default): a JSON object, or ``key=value`` lines (lines without ``=`` are the
  program's own words and are skipped);
- ``{file: NAME}``: a file of the task's folder: a JSON object, ``key=value`` lines, or a CSV
  of a header and one row;
- ``{parse: module:function}``: ``function(folder)`` returns the metrics, given a folder that
  holds the outputs (each file under its path, stdout and stderr as the files ``stdout`` and
  ``stderr``);
- and the samples that ``declare`` places in files of their own (one number per line, or a
  CSV column).

A metric is a number, a sample (a JSON array, a parser's list or array) or a breakdown (a
JSON object ``{label: {metric: number}}``, a parser's dict of dicts), as a Python model's.
`campaign.results.check.check_declared` holds them to ``declare`` (names and kinds) once they
are stored entries.
Every problem (a missing output, garbage, a value that is no number, a metric given twice)
is one ``ValueError`` line.
"""

from __future__ import annotations

import importlib
import io
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np

from campaign.execute.metric_text import (
    metric_value,
    read_column,
    read_metrics,
    read_numbers,
)
from campaign.spec.command_model import MetricsSource, SampleFile


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


def metrics_from_outputs(source: MetricsSource, outputs: Mapping[str, bytes]) -> dict[str, object]:
    """The metrics a task's outputs hold, by ``source`` (see the module's doc): numbers,
    samples (float64 arrays) and breakdowns, as a Python model returns them."""
    metrics = main_metrics(source, outputs) if source.main else {}
    for sample in source.samples:
        if sample.metric in metrics:
            main = "stdout" if source.kind == "stdout" else source.name
            raise ValueError(
                f"metric {sample.metric!r} is given twice: by {main} and by its own file "
                f"{sample.file}; give each metric once"
            )
        metrics[sample.metric] = sample_from(sample, outputs)
    return metrics


def main_metrics(source: MetricsSource, outputs: Mapping[str, bytes]) -> dict[str, object]:
    if source.kind == "stdout":
        with opened(outputs, "stdout", "stdout") as handle:
            return read_metrics(handle, "stdout")
    if source.kind == "file":
        with opened(outputs, f"files/{source.name}", source.name) as handle:
            return read_metrics(handle, source.name)
    if source.kind == "parse":
        return parse_with(source.name, outputs)
    raise ValueError(f"unknown metrics source {source.kind!r}")


def sample_from(sample: SampleFile, outputs: Mapping[str, bytes]) -> np.ndarray:
    what = f"{sample.file} (sample {sample.metric})"
    with opened(outputs, f"files/{sample.file}", sample.file) as handle:
        if sample.column:
            return read_column(handle, sample.column, what)
        return read_numbers(handle, what)


def opened(outputs: Mapping[str, bytes], name: str, shown: str) -> BinaryIO:
    """An output to read as a stream: its file on the worker, its bytes when kept; one line
    when there is none (the program wrote none, or the task did not keep it)."""
    if isinstance(outputs, FolderOutputs):
        path = outputs.path(name)
        if path is None or not path.is_file():
            raise ValueError(f"the program wrote no {shown} in its folder")
        return open(path, "rb")
    if name not in outputs:
        raise ValueError(
            f"{shown} was not kept for this task, so its metrics cannot be read again; "
            f"name it in the model's keep: (keep: [{shown}]) for the tasks run from then on"
        )
    return io.BytesIO(outputs[name])


def parse_with(reference: str, outputs: Mapping[str, bytes]) -> dict[str, object]:
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


def checked(metrics: object, reference: str) -> dict[str, object]:
    """A parser's dict: numbers, samples (lists, arrays) and breakdowns (dicts of dicts)."""
    if not isinstance(metrics, Mapping):
        raise ValueError(
            f"metrics parser {reference} returned {type(metrics).__name__}, not a dict"
        )
    return {str(name): metric_value(value, str(name), reference) for name, value in metrics.items()}
