"""The groups of a selection: which cells compete with which.

With ``select.among: FACTOR`` the systems are that factor's levels and a group is each
combination of the other factors' levels (one selection per load, say); without it every
cell is a system of the one group. A group's cells are listed in the order of the among
factor's levels, groups in the order of the other factors' cells (the last fastest).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from campaign.design.tasks import Design


def selection_groups(design: Design) -> list[np.ndarray]:
    """Each group's cell indices (positions in ``design.cells``), in system order."""
    spec = design.spec
    cells = np.arange(len(design.cells))
    among = spec.selection.among if spec.selection is not None else None
    if among is None:
        return [cells]
    axis = design.dims.index(among)
    by_system = np.moveaxis(cells.reshape(design.shape), axis, -1)
    return list(by_system.reshape(-1, design.shape[axis]))


def group_levels(design: Design, cells: np.ndarray) -> dict[str, Any]:
    """The levels a group's cells share (the factors other than ``among``)."""
    among = design.spec.selection.among
    if among is None:
        return {}
    levels = design.cell_label(design.cells[int(cells[0])])
    return {name: level for name, level in levels.items() if name != among}
