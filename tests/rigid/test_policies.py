"""The policy registry: every policy is one class found by its name, and a new policy is one
class and one registry entry away from running in a simulation."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.policies import (
    LIST_MODES,
    POLICIES,
    SCHEDULERS,
    EasyOptions,
    ListOptions,
    PfcfsOptions,
    Policy,
    PolicyOptions,
)
from campaign.models.rigid.policies.datacenter_easy import DatacenterEasy
from campaign.models.rigid.policies.easy import Easy
from campaign.models.rigid.policies.pfcfs import PRESETS
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.site import Site
from campaign.models.rigid.workload import from_arrays


class Lifo(Policy):
    """Latest arrival first; a job that does not fit ends the pass."""

    name = "lifo"

    def select(self, t: float) -> list[int]:
        site = self.site
        started = []
        for job in reversed(site.queue):
            if site.size[job] > site.free:
                break
            site.start_job(job, t)
            started.append(job)
        return started


def test_every_policy_is_registered_under_its_own_name():
    assert list(POLICIES) == [
        "fcfs",
        "easy",
        "conservative",
        "accasim_easy",
        "sjf",
        "random",
        "pfcfs",
        "list_none",
        "list_easy",
        "list_conservative",
        "list_greedy",
    ]
    for name, kind in POLICIES.items():
        assert issubclass(kind, Policy) and kind.name == name


def test_a_new_policy_runs_once_registered(monkeypatch):
    monkeypatch.setitem(POLICIES, "lifo", Lifo)
    # 2 processors: job 0 holds both until 10; jobs 1-3 wait. At 10 the latest, job 3 (2
    # processors), starts; job 2 does not fit and ends the pass. At 11 jobs 2 then 1 start.
    workload = from_arrays([0, 1, 2, 3], [2, 1, 1, 2], [10, 5, 5, 1], [10, 5, 5, 1])
    schedule = run_schedule(workload, 2, "lifo")
    check_feasible(schedule)
    assert schedule.start.tolist() == [0, 11, 11, 10]
    assert schedule.end.tolist() == [10, 16, 16, 11]
    assert schedule.jobs_backfilled == 1  # job 3 started while jobs 1 and 2 waited


def test_unknown_policy_names_every_allowed_one():
    with pytest.raises(ValueError) as error:
        Site(4, "lifo", [1], [1.0])
    assert str(error.value) == (
        "unknown scheduler 'lifo'; allowed: fcfs, easy, conservative, accasim_easy, sjf, "
        "random, pfcfs, list_none, list_easy, list_conservative, list_greedy"
    )


def test_the_datacenter_rule_is_its_own_easy_class():
    site = Site(4, "easy", [1], [1.0], options=EasyOptions(backfill_after_start=False))
    assert type(site.policy) is DatacenterEasy and not DatacenterEasy.backfill_after_start
    assert type(Site(4, "easy", [1], [1.0]).policy) is Easy


def test_only_drawing_policies_need_the_policy_stream():
    assert [name for name, kind in POLICIES.items() if kind.needs_rng] == ["random"]
    site = Site(2, "random", [1], [1.0], rng=np.random.default_rng(0))
    assert site.policy.rng is not None


def test_list_policies_take_their_order_from_the_options():
    assert SCHEDULERS == ("fcfs", "easy", "conservative", "accasim_easy", "sjf", "random", "pfcfs")
    assert LIST_MODES == {
        "none": "list_none",
        "easy": "list_easy",
        "conservative": "list_conservative",
        "greedy": "list_greedy",
    }
    with pytest.raises(ValueError) as error:
        Site(4, "list_easy", [1], [1.0], options=ListOptions(order="lifo"))
    assert str(error.value) == "unknown order 'lifo'; allowed: fcfs, psrs, smart_ffia, smart_nfiw"
    with pytest.raises(ValueError) as error:
        Site(4, "list_easy", [1], [1.0], options=ListOptions(weight="area"))
    assert str(error.value) == "unknown weight 'area'; allowed: unit, work"


def test_each_policy_takes_its_own_options():
    """A policy's options are its own class: those of another policy are refused in one line
    (an order given to conservative, a rule given to list EASY), none gives the defaults."""
    expected = {
        "easy": EasyOptions,
        "pfcfs": PfcfsOptions,
        **{name: ListOptions for name in LIST_MODES.values()},
    }
    for name, kind in POLICIES.items():
        assert kind.options_type is expected.get(name, PolicyOptions), name
    with pytest.raises(ValueError) as error:
        Site(4, "conservative", [1], [1.0], options=ListOptions(order="psrs"))
    assert str(error.value) == "scheduler 'conservative' takes PolicyOptions, not ListOptions"
    with pytest.raises(ValueError) as error:
        Site(4, "list_easy", [1], [1.0], options=EasyOptions(backfill_after_start=False))
    assert str(error.value) == "scheduler 'list_easy' takes ListOptions, not EasyOptions"
    assert Site(4, "pfcfs", [1], [1.0]).policy.params == PRESETS["pfcfs1"]
