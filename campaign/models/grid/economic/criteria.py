"""Owner (machine) functions MF1-MF6 and user functions UF1-UF5 (economic.md section 5).

One class per function behind two small interfaces: an owner function values a placement
from its owner terms (`Terms`), a user function values an offer from its start time and its
cost. Both work elementwise on arrays too, so the shifts of one candidate are valued at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Terms:
    """Owner terms of one placement (or arrays of them, one per shift): economic.md 4."""

    area: Any
    """A = size * est."""
    under: Any
    over: Any
    left_right: Any
    lrr: Any
    utilization: Any


class OwnerFunction:
    """MF: the machine owner's value of a placement; it is also the offer's JobCost."""

    name = "MF"

    def value(self, t: Terms) -> Any:
        raise NotImplementedError


class MF1(OwnerFunction):
    name = "MF1"

    def value(self, t: Terms) -> Any:
        return (t.area + t.over + t.under + t.left_right) * (1 - t.lrr)


class MF2(OwnerFunction):
    name = "MF2"

    def value(self, t: Terms) -> Any:
        return t.area + t.over + t.under + t.left_right


class MF3(OwnerFunction):
    name = "MF3"

    def value(self, t: Terms) -> Any:
        return (t.area + t.over + t.under) * (1 - t.lrr)


class MF4(OwnerFunction):
    name = "MF4"

    def value(self, t: Terms) -> Any:
        return (t.area + t.left_right) * (1 - t.lrr)


class MF5(OwnerFunction):
    name = "MF5"

    def value(self, t: Terms) -> Any:
        return (t.area + t.over + t.left_right) * (1 - t.lrr)


class MF6(OwnerFunction):
    name = "MF6"

    def value(self, t: Terms) -> Any:
        return (t.area + t.under + t.left_right) * (1 - t.lrr)


class UserFunction:
    """UF: the user's value (UV) of an offer; the largest wins."""

    name = "UF"

    def value(self, start: Any, cost: Any) -> Any:
        raise NotImplementedError


class UF1(UserFunction):
    name = "UF1"

    def value(self, start: Any, cost: Any) -> Any:
        return -start


class UF2(UserFunction):
    name = "UF2"

    def value(self, start: Any, cost: Any) -> Any:
        return -cost


class UF3(UserFunction):
    name = "UF3"

    def value(self, start: Any, cost: Any) -> Any:
        return -(start + cost)


class UF4(UserFunction):
    name = "UF4"

    def value(self, start: Any, cost: Any) -> Any:
        return -(start + 2 * cost)


class UF5(UserFunction):
    name = "UF5"

    def value(self, start: Any, cost: Any) -> Any:
        return -(2 * start + cost)


OWNER_FUNCTIONS: dict[int, OwnerFunction] = {
    k: cls() for k, cls in enumerate((MF1, MF2, MF3, MF4, MF5, MF6), start=1)
}
USER_FUNCTIONS: dict[int, UserFunction] = {
    k: cls() for k, cls in enumerate((UF1, UF2, UF3, UF4, UF5), start=1)
}
