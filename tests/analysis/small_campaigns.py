"""Campaigns of the models in `small_models`, run once per test module on the session's
cluster, whose workers are told where those models are."""

from __future__ import annotations

import site
import sys
from pathlib import Path

from distributed import Client

import campaign

FOLDER = Path(__file__).resolve().parent
sys.path.insert(0, str(FOLDER))


def small_campaign(tmp_path_factory, scheduler_address: str, name: str, spec: str) -> Path:
    """The output folder of the campaign of ``spec`` (a model of `small_models`)."""
    with Client(scheduler_address) as client:
        client.run(site.addsitedir, str(FOLDER))
    folder = tmp_path_factory.mktemp(name)
    (folder / "spec.yaml").write_text(spec)
    campaign.run(folder / "spec.yaml", scheduler=scheduler_address, progress=False)
    return folder / "out"
