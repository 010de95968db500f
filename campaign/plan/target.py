"""Which campaign a command works on, whatever it was given: a spec file, a spec as a dict
(the keys of a spec file; relative paths taken from the working folder), a `Spec`, or an
output folder, whose results.nc keeps the spec it was made from. Every command of the Python
API, the `Campaign` handle and the pipelines take a campaign this one way."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from campaign.design.shards import Shard, as_shard, placed
from campaign.errors import CampaignError, ParameterError
from campaign.spec.load import Spec, load_spec, spec_from_text
from campaign.store.folder import RESULTS_FILE
from campaign.store.results_attributes import results_attributes
from campaign.store.unwritten import shard_note

GIVEN = "a spec file's path, an output folder, a dict (a spec file's keys) or a Spec"


def campaign_spec(
    target: Any,
    output: str | Path | None = None,
    shard: str | Shard | None = None,
    parameter: str = "spec",
) -> Spec:
    """The spec of ``target`` (see the module), placed in the output folder ``output`` (else
    the spec's own, or for an output folder that folder) and, with ``shard`` ("I/N"), in that
    shard's folder as `run` places it. ``parameter`` names ``target`` in errors."""
    spec = _spec(target, parameter)
    if output is not None or shard is not None:
        spec = placed(spec, output, as_shard(shard) if shard is not None else None)
    return spec


def _spec(target: Any, parameter: str) -> Spec:
    if isinstance(target, Spec):
        return target
    if isinstance(target, Mapping):
        import yaml

        from campaign.spec.keys import parse_spec

        data = dict(target)
        return parse_spec(data, text=yaml.safe_dump(data, sort_keys=False))
    if isinstance(target, str | os.PathLike):
        path = Path(target).expanduser()
        return folder_spec(path) if path.is_dir() else load_spec(path)
    raise ParameterError(f"{{{parameter}}} must be {GIVEN}, got {type(target).__name__}", parameter)


def folder_spec(folder: Path) -> Spec:
    """The spec an output folder's results.nc was made from, writing to that folder (relative
    paths in it are relative to the folder the spec file was in when it ran, if that folder
    is still there, else to the working folder)."""
    results = folder / RESULTS_FILE
    if not results.is_file():
        shard = shard_note(folder)  # merged first, then read, verified or recomputed
        raise CampaignError(
            f"{folder}: no {RESULTS_FILE} here{shard or '; give the spec file instead'}"
        )
    try:
        attrs = results_attributes(results, ("spec", "spec_file"))
    except OSError as error:
        raise CampaignError(f"{results} is not a readable netCDF file ({error})") from None
    return kept_spec(attrs, results)


def kept_spec(attrs: Mapping[str, Any], results: Path) -> Spec:
    """The spec that the results file ``results`` keeps in its attributes ``attrs``
    (``spec``, ``spec_file``), writing to the file's folder (see `folder_spec`)."""
    text, spec_file = attrs.get("spec"), attrs.get("spec_file")
    if not text:
        raise CampaignError(f"{results} keeps no spec; give the spec file instead")
    path = Path(spec_file) if spec_file and Path(spec_file).parent.is_dir() else None
    return placed(spec_from_text(str(text), path, str(results)), results.parent)
