"""campaign.json: what the results stored in an output folder mean (model, fixed params, base
seed), so that results of campaigns that mean different things are never mixed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError, ParameterError
from campaign.store.durable import write_atomic, write_failure
from campaign.store.folder import IDENTITY_FILE, LEDGER_FOLDER, aside_folder_name

IDENTITY_FIELDS = (
    "model",
    "command",
    "params",
    "seed",
)  # command: a program's (spec/command_model.py)


def read_identity(output: Path) -> dict[str, Any] | None:
    """The campaign.json of ``output`` (None if there is none); one line if it is damaged."""
    path = output / IDENTITY_FILE
    if not path.exists():
        return None
    try:
        identity = json.loads(path.read_bytes())
        if not isinstance(identity, dict):
            raise ValueError("not a JSON object")
    except ValueError as error:
        raise ParameterError(
            f"{path} is damaged ({error}); it says what the results stored "
            f"in {output / LEDGER_FOLDER} mean: restore it, or rerun with {{new=True}} to set "
            "those results aside and start afresh",
            "new=True",
        ) from None
    return identity


def missing_identity(output: Path) -> ParameterError:
    """The error for results stored without the campaign.json that says what they mean."""
    return ParameterError(
        f"{output / LEDGER_FOLDER} holds results but {output / IDENTITY_FILE}, which says what "
        "they mean (the model, params and seed, the code and input files that computed them), "
        "is missing: restore it, or rerun with {new=True} to set those results aside and "
        "start afresh",
        "new=True",
    )


def identity_difference(stored: dict[str, Any], identity: dict[str, Any]) -> str | None:
    """What differs between two campaigns' identities (None if they mean the same)."""
    for field in IDENTITY_FIELDS:
        old, new = stored.get(field), identity.get(field)
        if canonical(old) == canonical(new):
            continue
        if field == "params":
            return dict_difference(old or {}, new or {})
        if field == "command" and isinstance(old, dict) and isinstance(new, dict):
            return dict_difference(old, new, "command's")  # one key, not both whole mappings
        return f"{field} was {old!r}, now {new!r}"
    return None


def refuse_other_campaign(output: Path, stored: dict[str, Any], identity: dict[str, Any]) -> None:
    """Refuse to mix results of campaigns whose stored results mean different things."""
    detail = identity_difference(stored, identity)
    if detail is not None:
        raise ParameterError(
            f"{output} holds results of a different campaign ({detail}): its stored "
            "results would not mean the same; rerun with {new=True} to set them aside "
            f"(kept in {aside_folder_name('old', '*')}) or choose another output folder",
            "new=True",
        )


def write_identity(output: Path, identity: dict[str, Any]) -> None:
    output.mkdir(parents=True, exist_ok=True)
    path = output / IDENTITY_FILE
    text = json.dumps(identity, indent=2, sort_keys=True) + "\n"
    try:
        write_atomic(path, text)
    except OSError as error:
        raise CampaignError(
            f"cannot write {path}: {write_failure(error, output, 'nothing has run', 'run again')}"
        ) from None


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def dict_difference(old: dict[str, Any], new: dict[str, Any], what: str = "param") -> str:
    """The first key whose value differs, ``what`` naming the mapping's keys."""
    for key in sorted(set(old) | set(new)):
        if key not in new:
            return f"{what} {key!r} was {old[key]!r}, now removed"
        if key not in old:
            return f"{what} {key!r} is new ({new[key]!r})"
        if canonical(old[key]) != canonical(new[key]):
            return f"{what} {key!r} was {old[key]!r}, now {new[key]!r}"
    return f"{what} keys differ"
