"""The grid broker's allocation strategies, one class per strategy (families share a base),
found by name here.

A new strategy is a subclass of :class:`Strategy` with a fast and a plain score and one entry
in ``REGISTRY``; the broker and the grid model then offer it under that name. A strategy reads
the broker's state through a :class:`BrokerView` and never imports the broker.
"""

from __future__ import annotations

from campaign.models.grid.strategies.base import BrokerView, Strategy
from campaign.models.grid.strategies.lbal import LbalS, LbalT, LbalW
from campaign.models.grid.strategies.load import Mlb, Mlp, Mpl
from campaign.models.grid.strategies.random import Random
from campaign.models.grid.strategies.tentative import Mct, Mst, Mswct
from campaign.models.grid.strategies.waits import (
    MeanWait,
    MeanWaitByEstimate,
    MeanWaitBySize,
    MeanWaitByWork,
)

__all__ = ["REGISTRY", "BrokerView", "Strategy"]

REGISTRY: dict[str, type[Strategy]] = {
    kind.name: kind
    for kind in (
        Random,
        Mlp,
        Mpl,
        LbalS,
        LbalT,
        LbalW,
        Mlb,
        Mct,
        MeanWait,
        MeanWaitBySize,
        MeanWaitByEstimate,
        MeanWaitByWork,
        Mst,
        Mswct,
    )
}
"""Every strategy by the name a spec gives it, in the order documentation lists them."""
