"""A model that changes its params in place, as the ``mutate`` param says: ``pop`` takes
``scale`` out of them, ``add`` adds 1 to ``k`` there, ``none`` only reads them. Whatever it
does, it returns ``scale * u + k + 1`` for ``u`` the first draw of its seed: any change that
leaked from one task to another (a batchmate's pop or +=) fails a task or changes its value."""

from __future__ import annotations

from collections.abc import MutableMapping

import numpy as np


def run(params: MutableMapping[str, object], seed: int) -> dict[str, float]:
    value = float(np.random.default_rng(seed).random())
    mutate = params["mutate"]
    scale = params.pop("scale") if mutate == "pop" else params["scale"]
    if mutate == "add":
        params["k"] += 1
        k = params["k"]
    else:
        k = params["k"] + 1
    return {"value": scale * value + k}
