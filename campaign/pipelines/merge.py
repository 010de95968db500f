"""Merge: join the output folders of one campaign's shards into one, as if one run made it.

Every folder must hold the same campaign: the same model, fixed params and seed, the same
design (the digest of its task list that `campaign.design.shards` keeps), computed from the same
model code and input files (by content: a site may keep its traces under another path), and
cut into the same number of shards. A folder that does not is refused in one line saying
why, before anything is written.

The records are copied file by file into the merged folder's ledger (`Ledger.copy_from`), so
a task stored twice is resolved as on one machine (a success beats a failure, a later record
an earlier one), and results.nc is written from that ledger by the same code as a run's: the
merged results equal a single run's value for value. The merged folder is an output folder
like any other: `campaign run SPEC --out MERGED` would run what is still missing, and a later
merge into it (with shards finished since) adds their records. The output folder may already
hold records of the same campaign, from an earlier merge or a plain run: they join the shards'.
When one folder's metrics were recomputed by `campaign remetric`, the finished tasks of the
folders that were not are computed with the parser it recorded, from their kept outputs, so
that one metric means one thing in the merged results (refused in one line when they cannot
be; folders recomputed in different ways are refused too).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from campaign.design.shards import Shard, owners
from campaign.design.tasks import Design
from campaign.errors import BadValue, CampaignError, ParameterError
from campaign.pipelines.merge_folders import Folder, check_same_campaign, sources_of
from campaign.plan.command_declaration import command_declaration
from campaign.plan.model_code import current_model
from campaign.plan.plan import Plan, identity
from campaign.plan.state import RunState
from campaign.results.metric_parsers import (
    DEFINITIONS,
    Definition,
    common_definitions,
    current,
    loaded,
    up_to_date,
)
from campaign.results.writing import merge_level, write_results
from campaign.spec.load import Spec, spec_from_text
from campaign.store.folder import (
    IDENTITY_FILE,
    RESULTS_FILE,
    SHARD_FOLDERS,
    check_folder,
    shard_of_folder,
)
from campaign.store.identity import IDENTITY_FIELDS
from campaign.store.ledger import Ledger


@dataclass
class Merged:
    """What a merge wrote and what the merged campaign still lacks."""

    dataset: xr.Dataset
    out: Path
    copied: int
    notes: list[str] = field(default_factory=list)  # damaged records skipped, per folder
    missing: list[str] = field(default_factory=list)  # per shard, tasks not done
    failed: int = 0


def merge(folders: list[str | Path], out: str | Path, confidence: float | None = None) -> Merged:
    """Join the ledgers of one campaign's shard folders into ``out`` and write its results.nc
    (``confidence``: of its intervals; None: a precision target's, else that of the folders'
    results, else 0.95)."""
    if confidence is not None and not 0 < confidence < 1:
        raise BadValue("confidence", confidence, "must be between 0 and 1")
    if not folders:
        raise CampaignError("merge: name the shard folders to merge (OUT_A OUT_B ...)")
    out = Path(out).expanduser().absolute()
    check_folder(out, "{out}", "out")
    named = shard_folders([Path(folder).expanduser().absolute() for folder in folders], out)
    given = [read_folder(folder) for folder in named]
    reference = given[0]
    spec = shards_spec(reference, out)
    target = Ledger(out)
    inputs = list(given)
    if out.exists() and target.has_records():
        inputs.append(existing_output(out, target, reference))
    for folder in inputs[1:]:  # every refusal before anything is written
        check_same_campaign(reference, folder, out if folder.path == out else None)
    definitions = common_definitions([(folder.path, folder.stored) for folder in inputs])
    try:
        model = command_declaration(spec.command) if spec.command else current_model(spec.model)
    except ValueError as error:
        raise CampaignError(
            f"merge: model {spec.model}: {error}; install it where the shards are merged (the "
            "results take the metrics' units from it)"
        ) from None
    with target.lock():
        recomputed = redefined_records(spec, inputs, definitions)  # refused before any write
        notes: list[str] = []
        copying = [folder for folder in inputs if folder.path != out]
        sources = [Ledger(folder.path) for folder in copying]
        missing: list[list[str]] = [[] for _ in copying]
        copied = sum(target.copy_from_all(sources, missing))  # in one reading of the target
        for folder, source, lines in zip(copying, sources, missing):
            note = source.damage_note()
            if note:
                notes.append(f"{folder.path}: {note}")
            notes.extend(f"{folder.path}: {line}" for line in lines)
        for folder, records, beyond in recomputed:
            target.append(records)  # later than the copies: they win
            named = ", ".join(definition.parser for definition in definitions)
            notes.append(
                f"{folder}: {len(records)} tasks' metrics computed with {named} (remetric)"
            )
            if beyond:
                aside = target.set_keys_aside(beyond, "unkept")
                notes.append(
                    f"{folder}: {len(beyond)} finished tasks of levels or replicates the spec no "
                    f"longer has cannot be computed with {named}: set aside in {aside}"
                )
        target.write_identity(merged_identity(spec, inputs, definitions))
        target.compact()
        plan = RunState(Plan(spec, model, Design(spec)), target)
        plan.read(check=False)  # within the rounds the merged records give, if any
        shards = sorted({label for folder in inputs for label in folder.shards}, key=_order)
        attrs = {"merged_shards": " ".join(shards)}
        if confidence is None:  # the target's, else that of the shards' results if they agree
            files = [folder.path / RESULTS_FILE for folder in inputs]
            confidence = merge_level(spec, [*files, out / RESULTS_FILE], notes.append)
        dataset = write_results(plan, confidence, attrs=attrs, say=notes.append)
    return Merged(
        dataset=dataset,
        out=out,
        copied=copied,
        notes=notes,
        missing=missing_by_shard(plan, inputs),
        failed=len(plan.failed),
    )


def shard_folders(folders: list[Path], out: Path) -> list[Path]:
    """The folders to merge: each folder named, and in place of one that holds `shard-I-of-N`
    folders (the default output of `run --shard`, or where an array job's shards were
    gathered), those, with the folder itself too when it holds a campaign of its own (an
    earlier merge) and is not ``out``."""
    found: list[Path] = []
    for folder in folders:
        shards = sorted(
            (place for place in folder.glob(SHARD_FOLDERS) if (place / IDENTITY_FILE).is_file()),
            key=lambda place: _order(shard_of_folder(place.name)),
        )
        if not shards:
            found.append(folder)
            continue
        if (folder / IDENTITY_FILE).is_file() and folder != out:
            found.append(folder)
        found.extend(shards)
    return found


def read_folder(path: Path) -> Folder:
    """A shard folder (or an earlier merge's) and its campaign.json, or one line on why not."""
    if not path.is_dir():
        raise CampaignError(f"merge: {path} is not a folder; name the shards' output folders")
    stored = Ledger(path).read_identity()
    if stored is None:
        raise ParameterError(
            f"merge: {path} holds no campaign.json: it is not the output folder of a campaign "
            "run (a run with {shard='I/N'} writes one)",
            "shard='I/N'",
        )
    if "design" not in stored or not ("shard" in stored or "merged" in stored):
        raise ParameterError(
            f"merge: {path} was not run as a shard (its campaign.json names no shard): merge "
            "joins the folders of runs with {shard='I/N'}",
            "shard='I/N'",
        )
    return Folder(path, stored)


def existing_output(out: Path, ledger: Ledger, reference: Folder) -> Folder:
    """The merge's own output folder, when it already holds records: those of the same
    campaign (an earlier merge's, a shard's or a plain run's) are joined too; a folder of
    another campaign is refused by `check_same_campaign`, one that says nothing of its
    records here. An earlier merge of another split or design (fewer replicates, before the
    campaign grew) joins as a plain run's folder does: its records mean what the shards' do."""
    stored = ledger.read_identity()
    needed = [name for name in IDENTITY_FIELDS if name != "command"]  # a program's only
    if stored is None or any(name not in stored for name in needed):
        raise CampaignError(
            f"merge: -o {out} already holds records but no campaign.json saying what they "
            "mean; merge into a new folder (or the output folder of the same campaign)"
        )
    folder = Folder(out, stored)
    if not folder.whole and (
        folder.count != reference.count or folder.design["digest"] != reference.design["digest"]
    ):
        split = ("merged", "shard")
        return Folder(out, {name: value for name, value in stored.items() if name not in split})
    return folder


def shards_spec(folder: Folder, out: Path) -> Spec:
    """The spec the shards ran, from the text their campaign.json keeps, writing to ``out``."""
    design = folder.design
    path = Path(design["spec_file"]) if design.get("spec_file") else None
    text = design["spec"]
    try:
        spec = spec_from_text(text, path)
    except CampaignError as error:
        raise CampaignError(
            f"merge: {folder.path}/campaign.json keeps a spec that no longer loads ({error})"
        ) from None
    return replace(spec, output=out)


def redefined_records(
    spec: Spec, inputs: list[Folder], definitions: list[Definition]
) -> list[tuple[Path, list[dict[str, Any]], list[str]]]:
    """Per folder, its finished tasks' records computed with the parsers a remetric of
    another folder recorded (`campaign.results.metric_parsers`), or one line on why those of
    the design cannot be; and the keys of the tasks beyond the design (levels or replicates
    the spec no longer has) that cannot be, to be set aside once copied."""
    if not definitions:
        return []
    keys = set(Design(spec).keys())
    stale = []
    for folder in inputs:
        records = Ledger(folder.path).load()
        mine = {key: r for key, r in records.items() if r["status"] == "ok"}
        behind = {key: r for key, r in mine.items() if not current(r, definitions)}
        if behind:
            stale.append((folder.path, behind))
    parsers = loaded(definitions, "merge") if stale else []  # loaded only when needed
    return [(path, *up_to_date(path, records, parsers, keys)) for path, records in stale]


def merged_identity(
    spec: Spec, inputs: list[Folder], definitions: list[Definition] = ()
) -> dict[str, Any]:
    """campaign.json of the merged folder: what a single run's says (the sources it was
    computed from, every choice made about changed sources), the design the shards were cut
    from, and which shards it holds."""
    record = identity(spec)
    reference = inputs[0].stored
    sources = dict(sources_of(reference))
    read: dict[str, str] = {}
    for folder in inputs:
        read.update(folder.inputs)
    if sources:
        sources["inputs"] = dict(sorted(read.items()))
        record["sources"] = sources
    changes: list[Any] = []
    for folder in inputs:
        for change in folder.stored.get("source_changes") or []:
            if change not in changes:
                changes.append(change)
    if changes:
        record["source_changes"] = changes
    design = dict(reference["design"])
    design["inputs"] = dict(sorted(read.items()))
    record["design"] = design
    shards = sorted({label for folder in inputs for label in folder.shards}, key=_order)
    record["merged"] = {"count": inputs[0].count, "shards": shards}
    if definitions:
        record[DEFINITIONS] = [definition.stored() for definition in definitions]
    return record


def _order(label: str) -> tuple[int, int]:
    index, count = label.split("/")
    return int(count), int(index)


def missing_by_shard(plan: RunState, inputs: list[Folder]) -> list[str]:
    """One line per shard with missing tasks: how many, and whether its folder was given."""
    if not plan.missing:
        return []
    count = inputs[0].count
    lacking_by_shard = np.bincount(owners(plan.design, count)[plan.missing], minlength=count)
    given = {label for folder in inputs for label in folder.shards}
    lines = []
    for index in range(1, count + 1):
        shard = Shard(index, count)
        lacking = int(lacking_by_shard[index - 1])
        if not lacking:
            continue
        where = "" if shard.label in given else " (its folder was not given)"
        lines.append(f"shard {shard.label}: {lacking} tasks missing{where}")
    return lines
