"""Owner (local) load: each machine alternates free and owner-busy periods.

Period lengths are exponential with means ``owner_off_s`` (free) and ``owner_on_s`` (busy).
A machine starts in the stationary state (owner-busy with probability on / (on + off)); by
memorylessness the first period is then a plain exponential draw too. Every machine draws from
its own generator spawned from the availability stream, so the periods of one machine do not
depend on how far the simulation has looked at the others.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def owner_periods(
    sequence: np.random.SeedSequence, mean_off: float, mean_on: float
) -> Iterator[tuple[float, bool]]:
    """Yield (time, owner_busy) from time 0 on: the initial state, then every change."""
    rng = np.random.default_rng(sequence)
    busy = bool(rng.random() < mean_on / (mean_on + mean_off))
    time = 0.0
    while True:
        yield time, busy
        time += float(rng.exponential(mean_on if busy else mean_off))
        busy = not busy


def machine_periods(
    sequence: np.random.SeedSequence, machines: int, mean_off: float, mean_on: float
) -> list[Iterator[tuple[float, bool]]]:
    """One independent period iterator per machine, from children of the availability stream."""
    return [owner_periods(child, mean_off, mean_on) for child in sequence.spawn(machines)]
