"""Which domains a request reaches (economic.md section 2).

One domain per machine. The home MetaManager asks every domain within ``hops`` steps of the
domain graph, breadth-first; a domain reached twice answers once, at its first distance.
"""

from __future__ import annotations

TOPOLOGIES = ("full", "ring")


def neighbours(machine: int, machines: int, topology: str) -> list[int]:
    """The domains ``machine`` (0-based) knows: every other one (full) or k - 1 and k + 1
    modulo the number of machines (ring)."""
    if topology == "full":
        return [k for k in range(machines) if k != machine]
    if topology == "ring":
        return sorted({(machine - 1) % machines, (machine + 1) % machines} - {machine})
    raise ValueError(f"unknown topology {topology!r}; allowed: {', '.join(TOPOLOGIES)}")


def reached(home: int, machines: int, topology: str, hops: int) -> list[tuple[int, int]]:
    """(machine, distance) of every domain asked by ``home``, in breadth-first order."""
    distance = {home: 0}
    frontier = [home]
    for step in range(1, hops + 1):
        following = []
        for machine in frontier:
            for other in neighbours(machine, machines, topology):
                if other not in distance:
                    distance[other] = step
                    following.append(other)
        frontier = following
    return list(distance.items())
