"""Writing results.nc from an output folder's ledger: the one way every pipeline (run, merge,
remetric, the sizing pilot) writes it, so that what a results file says never lags behind
what it replaced.

Each results.nc carries ``results_digest``, a digest of its variables and attributes (the
time and host of writing aside). When results.nc is written again with another digest, the
files made from the earlier one (report.html, figures/, the exported table: see
`campaign.store.derived`) are removed, and the caller is told which: they would show numbers
that are no longer the campaign's. Written again with the same results, they stay.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from campaign.errors import CampaignError
from campaign.plan.state import RunState
from campaign.results.assemble import assemble_with_groups
from campaign.results.ledger_table import read_table
from campaign.results.netcdf import write_netcdf
from campaign.results.provenance import recomputed_attribute, source_provenance
from campaign.results.resource_group import resource_table
from campaign.results.table import failure_table
from campaign.spec.load import Spec
from campaign.store.derived import derived_files, remove_derived
from campaign.store.durable import room_left, write_failure
from campaign.store.folder import RESULTS_FILE
from campaign.store.results_attributes import results_attributes

DIGEST = "results_digest"  # the global attribute
NOT_DIGESTED = ("created", "history", "host", "versions", DIGEST)  # when and where, not what


def write_results(
    plan: RunState,
    confidence: float = 0.95,
    write: bool = True,
    attrs: dict[str, Any] | None = None,
    say: Callable[[str], None] | None = None,
) -> xr.Dataset:
    """Assemble results.nc from the ledger of a plan's output folder (``write``: and write it;
    ``attrs``: more global attributes). ``say`` hears of files made from an earlier
    results.nc that were removed as their results changed."""
    spec, design, model = plan.spec, plan.design, plan.model
    table = read_table(plan.ledger, design)  # a chunk of records at a time
    plan.replay(table)
    dataset, groups = assemble_with_groups(
        design, table, confidence, model.metrics, model.headline, plan.rounds, plan.stages
    )
    dataset.attrs.update(source_provenance(plan.ledger.read_identity() or {}))
    dataset.attrs.update(recomputed_attribute(table.recomputed))
    dataset.attrs.update(attrs or {})
    if not write:
        return dataset
    dataset.attrs[DIGEST] = results_digest(dataset, groups)
    failures = failure_table(dataset, design, table)
    resources = resource_table(table, plan.replicates.window)
    path = spec.output / RESULTS_FILE
    derived = derived_files(spec.output)
    earlier = stored_digest(path) if derived else None
    try:
        write_netcdf(dataset, path, failures, resources, groups)
    except OSError as error:
        kept = "every finished result is kept in the ledger"
        raise CampaignError(
            f"cannot write {path}: "
            f"{write_failure(error, spec.output, kept, 'run again (nothing reruns)')}"
        ) from None
    except RuntimeError as error:  # the netCDF library's, "HDF error"
        raise CampaignError(
            f"cannot write {path}: {error}{room_left(spec.output)}; every "
            "finished result is kept in the ledger: fix this and run again (nothing reruns)"
        ) from None
    if derived and earlier != dataset.attrs[DIGEST]:
        removed = remove_derived(spec.output, derived)
        (say or (lambda line: None))(
            f"{', '.join(removed)} removed from {spec.output}: made from the earlier "
            f"{RESULTS_FILE}, they would show results that are no longer these (`campaign "
            "report` and `campaign plot` make them again)"
        )
    return dataset


def results_digest(dataset: xr.Dataset, groups: dict[str, xr.Dataset] | None = None) -> str:
    """A digest of a results Dataset's variables (names, types, shapes, values) and global
    attributes, those saying when and where it was written aside, and of the variables of its
    ``groups`` (the samples and breakdowns: results too)."""
    digest = hashlib.blake2b(digest_size=16)
    _digest_variables(digest, dataset, "")
    for group in sorted(groups or {}):
        _digest_variables(digest, groups[group], f"{group}/")
    for name in sorted(set(dataset.attrs) - set(NOT_DIGESTED)):
        digest.update(f"{name}={dataset.attrs[name]!r}\x1e".encode())
    return "blake2b:" + digest.hexdigest()


def _digest_variables(digest, dataset: xr.Dataset, prefix: str) -> None:
    for name in sorted(map(str, dataset.variables)):
        values = np.asarray(dataset.variables[name].values)
        dims = dataset.variables[name].dims
        digest.update(f"{prefix}{name}|{values.dtype.str}|{values.shape}|{dims}".encode())
        if values.dtype.kind in "OUS":
            digest.update("\x1f".join(map(str, values.ravel().tolist())).encode())
        else:
            digest.update(np.ascontiguousarray(values).view(np.uint8).data)  # no copy


def stored_confidence(path: Path) -> float | None:
    """The confidence level of a results file's intervals (None: none there, or not
    readable)."""
    value = stored_attribute(path, "confidence")
    try:
        return None if value is None else float(value)
    except ValueError:
        return None


def kept_confidence(paths: list[Path], say: Callable[[str], None] | None = None) -> float:
    """The confidence level of results written again from stored ones (`remetric`, `merge`,
    a sizing pilot): that of the results files among ``paths`` that have one, so that
    recomputing changes none of its intervals; 0.95 when none has one, or when they differ
    (``say`` hears which levels were found)."""
    levels = sorted({level for path in paths if (level := stored_confidence(path)) is not None})
    if len(levels) == 1:
        return levels[0]
    if levels and say is not None:
        found = ", ".join(f"{level:g}" for level in levels)
        say(f"results made at confidence {found}: written at 0.95 (--confidence chooses)")
    return 0.95


def run_level(spec: Spec, new: bool = False) -> float:
    """The confidence level a run writes its results at when none is given: the precision
    target's, so that the intervals shown are those its stopping rule checked; else that of the
    results.nc already there (unless ``new`` sets it aside), so that more replicates change no
    level chosen before; else 0.95."""
    if spec.precision is not None:
        return spec.precision.confidence
    return 0.95 if new else kept_confidence([spec.output / RESULTS_FILE])


def merge_level(spec: Spec, paths: list[Path], say: Callable[[str], None]) -> float:
    """The confidence level a merge writes at when none is given: the precision target's, as a
    run of the whole campaign would (its stopping rule checked intervals at that level); else
    that of the results files among ``paths`` (`kept_confidence`)."""
    if spec.precision is not None:
        return spec.precision.confidence
    return kept_confidence(paths, say)


def stored_digest(path: Path) -> str | None:
    """The ``results_digest`` of a results file (None: none there, or not readable)."""
    value = stored_attribute(path, DIGEST)
    return None if value is None else str(value)


def stored_attribute(path: Path, name: str) -> object | None:
    """A global attribute of a results file, read without opening the whole Dataset (None:
    none there, or not readable)."""
    try:
        return results_attributes(path, [name]).get(name)
    except OSError:
        return None
