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
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import xarray as xr
import yaml

from campaign.design.shards import Shard, owners
from campaign.design.tasks import Design, canonical
from campaign.errors import BadValue, CampaignError, ParameterError
from campaign.models import load_model
from campaign.plan.command import command_declaration
from campaign.plan.plan import Plan, identity
from campaign.plan.state import RunState
from campaign.runner import write_results
from campaign.spec.load import Spec, parse_spec
from campaign.store.folder import (
    IDENTITY_FILE,
    SHARD_FOLDERS,
    check_folder,
    shard_of_folder,
)
from campaign.store.identity import IDENTITY_FIELDS
from campaign.store.ledger import Ledger


@dataclass
class Folder:
    """One folder to merge: where it is and what its campaign.json says."""

    path: Path
    stored: dict[str, Any]

    @property
    def design(self) -> dict[str, Any]:
        return self.stored["design"]

    @property
    def whole(self) -> bool:
        """A plain run's folder (the merge's output folder only): the campaign not cut into
        shards, any of whose tasks it may hold."""
        return "shard" not in self.stored and "merged" not in self.stored

    @property
    def count(self) -> int | None:
        if self.whole:
            return None
        return int((self.stored.get("shard") or self.stored.get("merged"))["count"])

    @property
    def shards(self) -> list[str]:
        """The shards whose records the folder holds ("I/N")."""
        if self.whole:
            return []
        shard = self.stored.get("shard")
        if shard is not None:
            return [f"{shard['index']}/{shard['count']}"]
        return list(self.stored["merged"]["shards"])

    @property
    def inputs(self) -> dict[str, str]:
        """The input files its records were computed from: path -> digest."""
        if "design" in self.stored:
            return self.stored["design"].get("inputs") or {}
        return _sources(self.stored).get("inputs") or {}


@dataclass
class Merged:
    """What a merge wrote and what the merged campaign still lacks."""

    dataset: xr.Dataset
    out: Path
    copied: int
    notes: list[str] = field(default_factory=list)  # damaged records skipped, per folder
    missing: list[str] = field(default_factory=list)  # per shard, tasks not done
    failed: int = 0


def merge(folders: list[str | Path], out: str | Path, confidence: float = 0.95) -> Merged:
    """Join the ledgers of one campaign's shard folders into ``out`` and write its results.nc."""
    if not 0 < confidence < 1:
        raise BadValue("confidence", confidence, "must be between 0 and 1")
    if not folders:
        raise CampaignError("merge: name the shard folders to merge (OUT_A OUT_B ...)")
    out = Path(out).expanduser().absolute()
    check_folder(out, "{out}", "out")
    named = shard_folders([Path(folder).expanduser().absolute() for folder in folders], out)
    given = [read_folder(folder) for folder in named]
    reference = given[0]
    spec = spec_of(reference, out)
    target = Ledger(out)
    inputs = list(given)
    if out.exists() and target.has_records():
        inputs.append(existing_output(out, target))
    for folder in inputs[1:]:
        check_same_campaign(reference, folder)  # every refusal before anything is written
    try:
        model = command_declaration(spec.command) if spec.command else load_model(spec.model)
    except ValueError as error:
        raise CampaignError(
            f"merge: model {spec.model}: {error}; install it where the shards are merged (the "
            "results take the metrics' units from it)"
        ) from None
    with target.lock():
        copied, notes = 0, []
        for folder in inputs:
            if folder.path == out:
                continue
            source = Ledger(folder.path)
            missing: list[str] = []
            copied += target.copy_from(source, missing)
            note = source.damage_note()
            if note:
                notes.append(f"{folder.path}: {note}")
            notes.extend(f"{folder.path}: {line}" for line in missing)
        target.write_identity(merged_identity(spec, inputs))
        target.compact()
        plan = RunState(Plan(spec, model, Design(spec)), target)
        plan.read(check=False)  # within the rounds the merged records give, if any
        shards = sorted({label for folder in inputs for label in folder.shards}, key=_order)
        attrs = {"merged_shards": " ".join(shards)}
        dataset = write_results(plan, confidence, attrs=attrs)
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


