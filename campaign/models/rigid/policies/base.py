"""The interface every local scheduling policy of a site implements, and the site as a policy
sees it (:class:`PolicySite`).

A site keeps the machine state (free processors, the queue in arrival order, the running jobs
and their planned ends) and tells its policy what happens; the policy keeps whatever it needs
to decide (reservations, a sorted queue, a memo) and, once per pass, starts jobs through
``site.start_job``. A policy never changes the queue itself: the site removes the started jobs.
Policies know the site only through ``PolicySite``: the site builds its policy by name
(``make_policy``), and no policy imports the site.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class PolicySite(Protocol):
    """Everything of a site (``rigid.site.Site``) a policy, or a reservation book it holds, may
    touch: read-only properties, and the few attributes a policy writes."""

    @property
    def index(self) -> int:
        """The site's index in its grid (for messages)."""

    @property
    def processors(self) -> int:
        """How many processors the site has."""

    @property
    def size(self) -> Sequence[int]:
        """Per job: its width (shared by every site of a simulation)."""

    @property
    def estimate(self) -> Sequence[float]:
        """Per job: its runtime estimate (a predictor may rewrite it at arrival)."""

    @property
    def rng(self) -> np.random.Generator | None:
        """The policy stream (policies that draw)."""

    @property
    def queue(self) -> list[int]:
        """The waiting jobs in arrival order; read only: the site dequeues the started jobs."""

    @property
    def ends(self) -> list[tuple[float, int]]:
        """The running jobs by planned end s + est: (planned end, job); read only."""

    @property
    def ended(self) -> int:
        """Jobs ended so far (a memo can tell whether anything ended since)."""

    @property
    def moves(self) -> list[tuple[int, float | None]]:
        """Preemptive policies append (job, None) when they suspend a job and (job, time it
        runs again) when they resume it."""

    free: int
    """Free processors; the site keeps it, a policy that numbers processors sets it."""
    jobs_backfilled: int
    """Jobs started while an earlier-arrived job waited; a policy with ``counts_backfilled``
    counts them itself."""
    alarm: float | None
    """When a preemptive policy wants a pass of its own (None: no timer)."""

    def start_job(self, job: int, t: float) -> None:
        """Start a queued job now."""

    def shadow(self, job: int, t: float) -> tuple[float, int]:
        """A blocked job's shadow time and the processors left over then (EASY)."""


@dataclass(frozen=True)
class PolicyOptions:
    """The options of a policy; a policy that takes more declares a subclass as its
    ``options_type`` (``EasyOptions``, ``ListOptions``, ``PfcfsOptions``)."""

    reference: bool = False
    """The literal rendering, where a policy has a fast one it is checked against:
    conservative and list conservative re-insert every queued job at every compression,
    list EASY scans all of L at every pass, PFCFS runs a whole pass at every event."""


class Policy:
    """Decides which queued jobs start at a site. Subclasses set ``name`` and ``select``."""

    name: ClassVar[str] = ""
    options_type: ClassVar[type[PolicyOptions]] = PolicyOptions
    """The options the policy takes (``create`` gets an instance of exactly this class)."""
    needs_rng: ClassVar[bool] = False
    """Whether the policy draws from the policy stream (``site.rng``)."""
    preemptive: ClassVar[bool] = False
    """Whether the policy suspends and resumes running jobs (``site.moves``) and asks for
    passes of its own (``site.alarm``); such a policy gets a pass at every event time, even
    with an empty queue."""
    counts_backfilled: ClassVar[bool] = False
    """Whether the policy counts ``site.jobs_backfilled`` itself (else the site counts the
    jobs started while an earlier-arrived job still waits)."""

    orders_computed: int = 0
    """Computations of a list order so far (list policies; 0 for arrival order)."""
    n_preemptions: int = 0
    """Suspensions so far, per job and event (preemptive policies)."""
    preempted: frozenset[int] | set[int] = frozenset()
    """Jobs suspended at least once (preemptive policies)."""

    def __init__(self, site: PolicySite) -> None:
        self.site = site

    @classmethod
    def create(cls, site: PolicySite, options: PolicyOptions) -> Policy:
        """The policy for ``site`` under ``options`` (a subclass may pick a variant)."""
        return cls(site)

    def submitted(self, job: int, t: float) -> None:
        """``job`` joined the queue at t (after the completions of t, before the pass)."""

    def completed(self, job: int, t: float, planned: float) -> None:
        """A running job ended at t; it was planned to end at ``planned`` (start + estimate)."""

    def select(self, t: float) -> list[int]:
        """One pass at t over a non-empty queue: start jobs (``site.start_job``) and return
        them in start order."""
        raise NotImplementedError

    def executions(self, start, end) -> Sequence | None:
        """Preemptive policies: every job's executions ((begin, end, processors), ...), given
        the loop's first starts and ends (None: a job executes once, from start to end)."""
        return None

    def wakeup(self, t: float) -> float | None:
        """When the site wants another pass although no event is left (None: never)."""
        return None
