"""Read Standard Workload Format (SWF) traces into columnar numpy arrays, and clean them.

SWF v2.2 (Parallel Workloads Archive): one job per line, 18 whitespace-separated numeric
fields, ``-1`` for unknown; lines starting with ``;`` are the header (``; Key: value``).
Columns are kept as whole arrays so that slicing, shaping and metrics stay vectorised.
"""

from __future__ import annotations

import gzip
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FIELDS: tuple[str, ...] = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable_number",
    "queue_number",
    "partition_number",
    "preceding_job_number",
    "think_time",
)
"""The 18 SWF fields in file order (field k of the format is ``FIELDS[k - 1]``)."""

INTEGER_HEADER_KEYS = ("MaxJobs", "MaxRecords", "MaxNodes", "MaxProcs", "UnixStartTime", "TimeZone")


@dataclass(frozen=True)
class SwfTrace:
    """A parsed SWF file: its header and one float64 array per field (``-1`` = unknown)."""

    path: str
    header: Mapping[str, str]
    columns: Mapping[str, np.ndarray]
    line_numbers: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.line_numbers)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def header_int(self, key: str) -> int | None:
        """An integer header value (``MaxProcs``...), or None when absent or not a number."""
        value = self.header.get(key)
        if value is None:
            return None
        try:
            return int(float(value.split()[0]))
        except (ValueError, IndexError):
            return None

    @property
    def max_procs(self) -> int | None:
        """Site size from the header: MaxProcs, else MaxNodes, else None."""
        procs = self.header_int("MaxProcs")
        if procs is None or procs <= 0:
            procs = self.header_int("MaxNodes")
        return procs if procs is not None and procs > 0 else None


def _open_text(path: Path):
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _parse_header_line(line: str, header: dict[str, str]) -> None:
    text = line.lstrip(";").strip()
    key, sep, value = text.partition(":")
    key = key.strip()
    if sep and key and " " not in key:
        header.setdefault(key, value.strip())


def read_swf(path: str | Path) -> SwfTrace:
    """Parse an SWF file (plain or gzip). A malformed line raises one ``ValueError``.

    The error names the file, the 1-based line number and the reason, because a trace with one
    bad line silently shifted would corrupt every number computed from it. A trace without
    jobs is refused too: every metric of a run on it would be undefined.
    """
    path = Path(path)
    header: dict[str, str] = {}
    rows: list[str] = []
    numbers: list[int] = []
    with _open_text(path) as stream:
        text = stream.read()  # newlines already translated to \n
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            _parse_header_line(stripped, header)
            continue
        count = len(stripped.split())
        if count != 18:
            raise ValueError(f"{path}: line {number}: expected 18 SWF fields, found {count}")
        rows.append(stripped)
        numbers.append(number)
    if not rows:
        raise ValueError(f"trace {path} has no jobs (no job line after its header)")
    # numpy reads every field in C, correctly rounded as float() does; a field it cannot
    # read (an error, or a short array in older numpy) is named by the loop below.
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            table = np.fromstring(" ".join(rows), dtype=np.float64, sep=" ")
    except ValueError:
        table = None
    if table is not None and table.size == 18 * len(rows):
        table = table.reshape(len(rows), 18)
    else:
        table = None
    if table is None or not np.isfinite(table).all():
        _refuse_bad_field(path, rows, numbers)
        if table is None:  # fields float() reads but strtod does not (such as 1_000)
            table = np.array([[float(text) for text in line.split()] for line in rows])
    columns = {name: np.ascontiguousarray(table[:, k]) for k, name in enumerate(FIELDS)}
    return SwfTrace(str(path), header, columns, np.asarray(numbers, dtype=np.int64))


def _refuse_bad_field(path: Path, rows: list[str], numbers: list[int]) -> None:
    """Raise one ``ValueError`` naming the first field that is not a finite number."""
    for line, number in zip(rows, numbers, strict=True):
        for k, text in enumerate(line.split()):
            try:
                value = float(text)
            except ValueError:
                value = float("nan")
            if not np.isfinite(value):
                raise ValueError(
                    f"{path}: line {number}: field {k + 1} ({FIELDS[k]}) is not a number: {text!r}"
                ) from None


# Cleaning filters of parallel-jobs.md section 1.2, in the order they are applied and reported.
CLEANING_REASONS: tuple[str, ...] = (
    "job_number",
    "submit_time",
    "run_time",
    "size",
    "requested_time",
    "user_id",
    "status",
)


def job_sizes(trace: SwfTrace) -> np.ndarray:
    """Processors per job: allocated (field 5), or requested (field 8) when unknown."""
    allocated = trace["allocated_processors"]
    return np.where(allocated > 0, allocated, trace["requested_processors"])


def clean_mask(trace: SwfTrace) -> tuple[np.ndarray, dict[str, int]]:
    """Jobs kept by the section 1.2 filters, and how many each filter removed.

    A job is counted under the first filter that removes it, so the counts add up to the
    number of dropped jobs.
    """
    tests = {
        "job_number": trace["job_number"] <= 0,
        "submit_time": trace["submit_time"] < 0,
        "run_time": trace["run_time"] <= 0,
        "size": job_sizes(trace) <= 0,
        "requested_time": trace["requested_time"] <= 0,
        "user_id": trace["user_id"] <= 0,
        "status": np.isin(trace["status"], (0, 4, 5)),
    }
    keep = np.ones(len(trace), dtype=bool)
    counts: dict[str, int] = {}
    for reason in CLEANING_REASONS:
        drop = tests[reason] & keep
        counts[reason] = int(drop.sum())
        keep &= ~drop
    return keep, counts