def existing_output(out: Path, ledger: Ledger) -> Folder:
    """The merge's own output folder, when it already holds records: those of the same
    campaign (an earlier merge's, a shard's or a plain run's) are joined too; a folder of
    another campaign is refused by `check_same_campaign`, one that says nothing of its
    records here."""
    stored = ledger.read_identity()
    needed = [name for name in IDENTITY_FIELDS if name != "command"]  # a program's only
    if stored is None or any(name not in stored for name in needed):
        raise CampaignError(
            f"merge: -o {out} already holds records but no campaign.json saying what they "
            "mean; merge into a new folder (or the output folder of the same campaign)"
        )
    return Folder(out, stored)


def spec_of(folder: Folder, out: Path) -> Spec:
    """The spec the shards ran, from the text their campaign.json keeps, writing to ``out``."""
    design = folder.design
    path = Path(design["spec_file"]) if design.get("spec_file") else None
    text = design["spec"]
    try:
        spec = parse_spec(yaml.safe_load(text), text=text, path=path)
    except (CampaignError, yaml.YAMLError) as error:
        raise CampaignError(
            f"merge: {folder.path}/campaign.json keeps a spec that no longer loads ({error})"
        ) from None
    return replace(spec, output=out)


def check_same_campaign(reference: Folder, folder: Folder) -> None:
    """Refuse, in one line, a folder whose records would not mean what the reference's do."""
    where = f"merge: {folder.path} holds another campaign than {reference.path}"
    a, b = reference.stored, folder.stored
    for name in IDENTITY_FIELDS:
        if canonical(a.get(name)) != canonical(b.get(name)):
            raise CampaignError(f"{where} ({_difference(name, a.get(name), b.get(name))})")
    if not folder.whole and a["design"]["digest"] != b["design"]["digest"]:
        raise CampaignError(f"{where} ({design_difference(reference, folder)})")
    code_a, code_b = _sources(a).get("model_code"), _sources(b).get("model_code")
    if code_a != code_b:
        files_a, files_b = (
            _sources(a).get("model_files") or {},
            _sources(b).get("model_files") or {},
        )
        files = sorted(n for n in set(files_a) | set(files_b) if files_a.get(n) != files_b.get(n))
        raise CampaignError(
            f"{where} (computed from other code of model {a.get('model')}: "
            f"{', '.join(files[:3]) or 'its files'} differ); run every shard with the same code"
        )
    inputs_a, inputs_b = reference.inputs, folder.inputs
    for one, other, path in (
        (inputs_b, inputs_a, folder.path),
        (inputs_a, inputs_b, reference.path),
    ):
        known = set(other.values())
        for name, digest in sorted(one.items()):
            if digest not in known:
                raise CampaignError(
                    f"{where} (computed from other content of input file {name}, read in "
                    f"{path}); give every shard the same input files"
                )
    if not folder.whole and reference.count != folder.count:
        raise CampaignError(
            f"merge: {folder.path} is a shard of {folder.count}, {reference.path} of "
            f"{reference.count}: merge the shards of one split (the same N of shards I/N)"
        )


def _sources(stored: dict[str, Any]) -> dict[str, Any]:
    return stored.get("sources") or {}


def _difference(name: str, first: Any, second: Any) -> str:
    if name == "params" and isinstance(first, dict) and isinstance(second, dict):
        for key in sorted(set(first) | set(second)):
            if canonical(first.get(key)) != canonical(second.get(key)):
                return f"param {key}: {_shown(first, key)} against {_shown(second, key)}"
    return f"{name}: {first!r} against {second!r}"


def _shown(params: dict[str, Any], key: str) -> str:
    return repr(params[key]) if key in params else "not set"


