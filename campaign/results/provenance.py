"""Provenance: the global attributes saying what a results file was computed from (spec,
model, design, seeds, versions, sources) and how its tasks stand."""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Mapping
from importlib import metadata
from typing import Any

import numpy as np

from campaign.design import points as designs
from campaign.design.tasks import Design, canonical
from campaign.models import model_reference
from campaign.results.status import STATUS_FAILED, STATUS_MISSING, STATUS_OK

# SALib draws the Saltelli and Morris samples
VERSIONED_PACKAGES = (
    "campaign",
    "numpy",
    "xarray",
    "dask",
    "distributed",
    "netCDF4",
    "scipy",
    "SALib",
)


def design_attributes(spec) -> dict[str, str]:
    """Global attributes saying which cells the design ran: its kind and, for a fraction,
    its generators, defining relation and alias chains (main effects and two-factor
    interactions); for points, their counts and the ranges (and a Saltelli sample's base
    samples and second order, Morris's trajectories and levels)."""
    design = spec.design
    attrs = {"design": design.kind}
    if design.fraction is not None:
        fraction = design.fraction
        attrs.update(
            design_title=fraction.title,
            design_generators=fraction.generator_text(),
            design_defining_relation=fraction.relation_text(),
            design_aliases="; ".join(fraction.alias_lines()),
            design_resolution=str(fraction.resolution or "full"),
        )
    elif design.kind != designs.FULL:
        attrs.update(
            design_points=" ".join(map(str, design.sizes)),
            design_ranges=canonical({f.name: list(f.range) for f in spec.factors if f.range}),
        )
    if design.kind in (designs.SALTELLI, designs.MORRIS):
        attrs["design_samples"] = str(design.samples)
    if design.kind == designs.SALTELLI:
        attrs["design_second_order"] = "true" if design.second_order else "false"
    if design.kind == designs.MORRIS:
        attrs["design_levels"] = str(design.levels)
    return attrs


def package_version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        versions[package] = package_version(package)
    return versions


def provenance(design: Design, confidence: float, status: np.ndarray) -> dict[str, Any]:
    spec = design.spec
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {
        "title": f"campaign {spec.name}",
        "campaign_name": spec.name,
        "description": spec.description,
        "model": spec.model,
        "model_reference": (
            model_reference(spec.model) if spec.command is None else " ".join(spec.command.argv)
        ),
        "base_seed": str(spec.seed),
        "replicates": spec.replicates,
        "factors": " ".join(f.name for f in spec.factors),
        **design_attributes(spec),
        "paired": " ".join(spec.paired),
        "params": canonical(spec.params),
        "confidence": confidence,
        "tasks": int(status.size),
        "tasks_ok": int((status == STATUS_OK).sum()),
        "tasks_failed": int((status == STATUS_FAILED).sum()),
        "tasks_missing": int((status == STATUS_MISSING).sum()),
        "spec": spec.text,
        "spec_digest": "sha256:" + spec.digest,
        "spec_file": str(spec.path.resolve()) if spec.path else "",
        "versions": json.dumps(package_versions(), sort_keys=True),
        "created": created,
        "host": platform.node(),
        "Conventions": "CF-1.11",
        "history": f"{created} created by campaign {package_version('campaign')} from spec "
        f"{spec.name} (sha256:{spec.digest[:12]})",
        "layout": (
            "raw metric per factor levels x replicate (one row per task in to_dataframe; "
            "a design other than full lies on its crossed factors and point, each point's "
            "factor values coordinates along point); "
            "status 0 missing 1 ok 2 failed; "
            "<metric>_mean/_std/_n/_ci_low/_ci_high per cell (Student t over replicates); "
            "<metric>_nan per cell: finished replicates whose value is NaN; "
            "<metric>_absent per cell (where some finished replicate did not return the "
            "metric): those replicates; "
            "group failures: failure_* and the factor levels per failed task"
        ),
    }


