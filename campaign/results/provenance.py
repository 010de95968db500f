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

VERSIONED_PACKAGES = ("campaign", "numpy", "xarray", "dask", "distributed", "netCDF4", "scipy")


def design_attributes(spec) -> dict[str, str]:
    """Global attributes saying which cells the design ran: its kind and, for a fraction,
    its generators, defining relation and alias chains (main effects and two-factor
    interactions); for Latin hypercube or Sobol points, their counts and the ranges."""
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
            "group failures: failure_* and the factor levels per failed task"
        ),
    }


def source_provenance(identity: Mapping[str, Any]) -> dict[str, str]:
    """Global attributes saying what the results were computed from (campaign.json): digests
    of the model's code and of the input files, and any choice made when they changed."""
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
    }