def design_difference(reference: Folder, folder: Folder) -> str:
    """What differs between the designs two shards were cut from, from their specs."""
    try:
        a = parse_spec(yaml.safe_load(reference.design["spec"]))
        b = parse_spec(yaml.safe_load(folder.design["spec"]))
    except (CampaignError, yaml.YAMLError):
        return "another design"
    if a.replicates != b.replicates:
        return f"replicates: {a.replicates} against {b.replicates}"
    design_a, design_b = (_design_words(spec) for spec in (a, b))
    if design_a != design_b:
        return f"design: {design_a} against {design_b}"
    factors_a = {f.name: list(f.values) for f in a.factors}
    factors_b = {f.name: list(f.values) for f in b.factors}
    for name in [*factors_a, *[n for n in factors_b if n not in factors_a]]:
        if canonical(factors_a.get(name)) != canonical(factors_b.get(name)):
            levels_a, levels_b = (_levels(factors.get(name)) for factors in (factors_a, factors_b))
            return f"factor {name}: {levels_a} against {levels_b}"
    if list(factors_a) != list(factors_b):
        return f"factors in another order: {list(factors_a)} against {list(factors_b)}"
    if a.paired != b.paired:
        return f"paired: {list(a.paired)} against {list(b.paired)}"
    if a.metrics != b.metrics:
        return f"metrics: {a.metrics} against {b.metrics}"
    if canonical(a.precision) != canonical(b.precision):
        return "precision: another target"
    if canonical(a.selection) != canonical(b.selection):
        return "select: other settings"
    return "another design"


def _levels(values: list[Any] | None, most: int = 5) -> str:
    if values is None:
        return "no such factor"
    shown = ", ".join(repr(value) for value in values[:most])
    return f"[{shown}{f', ... ({len(values)} in all)' if len(values) > most else ''}]"


def _design_words(spec: Spec) -> str:
    """A spec's design in a few words: its kind and, for a fraction or a sample, its points."""
    design = getattr(spec, "design", None)
    kind = getattr(design, "kind", "full")
    points = getattr(design, "points", 0)
    return f"{kind} ({points} points)" if points else kind


def merged_identity(spec: Spec, inputs: list[Folder]) -> dict[str, Any]:
    """campaign.json of the merged folder: what a single run's says (the sources it was
    computed from, every choice made about changed sources), the design the shards were cut
    from, and which shards it holds."""
    record = identity(spec)
    reference = inputs[0].stored
    sources = dict(_sources(reference))
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
    return record


def _order(label: str) -> tuple[int, int]:
    index, count = label.split("/")
    return int(count), int(index)


def missing_by_shard(plan: RunState, inputs: list[Folder]) -> list[str]:
    """One line per shard with missing tasks: how many, and whether its folder was given."""
    if not plan.missing:
        return []
    count = inputs[0].count
    owner = owners(plan.design, count)
    given = {label for folder in inputs for label in folder.shards}
    lines = []
    for index in range(1, count + 1):
        shard = Shard(index, count)
        own = owner == index - 1
        lacking = sum(1 for task in plan.missing if own[task])
        if not lacking:
            continue
        where = "" if shard.label in given else " (its folder was not given)"
        lines.append(f"shard {shard.label}: {lacking} tasks missing{where}")
    return lines


def describe(merged: Merged) -> list[str]:
    """What `campaign merge` prints."""
    attrs = merged.dataset.attrs
    lines = list(merged.notes)
    lines.append(
        f"merged {attrs.get('merged_shards', '')} into {merged.out}: {attrs['tasks_ok']} tasks "
        f"ok, {attrs['tasks_failed']} failed, {attrs['tasks_missing']} missing "
        f"({merged.copied} records copied)"
    )
    if merged.failed:
        lines.append(
            f"{merged.failed} tasks failed (their errors: group failures of results.nc); a "
            "rerun of the shard that owns a task retries it, then merge again"
        )
    lines.extend(merged.missing)
    if merged.missing:
        lines.append(
            "run the missing shards (or again where one stopped) and merge again into the "
            "same folder"
        )
    return lines
