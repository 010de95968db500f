"""The seed of SALib's bootstraps, and numpy's global generator left as it was.

SALib's ``sobol`` and ``delta`` take a seed of 0 for none: their resamples are then drawn
from numpy's global generator, another table at each call on the same results. ``delta``
seeds that global generator with the seed it is given (which takes at most 2^32 - 1) and
draws from it, so that a caller's own draws after it would follow from the campaign's seed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

LEGACY_SEEDS = 2**32  # what numpy's global generator takes as one integer seed


def bootstrap_seed(base_seed: int) -> int:
    """The seed SALib's bootstraps get from a campaign's base seed: the base seed itself from 1
    to 2^32 - 1 (the tables of earlier versions stay the same), another one of that range,
    drawn from it, for 0 and larger seeds."""
    if 0 < base_seed < LEGACY_SEEDS:
        return base_seed
    drawn = int(np.random.SeedSequence(base_seed).generate_state(1, np.uint32)[0])
    return drawn or 1


@contextmanager
def global_generator_kept() -> Iterator[None]:
    """Numpy's global generator in the state it had before, whatever the block drew from it or
    seeded it with."""
    state = np.random.get_state()
    try:
        yield
    finally:
        np.random.set_state(state)
