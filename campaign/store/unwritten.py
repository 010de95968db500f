"""What to do about an output folder that holds finished tasks but no results.nc: a shard's,
which never writes one, or a run's that stopped before writing it. Every command given such a
folder says the same."""

from __future__ import annotations

from pathlib import Path

from campaign.errors import CampaignError
from campaign.store.folder import LEDGER_BATCHES, LEDGER_FOLDER
from campaign.store.identity import read_identity


def shard_note(folder: Path) -> str:
    """``: the folder of shard I/N ...`` when ``folder`` holds a shard's finished tasks, else
    empty: its results are read, verified or recomputed once merged."""
    if not any((folder / LEDGER_FOLDER).glob(LEDGER_BATCHES)):
        return ""
    try:
        shard = (read_identity(folder) or {}).get("shard")
    except CampaignError:  # a damaged campaign.json: no shard to name
        shard = None
    if not isinstance(shard, dict):
        return ""
    return (
        f": the folder of shard {shard.get('index')}/{shard.get('count')}, which writes none; "
        "`campaign merge` joins the shards' folders and writes the campaign's"
    )


def unwritten_note(folder: Path) -> str:
    """The shard's note, or for a run's finished tasks without results.nc what writes it;
    empty when ``folder`` holds no finished task."""
    if not any((folder / LEDGER_FOLDER).glob(LEDGER_BATCHES)):
        return ""
    return shard_note(folder) or (
        ": the ledger beside it holds finished tasks of a run that stopped before writing it; "
        "`campaign run SPEC` writes it, running only what is missing"
    )
