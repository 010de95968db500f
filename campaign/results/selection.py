"""What results.nc holds of a selection: per cell (system) the replicates its stages gave it,
where it stands and the stage that decided it; the selection's settings as an attribute.

`campaign select` reads these settings back and replays the stages from the raw values
(`campaign.analysis.selection`): the same decisions as the run's, with every detail.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import xarray as xr

from campaign.analysis.selection import STATES, Selections
from campaign.design.tasks import canonical

SELECTION_ATTRIBUTE = "selection"  # the spec's select: block, as JSON


def selection_variables(
    stages: Selections, dims: list[str], shape: tuple[int, ...]
) -> dict[str, xr.Variable]:
    """``selection_replicates``, ``selection_state`` and ``selection_stage`` per cell."""
    return {
        "selection_replicates": xr.Variable(
            dims,
            stages.replicates.reshape(shape),
            {"long_name": "replicates the selection's stages gave the system (0..n-1)"},
        ),
        "selection_state": xr.Variable(
            dims,
            stages.state.reshape(shape),
            {
                "long_name": "where the system stands in its group's selection",
                "flag_values": np.array(list(STATES.values()), dtype=np.int8),
                "flag_meanings": " ".join(STATES),
            },
        ),
        "selection_stage": xr.Variable(
            dims,
            stages.stage.reshape(shape),
            {"long_name": "stage that selected or eliminated the system (0 the first; -1 none)"},
        ),
    }


def selection_attribute(selection) -> str:
    """The selection's settings as results.nc keeps them (JSON)."""
    return canonical(dataclasses.asdict(selection))
