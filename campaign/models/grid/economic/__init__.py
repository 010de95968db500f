"""The economic scenario of the ``grid`` model (``sharing: economic``, economic.md).

Each machine is a domain whose MetaManager answers requests with offers priced by the
owner's function (MF1-MF6); the requesting user takes the offer of largest value under its
user function (UF1-UF5) and the offer becomes reservations that never move. Modules:
``domains`` (request forwarding), ``machine`` (one machine's reservations), ``terms`` (owner
terms, best fit), ``criteria`` (MF and UF), ``offers`` (one machine's offers, the winner's
order), ``multisite`` (co-allocated offers), ``grid`` (requests and bookings).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from campaign.models.grid.economic.grid import MULTISITE, EconomicGrid, EconomicOptions, simulate
from campaign.models.grid.economic.offers import Offer

__all__ = ["MULTISITE", "EconomicGrid", "EconomicOptions", "Offer", "simulate", "economic_grid"]


def economic_grid(
    machines: Sequence[int],
    size: Sequence[int],
    estimate: Sequence[float],
    runtime: Sequence[float],
    home: Sequence[int],
    options: EconomicOptions,
    overhead: float = 0.0,
    max_parts: int | None = None,
) -> EconomicGrid:
    """The grid, refusing a job that could outlive its reservation (runtime > estimate)."""
    late = np.asarray(runtime) > np.asarray(estimate)
    if late.any():
        job = int(late.argmax())
        raise ValueError(
            f"job {job} runs {runtime[job]} s past its planned {estimate[job]} s: economic "
            "reservations need kill_at_estimate or local_estimate exact"
        )
    return EconomicGrid(machines, size, estimate, runtime, home, options, overhead, max_parts)
