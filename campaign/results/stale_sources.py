"""Whether what computed a results file's numbers has changed since it was written.

`campaign run` and `campaign status` compare the digests of what computes a campaign's results
(a Python model's code and the libraries it computes with, a program, its runtime and the
files it reads, a trace) with those campaign.json keeps beside the ledger
(`campaign.plan.plan.design_sources`, `campaign.plan.sources.compare`). Read alone, results.nc
would go on showing the numbers of a model since edited or a simulator since rebuilt as if
they were current: `stale_note` is the line every table, figure, export and report of it
carries instead (`campaign.results.netcdf.open_results` adds it), by the same comparison.

Reading stays cheap: the files are digested as a run digests them (what the runtime caches by
a file's identity is not read again). A check that cannot be made (the results moved to a
machine without the model, a program or an input) never fails the read: the note says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from campaign.errors import CampaignError
from campaign.models import describe_error
from campaign.results.provenance import kept_sources
from campaign.results.status import STATUS_OK
from campaign.store.identity import read_identity

RERUN = "--rerun-changed"  # what `campaign run` is told to compute changed results again


def stale_note(results: Path, dataset: xr.Dataset) -> str | None:
    """The words (after "results.nc ") saying which of ``dataset``'s results (read from the
    results file ``results``) were computed before their model, program or inputs changed, or
    that this could not be checked; None when nothing changed or nothing was kept to compare
    with (results stored before digests were kept). Without campaign.json beside it (the
    file copied elsewhere), the digests the file keeps are compared, and the campaign's spec
    file is named to compute them again."""
    folder = results.parent
    try:
        identity = read_identity(folder)
        # away from its folder (copied elsewhere), the digests results.nc keeps are compared
        stored = identity.get("sources") if identity else kept_sources(dataset.attrs)
        if not stored:
            return None
        found = _changed(results, dataset.attrs, stored)
    except Exception as error:  # a read never fails for it: not knowing is said instead
        return (
            f"could not be checked against the model that computed it ({_reason(error)}): "
            "whether its numbers are stale is not known"
        )
    if found is None:
        return None
    change, model, cells = found
    ok = np.asarray(dataset["status"].values == STATUS_OK)
    total = int(ok.sum())
    if change.cells is None or ok.size % max(len(cells), 1):
        stale = total
    else:
        per_cell = ok.reshape(len(cells), -1).sum(axis=1)
        stale = int(sum(n for cell, n in zip(cells, per_cell) if change.affects(cell)))
    if not stale:
        return None
    where = folder if identity else dataset.attrs.get("spec_file") or "SPEC"
    return (
        f"holds {stale} of its {total} results computed before {change.describe(model)}: "
        f"they are stale; `campaign run {where} {RERUN}` computes them again"
    )


def _changed(results: Path, attrs: Mapping[str, Any], stored: Mapping[str, Any]):
    """How the sources differ now from the ``stored`` ones of the campaign whose spec the
    results file ``results`` keeps (in its attributes ``attrs``): the change, the model's
    name and the design's cell digests; None when they are the same."""
    from campaign.design.tasks import Design
    from campaign.plan.plan import design_sources
    from campaign.plan.sources import compare
    from campaign.plan.target import kept_spec

    design = Design(kept_spec(attrs, results))
    change = compare(stored, design_sources(design))
    if change is None:
        return None
    return change, design.spec.model, design.cell_digests


def _reason(error: Exception) -> str:
    """Why the check could not be made, in one line: the message of an error meant for users
    (a model that does not import, a program or an input file not found), else its type too."""
    if isinstance(error, CampaignError | ValueError):
        return " ".join(str(error).split())
    return describe_error(error)
