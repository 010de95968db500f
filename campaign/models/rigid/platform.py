"""Core-level platform of the datacenter configuration (datacenter.md sections 1 and 2).

A site's processors are cores, grouped into processors of given types. The :class:`Site`
only counts free cores; which cores a job gets, and so how long it runs, is decided here when
it starts: fastest idle cores first (ties: lowest index) or, with ``low_power``, lowest
dynamic power first (ties: lowest index). A job executes its operation count on every
allocated core and ends when its slowest core does. It holds all its cores until then, and
they draw running power (the reference simulator releases a job's cores only when the whole
job ends), so the energy model needs the actual allocation, recorded by :class:`Execution`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

GIGA = 1e9
CORE_ORDERS = ("fastest", "low_power")


@dataclass(frozen=True)
class ProcessorType:
    """One processor: ``cores`` cores of ``clock_rate`` GHz doing ``dpflops_per_cycle``
    operations per cycle; ``static_power`` (W) for the whole processor, ``dynamic_power`` (W)
    per running core."""

    cores: int = 8
    clock_rate: float = 0.001
    dpflops_per_cycle: float = 1.0
    static_power: float = 50.0
    dynamic_power: float = 100.0

    @property
    def speed(self) -> float:
        """Operations per second of one core: clock_rate * dpflops_per_cycle * 10^9."""
        return self.clock_rate * self.dpflops_per_cycle * GIGA


REFERENCE = ProcessorType()
"""The processor of every source experiment: 8 cores of 10^6 ops/s, 50 W static, 100 W
dynamic."""


def mixed_processors(
    processors: int,
    base: ProcessorType = REFERENCE,
    fraction: float = 0.0,
    clock: float = 1.0,
    dynamic_power: float = 1.0,
) -> list[ProcessorType]:
    """``processors`` processors of ``base``, of which the first floor(fraction * processors
    + 0.5) have their clock rate multiplied by ``clock`` and their dynamic power by
    ``dynamic_power`` (datacenter.md section 5: a speed/power mix at an equal core count)."""
    changed = math.floor(fraction * processors + 0.5)
    other = replace(
        base, clock_rate=base.clock_rate * clock, dynamic_power=base.dynamic_power * dynamic_power
    )
    return [other] * changed + [base] * (processors - changed)


class Platform:
    """The cores of a list of processors and the idle ones, in allocation preference order.

    Core c of processor k: ``speed[c]`` (ops/s), ``dynamic[c]`` (W when running),
    ``static[c]`` = static_power / cores (W), ``owner[c]`` = k. Cores are numbered processor
    by processor.
    """

    def __init__(self, processors: Sequence[ProcessorType], order: str = "fastest") -> None:
        if order not in CORE_ORDERS:
            raise ValueError(f"unknown core order {order!r}; allowed: {', '.join(CORE_ORDERS)}")
        if not processors:
            raise ValueError("a platform needs at least one processor")
        self.processors = tuple(processors)
        self.order = order
        self.speed: list[float] = []
        self.dynamic: list[float] = []
        self.static: list[float] = []
        self.owner: list[int] = []
        for k, kind in enumerate(self.processors):
            if kind.cores < 1 or kind.speed <= 0:
                raise ValueError(f"processor {k} needs >= 1 core and a positive speed: {kind}")
            for _ in range(kind.cores):
                self.speed.append(kind.speed)
                self.dynamic.append(kind.dynamic_power)
                self.static.append(kind.static_power / kind.cores)
                self.owner.append(k)
        cores = range(len(self.speed))
        if order == "fastest":
            self.preference = sorted(cores, key=lambda c: (-self.speed[c], c))
        else:
            self.preference = sorted(cores, key=lambda c: (self.dynamic[c], c))
        self._rank = {core: rank for rank, core in enumerate(self.preference)}
        self._idle = list(range(len(self.preference)))  # ranks of the idle cores, a heap

    @property
    def cores(self) -> int:
        return len(self.speed)

    @property
    def idle(self) -> int:
        return len(self._idle)

    def allocate(self, width: int) -> tuple[int, ...]:
        """Take the ``width`` most preferred idle cores."""
        if width > len(self._idle):
            raise RuntimeError(f"{width} cores wanted, {len(self._idle)} idle")
        preference = self.preference
        return tuple(preference[heapq.heappop(self._idle)] for _ in range(width))

    def release(self, cores: Sequence[int]) -> None:
        for core in cores:
            heapq.heappush(self._idle, self._rank[core])

    def runtime(self, ops: float, cores: Sequence[int]) -> float:
        """Time to execute ``ops`` operations on every one of ``cores``: the slowest decides."""
        if not cores:
            return 0.0
        return ops / min(self.speed[core] for core in cores)


class Execution:
    """The jobs of one simulation running on a platform: the event loop calls ``begin`` when a
    job starts (it returns the time the job runs) and ``end`` when it ends.

    ``ops[j]``: operations per core; ``limit[j]``: kill limit (inf: never killed). Records per
    job the cores it got and its runtime on them before the kill limit (``actual``).
    """

    def __init__(
        self, platform: Platform, size: Sequence[int], ops: Sequence[float], limit: Sequence[float]
    ) -> None:
        self.platform = platform
        self.size = size
        self.ops = ops
        self.limit = limit
        n = len(size)
        self.cores: list[tuple[int, ...]] = [()] * n
        self.actual = [math.nan] * n

    def begin(self, job: int, t: float) -> float:
        cores = self.platform.allocate(self.size[job])
        self.cores[job] = cores
        actual = self.platform.runtime(self.ops[job], cores)
        self.actual[job] = actual
        return min(actual, self.limit[job])

    def end(self, job: int) -> None:
        self.platform.release(self.cores[job])
