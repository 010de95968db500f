"""The results as one tidy table, one row per task, for tools outside xarray (R, a spreadsheet).

Columns: the factors, ``replicate``, ``seed``, ``status`` (ok, failed or missing), the metrics
and ``error`` (the error text of a failed task, empty otherwise). With a precision target (a
selection), a cell's rows are the replicates its rounds (stages) gave it. Units and long
names go with the table: as field metadata in Parquet, and in CSV as a sidecar file
``<name>.units.csv`` (columns ``column``, ``units``, ``long_name``) beside the table, so the
table itself stays a plain CSV. ``-`` as the file is the CSV for standard output (`csv_text`), its
units in one line (`units_line`) for the caller to say; Parquet, binary, goes to a file only.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from campaign.errors import CampaignError, ParameterError
from campaign.render.cells import to_csv
from campaign.results.assemble import factors_of, metrics_of, point_factors_of
from campaign.results.status import STATUS_FAILED, STATUS_NAMES

FORMATS = ("csv", "parquet")
STDOUT = "-"  # the file name that means standard output


def tidy(dataset: xr.Dataset, failures: xr.Dataset | None = None) -> pd.DataFrame:
    """One row per task: factors (the dimensions, then the factors whose values lie along
    ``point``), replicate, seed, status, metrics and error text."""
    factors = factors_of(dataset)
    metrics = metrics_of(dataset)
    frame = dataset[["seed", "status", *metrics]].to_dataframe().reset_index()
    frame = frame[[*factors, *point_factors_of(dataset), "replicate", "seed", "status", *metrics]]
    for name in ("precision_replicates", "selection_replicates"):
        if name not in dataset:
            continue
        given = dataset[name].reset_coords(drop=True).to_dataframe()
        given = given.reset_index()
        frame = frame.merge(given, on=factors, how="left") if factors else frame
        if not factors:
            frame[name] = int(dataset[name])
        frame = frame[frame["replicate"] < frame.pop(name)]
    frame["status"] = frame["status"].map(STATUS_NAMES)
    frame["error"] = _errors(frame, failures)
    return frame.reset_index(drop=True)


def _errors(frame: pd.DataFrame, failures: xr.Dataset | None) -> pd.Series:
    """The error text of each failed row, joined on the factor levels and the replicate."""
    errors = pd.Series("", index=frame.index, dtype=object)
    if failures is None or not failures.sizes.get("failure"):
        return errors
    factors = list(frame.columns[: frame.columns.get_loc("replicate")])
    cells = [json.loads(str(cell)) for cell in failures["failure_cell"].values]
    table = {}
    for factor in factors:  # files that lack the factor columns hold the levels as JSON
        if factor in failures:
            table[factor] = failures[factor].values
        else:
            table[factor] = np.array([cell[factor] for cell in cells])
        table[factor] = pd.Series(table[factor]).astype(frame[factor].dtype).to_numpy()
    table["replicate"] = failures["failure_replicate"].values.astype(frame["replicate"].dtype)
    table["error"] = failures["failure_error"].values.astype(str)
    joined = frame[[*factors, "replicate"]].merge(
        pd.DataFrame(table), on=[*factors, "replicate"], how="left"
    )
    failed = (frame["status"] == STATUS_NAMES[STATUS_FAILED]).to_numpy()
    errors[failed] = joined["error"].fillna("").to_numpy()[failed]
    return errors


def column_attributes(dataset: xr.Dataset) -> dict[str, dict[str, str]]:
    """Units and long name of every column of the tidy table."""
    columns = {}
    for factor in [*factors_of(dataset), *point_factors_of(dataset)]:
        columns[factor] = _attrs(dataset[factor].attrs, f"factor {factor}")
    columns["replicate"] = {"units": "1", "long_name": "replicate index"}
    columns["seed"] = {"units": "", "long_name": "random seed of the task"}
    columns["status"] = {"units": "", "long_name": "task status: ok, failed or missing"}
    for metric in metrics_of(dataset):
        columns[metric] = _attrs(dataset.variables[metric].attrs, metric)
    columns["error"] = {"units": "", "long_name": "error message of a failed task"}
    return columns


def _attrs(attrs, default_name: str) -> dict[str, str]:
    return {
        "units": str(attrs.get("units", "")),
        "long_name": str(attrs.get("long_name", default_name)),
    }


def units_sidecar(path: Path) -> Path:
    """Where the units of a CSV table go: ``results.csv`` -> ``results.units.csv``."""
    return path.with_name(f"{path.stem}.units.csv")


def export(
    dataset: xr.Dataset,
    failures: xr.Dataset | None,
    path: str | Path,
    fmt: str | None = None,
) -> list[Path]:
    """Write the tidy table to ``path`` as CSV or Parquet (default: from the file's suffix);
    returns the files written."""
    path = Path(path)
    if fmt is None:
        fmt = path.suffix.lstrip(".").lower() or "csv"
        if fmt not in FORMATS:
            raise ParameterError(
                f"{{out}} {path}: cannot tell the format from the suffix; give {{fmt}} csv or "
                "parquet",
                "out",
                "fmt",
            )
    if fmt not in FORMATS:
        raise ParameterError(f"{{fmt}} {fmt!r} is not allowed; use {' or '.join(FORMATS)}", "fmt")
    suffix = path.suffix.lstrip(".").lower()
    if suffix in FORMATS and suffix != fmt:  # Parquet bytes in t.csv, or CSV in t.parquet
        raise ParameterError(
            f"{{fmt}} {fmt} and {{out}} {path} (a .{suffix} file) disagree; give a file name "
            "with the format's suffix, or leave {fmt} out",
            "fmt",
            "out",
        )
    check_target(path)
    frame = tidy(dataset, failures)
    attributes = column_attributes(dataset)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "csv":
            write_csv(frame, path)
            sidecar = units_sidecar(path)
            units = [{"column": name, **attributes[name]} for name in frame.columns]
            write_csv(pd.DataFrame(units), sidecar)
            return [path, sidecar]
        _write_parquet(frame, attributes, dataset.attrs, path)
    except OSError as error:
        raise CampaignError(f"cannot write {path}: {error.strerror or error}") from None
    return [path]


def csv_text(dataset: xr.Dataset, failures: xr.Dataset | None, fmt: str | None) -> str:
    """The CSV for standard output (``-``), for the caller to print once it is sure of the
    file it read; Parquet refused (binary bytes in a terminal or a pipe)."""
    if fmt not in (None, *FORMATS):
        raise ParameterError(f"{{fmt}} {fmt!r} is not allowed; use {' or '.join(FORMATS)}", "fmt")
    if fmt == "parquet":
        raise ParameterError(
            "{out} -: parquet is binary and goes to a file; give {out} FILE.parquet, or {fmt} "
            "csv for standard output",
            "out",
            "fmt",
        )
    return to_csv(tidy(dataset, failures))


def units_line(dataset: xr.Dataset) -> str:
    """The units a CSV's sidecar would carry, in one line: what a table written to standard
    output has no file beside it for."""
    attributes = column_attributes(dataset)
    shown = [f"{name} [{a['units']}]" for name, a in attributes.items() if a["units"]]
    return "units (standard output has no NAME.units.csv beside it): " + ", ".join(shown)


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """CSV whose text cells no spreadsheet evaluates as a formula (see `campaign.render.cells`)."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(to_csv(frame))


def check_target(path: Path) -> None:
    """Refuse, before any work, a file path that is a folder or whose folder a file blocks."""
    if path.is_dir():
        raise ParameterError(
            f"{{out}} {path} is a folder; give a file such as {path / 'results.csv'}", "out"
        )
    for place in path.parents:
        if place.exists():
            if not place.is_dir():
                raise ParameterError(f"{{out}} {path}: {place} is a file, not a folder", "out")
            return


PROVENANCE_KEYS = (
    "title",
    "model",
    "base_seed",
    "confidence",
    "spec_digest",
    "results_digest",
    "created",
    "incomplete",  # why the file lacks tasks its folder holds, when it does
)


def _write_parquet(frame: pd.DataFrame, attributes, provenance, path: Path) -> None:
    """Parquet with each column's units and long name as field metadata, and the results'
    provenance (spec, model, seed, ...) as table metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    fields = [
        field.with_metadata({key: value for key, value in attributes[field.name].items()})
        for field in table.schema
    ]
    metadata = dict(table.schema.metadata or {})
    metadata[b"campaign"] = json.dumps(
        {key: str(provenance[key]) for key in PROVENANCE_KEYS if key in provenance}
        | {"spec": str(provenance.get("spec", ""))}
    ).encode()
    table = table.cast(pa.schema(fields, metadata=metadata))
    pq.write_table(table, path)