def source_provenance(identity: Mapping[str, Any]) -> dict[str, str]:
    """Global attributes saying what the results were computed from (campaign.json): digests
    of the model's code and of the input files, any choice made when they changed, for a
    program its version and, per program, what it runs (libraries, interpreter) by name, and
    for a Python model the versions of Python and of the libraries it computed with."""
    sources = identity.get("sources")
    if not sources:
        return {}
    algorithm = sources.get("algorithm", "")
    return {
        "model_code_digest": f"{algorithm}:{sources.get('model_code', '')}",
        "model_code_files": json.dumps(sources.get("model_files") or {}, sort_keys=True),
        "input_digests": json.dumps(sources.get("inputs") or {}, sort_keys=True),
        "source_changes": json.dumps(identity.get("source_changes") or []),
        **({"program_version": sources["version"]} if sources.get("version") else {}),
        **(
            {"program_files": json.dumps(sources["programs"], sort_keys=True)}
            if sources.get("programs")
            else {}
        ),
        **(
            {"model_libraries": json.dumps(sources["engine"], sort_keys=True)}
            if sources.get("engine")
            else {}
        ),
    }


def kept_sources(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The digests of what computed the results, as campaign.json keeps them (its
    ``sources``), read back from the attributes `source_provenance` wrote into results.nc
    (``attrs``): a results file away from its folder is compared with them. None for a file
    written before digests were kept."""
    algorithm, _, code = str(attrs.get("model_code_digest") or "").partition(":")
    if not code:
        return None
    sources: dict[str, Any] = {
        "algorithm": algorithm,
        "model_code": code,
        "model_files": _json_map(attrs.get("model_code_files")),
        "inputs": _json_map(attrs.get("input_digests")),
    }
    if attrs.get("program_version"):
        sources["version"] = str(attrs["program_version"])
    for key, name in (("programs", "program_files"), ("engine", "model_libraries")):
        if attrs.get(name):
            sources[key] = _json_map(attrs[name])
    return sources


def _json_map(value: Any) -> dict[str, Any]:
    """An attribute holding a JSON object, as a dict ({} when it holds none)."""
    try:
        parsed = json.loads(str(value or "{}"))
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


METRICS_FROM = "metrics_from"  # a record's field: what recomputed its metrics from kept outputs


def recomputed_provenance(records: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """The global attribute ``metrics_recomputed`` when stored records hold metrics recomputed
    from kept outputs (`campaign remetric`): per recomputation, when, with what parser (and
    the SHA-256 of its code), which metrics and for how many of the tasks now stored."""
    runs: dict[tuple[str, str, str, tuple[str, ...]], int] = {}
    for record in records.values():
        stamps = record.get(METRICS_FROM)  # one stamp, or a list of them (several parsers)
        for stamp in [stamps] if isinstance(stamps, Mapping) else stamps or ():
            if isinstance(stamp, Mapping):
                run = recomputation(stamp)
                runs[run] = runs.get(run, 0) + 1
    return recomputed_attribute(runs)


def recomputed_attribute(
    runs: Mapping[tuple[str, str, str, tuple[str, ...]], int],
) -> dict[str, str]:
    """`recomputed_provenance` from the tasks counted per recomputation (`recomputation`)."""
    if not runs:
        return {}
    listed = [
        {"time": when, "parser": parser, "digest": digest, "metrics": list(names), "tasks": n}
        for (when, parser, digest, names), n in sorted(runs.items())
    ]
    return {"metrics_recomputed": json.dumps(listed)}


def recomputation(stamp: Mapping[str, Any]) -> tuple[str, str, str, tuple[str, ...]]:
    """One recomputation a record's stamp names: when, which parser, its code, which metrics."""
    return (
        str(stamp.get("time")),
        str(stamp.get("parser")),
        str(stamp.get("digest")),
        tuple(stamp.get("metrics") or ()),
    )
