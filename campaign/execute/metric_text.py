"""Metrics in a program's text outputs, read as a stream: a huge output is never held whole.

- a metrics text (stdout, or a file named by ``metrics: {file:}``): a JSON object, key=value
  lines (lines without ``=`` are the program's own words), or a CSV of a header and one row;
  of a long log only the key=value lines and the last line are held, of a JSON object at most
  `LIMIT` bytes;
- a sample's file: one number per line, or one column of a CSV file with a header row.

A value is a number as a program prints it (ASCII digits, no ``_``): integers beyond
float64's exact range (``2**53 + 1``) are refused rather than rounded, and so are numbers
too large for float64 (``1e400``, which it would hold as an infinity);
``nan`` in any of the forms C's printf writes (``-nan``, ``NAN``, ``nan(0x8000)``) is NaN, an
undefined value; ``inf``, ``-inf`` are infinities. A metric given twice is refused. Every
problem is one ``ValueError`` line.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping
from typing import BinaryIO

import numpy as np

from campaign.results.names import metric_name_problem

SHOWN = 60  # characters of garbage shown in an error
BLOCK = 1 << 20  # bytes read at a time
LIMIT = 64 * 2**20  # bytes of metrics text held: a JSON object, the key=value lines, a line
LIMIT_WORDS = "64 MiB"
EXACT = 2**53  # float64 holds every integer up to this size, and not all beyond
NAN_TEXT = re.compile(r"[+-]?nan(\([0-9a-z_]*\))?", re.IGNORECASE)
INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
INFINITY_TEXT = re.compile(r"[+-]?inf(inity)?", re.IGNORECASE)


class Repeated(ValueError):
    """A JSON object gives one key twice."""


class OutOfRange(ValueError):
    """A finite number too large for float64, which would store it as an infinity."""


# -- values -------------------------------------------------------------------------------------
def number(value: object, name: object, what: str) -> float:
    """A metric's value as a float; one line naming it when it is no number or an integer
    that float64 would round."""
    if isinstance(value, np.generic):
        value = value.item()  # a NumPy scalar as the Python number it holds
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{what}: metric {name!r} is {value!r}, not a number")
    if isinstance(value, int):
        return exact(value, name, what)
    if isinstance(value, float):
        return value
    if isinstance(value, str | bytes):
        text = (value.decode("utf-8", "replace") if isinstance(value, bytes) else value).strip()
        if NAN_TEXT.fullmatch(text):
            return math.nan
        if INTEGER_TEXT.fullmatch(text):
            try:
                integer = int(text)
            except ValueError:  # more digits than Python converts: beyond float64 anyway
                raise ValueError(f"{what}: metric {name!r} is beyond float64's range") from None
            return exact(integer, name, what)
        try:
            result = decimal(text)
        except OutOfRange as error:
            raise ValueError(f"{what}: metric {name!r} is {error}") from None
        except ValueError:
            pass
        else:
            if not math.isnan(result):
                return result
        value = text
    raise ValueError(f"{what}: metric {name!r} is {str(value)[:SHOWN]!r}, not a number")


def decimal(text: str) -> float:
    """A number printed as text, as float64: `OutOfRange` for a finite one too large (float64
    would hold an infinity), ValueError for no number (or one in a form no program prints:
    ``5_000``, digits of other scripts)."""
    result = float(text)
    text = text.strip()
    if "_" in text or not text.isascii():
        raise ValueError(text)
    if math.isinf(result) and not INFINITY_TEXT.fullmatch(text):
        raise OutOfRange(f"{text}, beyond float64's range (it would be stored as inf)")
    return result


def exact(value: int, name: object, what: str) -> float:
    """An integer as the float64 results store, or one line when float64 would change it."""
    if -EXACT <= value <= EXACT:
        return float(value)
    try:
        stored = float(value)
    except OverflowError:
        raise ValueError(f"{what}: metric {name!r} is {value}, beyond float64's range") from None
    if stored != value:
        raise ValueError(
            f"{what}: metric {name!r} is the integer {value}, which float64 (how results store "
            f"metrics) would round to {int(stored)}; every integer up to 2**53 is exact: print "
            "it as a float (with a decimal point) if the rounding is acceptable"
        )
    return stored


def metric_value(value: object, name: str, what: str) -> float | np.ndarray | dict:
    """A value of a JSON object or a parser's dict: a number, a sample (an array of numbers)
    or a breakdown (``{label: {metric: number}}``, named by its dimension)."""
    if isinstance(value, Mapping):
        return breakdown(value, name, what)
    if isinstance(value, list | tuple) or (isinstance(value, np.ndarray) and value.ndim):
        return sample(value, name, what)
    return number(value, name, what)


def sample(values: list | tuple | np.ndarray, name: str, what: str) -> np.ndarray:
    """An array of numbers as float64 (its dimensions are checked as a model's sample's). As
    of a Python model's sample, whose quantiles are kept, an integer is taken as float64
    holds it."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        return values.astype(np.float64)
    floats = np.empty(len(values))
    for index, value in enumerate(values):
        if type(value) is float or type(value) is int:
            try:
                floats[index] = value
            except OverflowError:
                raise ValueError(f"{what}: {name}[{index}] is beyond float64's range") from None
        else:
            floats[index] = number(value, f"{name}[{index}]", what)
    return floats


