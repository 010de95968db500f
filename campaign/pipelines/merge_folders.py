"""The output folders a merge joins, and whether they hold one campaign: the same model,
fixed params and seed, the same design, computed from the same model code and input files
(by content) and the same programs and libraries, cut into the same number of shards. A
folder that does not is refused in one line saying why, before anything is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.design.tasks import canonical
from campaign.errors import CampaignError
from campaign.plan.sources import program_difference
from campaign.spec.load import Spec, spec_from_text
from campaign.store.identity import IDENTITY_FIELDS


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
        return sources_of(self.stored).get("inputs") or {}


def check_same_campaign(reference: Folder, folder: Folder, out: Path | None = None) -> None:
    """Refuse, in one line, a folder whose records would not mean what the reference's do;
    ``out`` when the folder is the merge's own output, holding an earlier campaign's results."""
    differs = campaign_difference(reference, folder)
    if differs is not None and out is not None:
        raise CampaignError(
            f"merge: -o {out} already holds the results of another campaign than "
            f"{reference.path} ({differs[0]}): merge into another folder"
        )
    if differs is not None:
        reason, remedy = differs
        where = f"merge: {folder.path} holds another campaign than {reference.path}"
        raise CampaignError(f"{where} ({reason}){remedy}")
    kept = None if out is not None or folder.whole else percentiles_difference(reference, folder)
    if kept is not None:
        raise CampaignError(
            f"merge: {folder.path} keeps percentiles {kept[1]} of each sample, "
            f"{reference.path} {kept[0]}: the merged results would keep one shard's alone; run "
            "every shard with the same percentiles (`campaign run SPEC --shard I/N` computes "
            "nothing again: the percentiles are taken from the stored samples)"
        )
    if not folder.whole and reference.count != folder.count:
        raise CampaignError(
            f"merge: {folder.path} is a shard of {folder.count}, {reference.path} of "
            f"{reference.count}: merge the shards of one split (the same N of shards I/N)"
        )


def campaign_difference(reference: Folder, folder: Folder) -> tuple[str, str] | None:
    """Why ``folder``'s records would not mean what the reference's do, and what to do
    (``; run every shard ...``, or empty); None when they would."""
    a, b = reference.stored, folder.stored
    for name in IDENTITY_FIELDS:
        if canonical(a.get(name)) != canonical(b.get(name)):
            return _difference(name, a.get(name), b.get(name)), ""
    if not folder.whole and a["design"]["digest"] != b["design"]["digest"]:
        return design_difference(reference, folder), ""
    code_a, code_b = sources_of(a).get("model_code"), sources_of(b).get("model_code")
    if code_a != code_b:
        files_a, files_b = (
            sources_of(a).get("model_files") or {},
            sources_of(b).get("model_files") or {},
        )
        files = sorted(n for n in set(files_a) | set(files_b) if files_a.get(n) != files_b.get(n))
        return (
            f"computed from other code of model {a.get('model')}: "
            f"{', '.join(files[:3]) or 'its files'} differ"
        ), "; run every shard with the same code"
    differs = program_difference(sources_of(a).get("programs"), sources_of(b).get("programs"))
    if differs:
        return differs, "; run every shard with the same programs"
    engine_a, engine_b = sources_of(a).get("engine") or {}, sources_of(b).get("engine") or {}
    for name in (n for n in engine_a if engine_b.get(n, engine_a[n]) != engine_a[n]):
        return (
            f"computed with {name} {engine_b[name]}, the other with {engine_a[name]}",
            "; run every shard with the same versions",
        )
    inputs_a, inputs_b = reference.inputs, folder.inputs
    for one, other, path in (
        (inputs_b, inputs_a, folder.path),
        (inputs_a, inputs_b, reference.path),
    ):
        known = set(other.values())
        for name, digest in sorted(one.items()):
            if digest not in known:
                return (
                    f"computed from other content of input file {name}, read in {path}",
                    "; give every shard the same input files",
                )
    return None


def sources_of(stored: dict[str, Any]) -> dict[str, Any]:
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
        a = spec_from_text(reference.design["spec"])
        b = spec_from_text(folder.design["spec"])
    except CampaignError:
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


def percentiles_difference(reference: Folder, folder: Folder) -> tuple[str, str] | None:
    """The ``percentiles:`` of the specs two shards ran, when they differ: the stored samples
    are the same whatever they say (no digest covers them), but the merged results keep the
    percentiles of one spec only."""
    try:
        a = spec_from_text(reference.design["spec"]).percentiles
        b = spec_from_text(folder.design["spec"]).percentiles
    except CampaignError:
        return None  # a spec that no longer loads is said by the merge itself
    return None if a == b else (str(list(a)), str(list(b)))


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
