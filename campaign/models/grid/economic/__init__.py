"""The economic scenario of the ``grid`` model (``sharing: economic``, economic.md).

Each machine is a domain whose MetaManager answers requests with offers priced by the
owner's function (MF1-MF6); the requesting user takes the offer of largest value under its
user function (UF1-UF5) and the offer becomes reservations that never move. Modules:
``domains`` (request forwarding), ``machine`` (one machine's reservations), ``terms`` (owner
terms, best fit), ``criteria`` (MF and UF), ``offers`` (one machine's offers, the winner's
order), ``multisite`` (co-allocated offers), ``grid`` (requests and bookings).
"""

from __future__ import annotations

from campaign.models.grid.economic.grid import MULTISITE, EconomicGrid, EconomicOptions, simulate
from campaign.models.grid.economic.offers import Offer

__all__ = ["MULTISITE", "EconomicGrid", "EconomicOptions", "Offer", "simulate"]
