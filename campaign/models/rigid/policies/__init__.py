"""The local scheduling policies of a site, one class per file, found by name here.

A new policy is a subclass of :class:`Policy` in its own file and one line in ``POLICIES``;
the site, the event loop and the models then offer it under that name. A policy taking
options of its own declares them as a frozen subclass of :class:`PolicyOptions`
(its ``options_type``).
"""

from __future__ import annotations

from campaign.models.rigid.policies.accasim_easy import AccasimEasy
from campaign.models.rigid.policies.base import Policy, PolicyOptions, PolicySite
from campaign.models.rigid.policies.conservative import Conservative
from campaign.models.rigid.policies.datacenter_easy import DatacenterEasy
from campaign.models.rigid.policies.easy import Easy, EasyOptions
from campaign.models.rigid.policies.fcfs import Fcfs
from campaign.models.rigid.policies.list_conservative import ListConservative
from campaign.models.rigid.policies.list_easy import ListEasy
from campaign.models.rigid.policies.list_greedy import ListGreedy
from campaign.models.rigid.policies.list_none import ListNone
from campaign.models.rigid.policies.listed import ListOptions, ListPolicy
from campaign.models.rigid.policies.pfcfs import Pfcfs, PfcfsOptions
from campaign.models.rigid.policies.random import Random
from campaign.models.rigid.policies.sjf import Sjf

__all__ = [
    "LIST_MODES",
    "POLICIES",
    "SCHEDULERS",
    "EasyOptions",
    "ListOptions",
    "PfcfsOptions",
    "Policy",
    "PolicyOptions",
    "PolicySite",
    "make_policy",
]

POLICIES: dict[str, type[Policy]] = {
    "fcfs": Fcfs,
    "easy": Easy,
    "conservative": Conservative,
    "accasim_easy": AccasimEasy,
    "sjf": Sjf,
    "random": Random,
    "pfcfs": Pfcfs,
    "list_none": ListNone,
    "list_easy": ListEasy,
    "list_conservative": ListConservative,
    "list_greedy": ListGreedy,
}
"""Every policy by the name a spec gives it, in the order documentation lists them."""

SCHEDULERS = tuple(name for name, kind in POLICIES.items() if not issubclass(kind, ListPolicy))
"""The policies a spec names as ``scheduler`` (arrival order)."""

LIST_MODES: dict[str, str] = {
    kind.mode: name for name, kind in POLICIES.items() if issubclass(kind, ListPolicy)
}
"""The list policies by the backfilling mode a spec names with an ``order``."""


def make_policy(name: str, site: PolicySite, options: PolicyOptions | None = None) -> Policy:
    """The policy ``name`` for ``site`` under ``options`` (None: the policy's defaults); one
    ``ValueError`` for an unknown name, options of another policy or a missing policy
    stream (``site.rng``). EASY without backfilling after a start is the datacenter reference
    simulator's rule, a class of its own (``DatacenterEasy``)."""
    kind = POLICIES.get(name)
    if kind is None:
        raise ValueError(f"unknown scheduler {name!r}; allowed: {', '.join(POLICIES)}")
    wanted = kind.options_type
    if options is None:
        options = wanted()
    elif type(options) is not wanted:
        raise ValueError(
            f"scheduler {name!r} takes {wanted.__name__}, not {type(options).__name__}"
        )
    if kind.needs_rng and site.rng is None:
        raise ValueError(f"scheduler {name!r} needs a random generator (the policy stream)")
    if isinstance(options, EasyOptions) and not options.backfill_after_start:
        kind = DatacenterEasy
    return kind.create(site, options)
