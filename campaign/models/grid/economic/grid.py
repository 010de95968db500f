"""The economic grid: MetaManagers that forward a request, collect offers and book the best
(economic.md sections 2, 6 and 7).

`EconomicGrid.request(job, now)` handles one request at its arrival: the domains within
``hops`` of the job's home offer single-machine placements (and, when asked, the reached
machines together multi-site ones); the offer with the largest user value is booked as
reservations that never move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from campaign.models.grid.economic.criteria import OWNER_FUNCTIONS, USER_FUNCTIONS
from campaign.models.grid.economic.domains import TOPOLOGIES, reached
from campaign.models.grid.economic.machine import MachineSchedule
from campaign.models.grid.economic.multisite import multisite_offers, split
from campaign.models.grid.economic.offers import Offer, machine_offers

MULTISITE = ("required", "always", "off")


@dataclass(frozen=True)
class EconomicOptions:
    """The economic scenario's own settings (defaults as in economic.md section 10)."""

    mf: int = 1
    uf: int = 1
    hops: int = 2
    topology: str = "full"
    offers_per_machine: int = 5
    shifts: int = 5
    multisite: str = "required"
    min_multisite: int = 1
    max_multisite: int | None = None

    def __post_init__(self) -> None:
        if self.mf not in OWNER_FUNCTIONS or self.uf not in USER_FUNCTIONS:
            raise ValueError(f"no owner function MF{self.mf} or user function UF{self.uf}")
        if self.topology not in TOPOLOGIES or self.multisite not in MULTISITE:
            raise ValueError(f"unknown topology {self.topology!r} or multisite {self.multisite!r}")


class EconomicGrid:
    """Machines of ``machines`` processors, one domain each, and their reservations.

    ``estimate`` is what offers plan with, ``runtime`` how long a job really runs (at most
    its estimate, else the grid is refused: a reservation never moves, so a job outliving
    it would overlap the next one), ``home`` the home machine (0-based) of every job;
    ``overhead`` stretches a co-allocated job and its reservation, ``max_parts`` bounds its
    parts (None: all).
    """

    def __init__(
        self,
        machines: Sequence[int],
        size: Sequence[int],
        estimate: Sequence[float],
        runtime: Sequence[float],
        home: Sequence[int],
        options: EconomicOptions,
        overhead: float = 0.0,
        max_parts: int | None = None,
    ) -> None:
        late = np.asarray(runtime) > np.asarray(estimate)
        if late.any():
            job = int(late.argmax())
            raise ValueError(
                f"job {job} runs {runtime[job]} s past its planned {estimate[job]} s: economic "
                "reservations need kill_at_estimate or local_estimate exact"
            )
        self.machines = [int(m) for m in machines]
        self.schedules = [MachineSchedule(m) for m in self.machines]
        self.size = size
        self.estimate = estimate
        self.runtime = runtime
        self.home = home
        self.options = options
        self.overhead = float(overhead)
        self.max_parts = max_parts
        self.owner = OWNER_FUNCTIONS[options.mf]
        self.user = USER_FUNCTIONS[options.uf]
        m = len(self.machines)
        self.reach = [reached(k, m, options.topology, options.hops) for k in range(m)]
        self.offers_made = 0

    def stretch(self, offer: Offer) -> float:
        """Runtime factor of a booked offer: 1 + overhead when co-allocated."""
        return 1.0 + self.overhead if len(offer.parts) > 1 else 1.0

    def single_allowed(self, size: int) -> bool:
        """Whether a job may run on one machine (MaxMS, when set, caps that too)."""
        cap = self.options.max_multisite
        return cap is None or size <= cap

    def wants_multisite(self, size: int, reach: Sequence[tuple[int, int]]) -> bool:
        """Whether multi-site offers are made for a job of ``size`` reaching ``reach``."""
        mode = self.options.multisite
        if mode == "always":
            return True
        if mode == "off":
            return False
        fits = any(size <= self.machines[k] for k, _ in reach)
        return not (fits and self.single_allowed(size))

    def placeable(self, size: int, home: int) -> bool:
        """Whether the job gets an offer on the empty schedules of its reached machines."""
        reach = self.reach[home]
        o = self.options
        if self.single_allowed(size) and any(size <= self.machines[k] for k, _ in reach):
            return True
        if not self.wants_multisite(size, reach):
            return False
        free = sorted((k, self.machines[k]) for k, _ in reach)
        return split(free, size, o.min_multisite, o.max_multisite, self.max_parts) is not None

    def offers(self, job: int, now: float) -> list[Offer]:
        """Every offer made for ``job`` at ``now``."""
        o = self.options
        size = int(self.size[job])
        length = float(self.estimate[job])
        reach = self.reach[self.home[job]]
        for k, _ in reach:
            self.schedules[k].release(now)
        offers: list[Offer] = []
        if self.single_allowed(size):
            for k, hops in reach:
                offers += machine_offers(
                    self.schedules[k],
                    k,
                    hops,
                    size,
                    length,
                    now,
                    o.offers_per_machine,
                    o.shifts,
                    self.owner,
                    self.user,
                )
        if len(reach) > 1 and self.wants_multisite(size, reach):
            offers += multisite_offers(
                self.schedules,
                reach,
                size,
                length * (1.0 + self.overhead),
                now,
                o.offers_per_machine,
                o.min_multisite,
                o.max_multisite,
                self.max_parts,
                self.owner,
                self.user,
            )
        return offers

    def request(self, job: int, now: float) -> Offer:
        """Process ``job``'s request at ``now``: book and return the winning offer."""
        offers = self.offers(job, now)
        self.offers_made += len(offers)
        if not offers:
            raise ValueError(f"job {job} (size {self.size[job]}) got no offer")
        winner = min(offers, key=lambda offer: offer.rank)
        stretch = self.stretch(winner)
        end = winner.start + float(self.estimate[job]) * stretch
        done = winner.start + float(self.runtime[job]) * stretch
        for k, processors in winner.parts:
            self.schedules[k].book(processors, winner.start, end, done)
        return winner

    @property
    def reservations(self) -> int:
        """Reservations kept now, over all machines (the size of the schedule)."""
        return sum(schedule.count for schedule in self.schedules)


def simulate(grid: EconomicGrid, submit: Sequence[float]) -> tuple[np.ndarray, tuple[Offer, ...]]:
    """Process every request at its arrival, in arrival order; start and winner per job."""
    winners = tuple(grid.request(job, float(submit[job])) for job in range(len(submit)))
    return np.array([w.start for w in winners], dtype=np.float64), winners