def breakdown(value: Mapping, name: str, what: str) -> dict[str, dict[str, float]]:
    """``{label: {metric: number}}``, each number checked."""
    out = {}
    for label, metrics in value.items():
        if not isinstance(metrics, Mapping):
            raise ValueError(
                f"{what}: breakdown {name!r}: label {label!r} holds {str(metrics)[:SHOWN]!r}, "
                "not an object of metric: number"
            )
        out[label] = {
            metric: number(number_of, f"{name}.{label}.{metric}", what)
            for metric, number_of in metrics.items()
        }
    return out


# -- a metrics text -----------------------------------------------------------------------------
def read_metrics(handle: BinaryIO, what: str) -> dict[str, object]:
    """A JSON object, key=value lines or a one-row CSV (with its header), read as a stream."""
    while True:
        block = handle.read(BLOCK)
        if not block:
            raise ValueError(f"{what} is empty: expected a JSON object or key=value lines")
        block = block.lstrip()
        if block:
            break
    if block.startswith(b"{"):  # a JSON document, held whole (within the limit)
        text = block + handle.read(LIMIT + 1 - len(block))
        if len(text) > LIMIT:
            raise ValueError(
                f"{what}: its JSON object is over {LIMIT_WORDS}; write a large sample to a file "
                "of its own (model.declare: {NAME: {kind: sample, file: FILE}})"
            )
        return from_json(text.decode("utf-8", "replace").strip(), what)
    scan = LineScan()
    scan.feed(block)
    for block in iter(lambda: handle.read(BLOCK), b""):
        scan.feed(block)
    return scan.metrics(what)


class LineScan:
    """What the metrics need of a text that is not one JSON object, gathered block by block:
    how many lines it has (up to 3) and its first two (a one-row CSV), its last line (a log
    ending with the metrics as JSON) and its key=value lines naming metrics."""

    def __init__(self) -> None:
        self.carry = b""  # the line the last block ended inside
        self.skipping = False  # inside a line over the limit
        self.lines = 0
        self.head: list[bytes] = []
        self.last: bytes | None = None  # None: the last line was over the limit
        self.assigns = False  # some line holds '='
        self.pairs: dict[str, bytes] = {}
        self.twice: str | None = None
        self.held = 0

    def feed(self, block: bytes) -> None:
        if self.skipping:
            end = block.find(b"\n")
            if end < 0:
                return
            block, self.skipping = block[end + 1 :], False
        data = self.carry + block
        lines = data.split(b"\n")
        self.carry = lines.pop()
        self.take(lines, b"=" in data)
        if len(self.carry) > LIMIT:  # a line too long to be metrics: counted, not held
            begins, self.carry, self.skipping = self.carry[:SHOWN], b"", True
            self.take([begins], False)
            self.last = None

    def take(self, lines: list[bytes], assigns: bool) -> None:
        if self.lines < 3:
            for line in lines:
                line = line.strip()
                if line:
                    self.lines += 1
                    self.head += [line] if len(self.head) < 2 else []
                    if self.lines >= 3:
                        break
        if assigns:
            for line in lines:
                if b"=" in line:
                    for part in line.splitlines():
                        self.assignment(part.strip())
        for line in reversed(lines):
            parts = [part.strip() for part in line.splitlines() if part.strip()]
            if parts:
                self.last = parts[-1]
                break

    def assignment(self, line: bytes) -> None:
        if b"=" not in line:
            return
        self.assigns = True
        name, _, value = line.partition(b"=")
        name = name.strip().decode("utf-8", "replace")
        if metric_name_problem(name) is not None:
            return  # not a metric line (a log line holding '=')
        if name in self.pairs:
            self.twice = self.twice or name
            return
        self.held += len(line)
        if self.held <= LIMIT:
            self.pairs[name] = value.strip()

    def metrics(self, what: str) -> dict[str, object]:
        if self.carry:
            self.take([self.carry], b"=" in self.carry)
            self.carry = b""
        last = self.last
        if last is not None and last.startswith(b"{") and last.endswith(b"}"):
            return from_json(last.decode("utf-8", "replace"), what)  # a log, then JSON
        if self.assigns:
            return self.key_values(what)
        if self.lines == 2 and b"," in self.head[0]:
            return from_csv(b"\n".join(self.head).decode("utf-8", "replace"), what)
        begins = self.head[0][:SHOWN].decode("utf-8", "replace") if self.head else ""
        raise ValueError(
            f"{what} holds no metrics (expected a JSON object, key=value lines or a one-row "
            f"CSV); it begins {begins!r}"
        )

    def key_values(self, what: str) -> dict[str, object]:
        if self.held > LIMIT:
            raise ValueError(f"{what}: its key=value lines naming metrics are over {LIMIT_WORDS}")
        if self.twice is not None:
            raise ValueError(
                f"{what}: metric {self.twice!r} is printed twice; print each metric once"
            )
        if not self.pairs:
            raise ValueError(f"{what} holds no key=value line naming a metric")
        return {name: number(value, name, what) for name, value in self.pairs.items()}


def unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object's pairs as a dict; a key given twice is refused."""
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise Repeated(key)
        found[key] = value
    return found


def from_json(text: str, what: str) -> dict[str, object]:
    data = parsed_json(text, what)
    if not isinstance(data, dict):
        raise ValueError(f"{what}: expected a JSON object of metric: number, got {text[:SHOWN]!r}")
    metrics = {str(name): metric_value(value, str(name), what) for name, value in data.items()}
    if any(infinite(value) for value in metrics.values()):  # printed so, or too large?
        parsed_json(text, what, parse_float=decimal)  # each number looked at again, only then
    return metrics


def parsed_json(text: str, what: str, **options) -> object:
    """The JSON text parsed, or one line on why not (a key given twice, a number too large)."""
    try:
        return json.loads(text, object_pairs_hook=unique_keys, **options)
    except Repeated as repeated:
        raise ValueError(
            f"{what}: {str(repeated)!r} is given twice in the JSON object; give each metric once"
        ) from None
    except OutOfRange as error:
        raise ValueError(f"{what}: the JSON object holds {error}") from None
    except ValueError as error:
        raise ValueError(
            f"{what} is not valid JSON ({error}); it begins {text[:SHOWN]!r}"
        ) from None


def infinite(value: object) -> bool:
    """Whether a metric's value (a number, a sample, a breakdown) holds an infinity."""
    if isinstance(value, dict):
        return any(infinite(v) for v in value.values())
    return bool(np.isinf(value).any())


def from_csv(text: str, what: str) -> dict[str, object]:
    header, values = list(csv.reader(io.StringIO(text)))[:2]
    if len(header) != len(values):
        raise ValueError(f"{what}: the CSV row has {len(values)} values for {len(header)} columns")
    names = [name.strip() for name in header]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise ValueError(f"{what}: metric {twice!r} is given twice in the CSV header")
    return {name: number(value.strip(), name, what) for name, value in zip(names, values)}


# -- a sample's file ----------------------------------------------------------------------------
def read_numbers(handle: BinaryIO, what: str) -> np.ndarray:
    """A file of one number per line (blank lines skipped) as a sample."""
    values = array("d")
    for line_number, line in numbered_lines(handle, what):
        values.append(sample_number(line, f"{what} line {line_number}"))
    return np.frombuffer(values, dtype=np.float64) if values else np.empty(0)


def sample_number(text: str | bytes, where: str) -> float:
    """One value of a sample's file (NaN in printf's forms too; a sample then refuses it)."""
    shown = (text.decode("utf-8", "replace") if isinstance(text, bytes) else text).strip()
    try:
        return decimal(shown)
    except OutOfRange as error:
        raise ValueError(f"{where}: {error}") from None
    except ValueError:
        pass
    if NAN_TEXT.fullmatch(shown):
        return math.nan
    raise ValueError(f"{where}: {shown[:SHOWN]!r} is not a number")


def numbered_lines(handle: BinaryIO, what: str) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a file of numbers with their numbers, read block by block."""
    carry, at = b"", 0
    for block in iter(lambda: handle.read(BLOCK), b""):
        lines = (carry + block).split(b"\n")
        carry = lines.pop()
        if len(carry) > LIMIT:
            raise ValueError(f"{what}: line {at + len(lines) + 1} is over {LIMIT_WORDS}")
        for line in lines:
            at += 1
            if line.strip():
                yield at, line
    if carry.strip():
        yield at + 1, carry


def read_column(handle: BinaryIO, column: str, what: str) -> np.ndarray:
    """The column ``column`` of a CSV file with a header row, as a sample."""
    reader = csv.reader(io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline=""))
    try:
        header = [name.strip() for name in next(reader, [])]
        if header.count(column) != 1:
            shown = ", ".join(header[:20]) or "none"
            how = "twice" if header.count(column) else "not"
            raise ValueError(
                f"{what}: column {column!r} is {how} in its header row (its columns: {shown})"
            )
        return column_values(reader, header.index(column), column, what)
    except csv.Error as error:
        raise ValueError(f"{what} line {reader.line_num}: not a CSV file ({error})") from None


def column_values(rows: Iterable[list[str]], index: int, column: str, what: str) -> np.ndarray:
    values = array("d")
    for row in rows:
        if not any(cell.strip() for cell in row):
            continue
        line = getattr(rows, "line_num", "?")
        if index >= len(row):
            raise ValueError(f"{what} line {line}: no value in column {column!r}")
        values.append(sample_number(row[index], f"{what} line {line}, column {column!r}"))
    return np.frombuffer(values, dtype=np.float64) if values else np.empty(0)
