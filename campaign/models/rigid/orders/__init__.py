"""List orders of the waiting jobs (list-scheduling.md section 2), found by name here.

An order is a function ``order(jobs, size, estimate, weight, processors, gamma)`` returning
``jobs`` (arrival order) re-ordered; ``weight[j]`` is the scheduler weight of job j. FCFS is
the arrival order itself and needs no function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from campaign.models.rigid.orders.psrs import psrs_order
from campaign.models.rigid.orders.smart import smart_ffia_order, smart_nfiw_order

__all__ = ["ORDERS", "ORDER_NAMES", "Order"]

Order = Callable[
    [Sequence[int], Sequence[int], Sequence[float], Sequence[float], int, float], list[int]
]

ORDERS: dict[str, Order] = {
    "psrs": psrs_order,
    "smart_ffia": smart_ffia_order,
    "smart_nfiw": smart_nfiw_order,
}
"""Every computed order by the name a spec gives it."""

ORDER_NAMES = ("fcfs", *ORDERS)
"""Every order a spec may name, FCFS (arrival order) first."""
