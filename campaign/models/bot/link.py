"""The shared home link: n concurrent transfers each get capacity*availability/n.

Processor sharing is tracked with one counter, ``served``: the bytes every active transfer has
received since the link was last idle. A transfer started when the counter read v0 finishes
when it reads v0 + size, so finish order is a heap order and only the head needs a time;
starting or ending a transfer changes the rate but never the order. Transfers with the same
finish mark end at the same instant, exactly.
"""

from __future__ import annotations

import heapq
import math
from typing import Any

# A transfer: [finish mark, sequence, token, start mark, size, live]
Transfer = list


class SharedLink:
    """Equal sharing of ``capacity`` bytes/s among active transfers, recomputed at every
    start, end and availability change."""

    def __init__(self, capacity: float) -> None:
        if not capacity > 0:
            raise ValueError("link capacity must be positive")
        self.capacity = float(capacity)
        self.availability = 1.0
        self.served = 0.0
        self.last = 0.0
        self.active = 0
        self._heap: list[Transfer] = []
        self._seq = 0

    def _advance(self, now: float) -> None:
        if self.active:
            self.served += (now - self.last) * (self.capacity * self.availability) / self.active
        self.last = now

    def start(self, now: float, size: float, token: Any) -> Transfer:
        """Start a transfer of ``size`` > 0 bytes; the returned handle cancels it."""
        self._advance(now)
        transfer = [self.served + size, self._seq, token, self.served, size, True]
        self._seq += 1
        heapq.heappush(self._heap, transfer)
        self.active += 1
        return transfer

    def cancel(self, now: float, transfer: Transfer) -> float:
        """Stop a live transfer; return the bytes it had moved."""
        self._advance(now)
        transfer[5] = False
        self.active -= 1
        moved = min(self.served - transfer[3], transfer[4])
        self._reset_if_idle()
        return moved

    def set_availability(self, now: float, availability: float) -> None:
        self._advance(now)
        self.availability = availability

    def next_time(self) -> float:
        """Time at which the next live transfer ends (inf when none is active)."""
        heap = self._heap
        while heap and not heap[0][5]:
            heapq.heappop(heap)
        if not heap:
            return math.inf
        left = max(heap[0][0] - self.served, 0.0)  # never negative through rounding
        return self.last + left * self.active / (self.capacity * self.availability)

    def pop_finished(self, now: float) -> list[Any]:
        """End the transfers due at ``now`` (the time given by ``next_time``); return their
        tokens in start order."""
        heap = self._heap
        mark = heap[0][0]
        self.served = mark
        self.last = now
        done = []
        while heap and heap[0][0] <= mark:
            transfer = heapq.heappop(heap)
            if transfer[5]:
                transfer[5] = False
                self.active -= 1
                done.append(transfer[2])
        self._reset_if_idle()
        return done

    def _reset_if_idle(self) -> None:
        # Restart the counter from zero so it never grows large enough to lose precision.
        if self.active == 0:
            self.served = 0.0
            self._heap.clear()
