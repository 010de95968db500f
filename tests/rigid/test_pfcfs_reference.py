"""A literal rendering of PFCFS (list-scheduling.md sections 5.2-5.3), written from the text with
its own event loop, a pass at every event time and the free processors recounted from the
jobs' states at every look, against the simulator on random small instances: the same start
and end of every job, the same executions (begin, end, processors) and preemption count. And
the passes the simulator skips: each would have changed nothing (checked by running them all)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.policies import PfcfsOptions
from campaign.models.rigid.policies.pfcfs import PRESETS, Pfcfs, PfcfsParams
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import from_arrays


def literal_pfcfs(r, size, p, m, params: PfcfsParams):
    """Start, end, executions [begin, end, processors] per job and the suspension count."""
    n = len(r)
    limit = math.inf if params.max_preemptions is None else params.max_preemptions
    gang = params.delay if params.slice is None else params.slice
    s = params.penalty
    state = ["queued"] * n  # queued, running, suspended, done
    procs: list[tuple[int, ...]] = [()] * n
    left = [float(x) for x in p]  # time still to execute
    since = [0.0] * n  # a running job executes from here on (after a switch: t + s)
    start = [math.nan] * n
    end = [math.nan] * n
    runs: list[list[list]] = [[] for _ in range(n)]
    queue: list[int] = []
    count = {"suspensions": 0}
    st = {"mode": "IDLE", "h": None, "clock": None, "V": [], "k": 0, "end": math.inf}

    def running():
        return [j for j in range(n) if state[j] == "running"]

    def free():
        held = {q for j in range(n) if state[j] in ("running", "suspended") for q in procs[j]}
        return [q for q in range(m) if q not in held]

    def execute(j, at):
        state[j] = "running"
        since[j] = at
        runs[j].append([at, None, procs[j]])

    def suspend(j, t):
        state[j] = "suspended"
        left[j] -= t - since[j]
        runs[j][-1][1] = t
        count["suspensions"] += 1

    def start_on(j, t, on, at):
        queue.remove(j)
        procs[j] = tuple(sorted(on))
        start[j] = t
        execute(j, at)

    def gang_end(t):
        return t + gang if st["k"] < limit else math.inf

    def victims(need):
        first = {j: start[j] for j in running()}
        if params.preempt == "all":
            return sorted(first, key=lambda j: (first[j], j))
        chosen = []
        while need > 0:
            fits = [j for j in first if size[j] >= need]
            if fits:  # the smallest that covers the need; ties: later start, higher index
                pick = min(fits, key=lambda j: (size[j], -first[j], -j))
            else:  # the largest; ties: later start, higher index
                pick = max(first, key=lambda j: (size[j], first[j], j))
            chosen.append(pick)
            del first[pick]
            need -= size[pick]
        return chosen

    def one_pass(t):
        while True:
            if st["mode"] == "IDLE":
                if not queue:
                    return
                h = queue[0]
                if size[h] <= params.wide * m:
                    if len(free()) >= size[h]:
                        start_on(h, t, free()[: size[h]], t)
                        continue
                    return
                st.update(mode="WAIT", h=h, clock=None)
            h = st["h"]
            if st["mode"] == "WAIT":
                if st["clock"] is None:
                    if params.wait_half and len(free()) < m / 2:
                        return
                    st["clock"] = t
                if len(free()) >= size[h]:
                    start_on(h, t, free()[: size[h]], t)
                    st["mode"] = "IDLE"
                    continue
                if limit >= 1 and t >= st["clock"] + params.delay:
                    idle = free()
                    V = victims(size[h] - len(idle))
                    pool = idle + [q for j in V for q in sorted(procs[j])]
                    for j in V:
                        suspend(j, t)
                    start_on(h, t, pool[: size[h]], t + s)
                    st.update(V=V, k=1, mode="RUN_WIDE")
                    st["end"] = gang_end(t)
                return
            if st["mode"] == "RUN_WIDE":
                if state[h] == "done":
                    for j in st["V"]:
                        execute(j, t + s)
                    st.update(mode="IDLE", end=math.inf)
                    continue
                if t >= st["end"]:
                    suspend(h, t)
                    for j in st["V"]:
                        execute(j, t + s)
                    st.update(k=st["k"] + 1, mode="RUN_SMALL")
                    st["end"] = gang_end(t)
                return
            holding = [j for j in running() if set(procs[j]) & set(procs[h])]
            if not holding:  # F
                execute(h, t + s)
                st.update(mode="IDLE", end=math.inf)
                continue
            if t >= st["end"]:
                V = running() if params.preempt == "all" else holding
                V.sort(key=lambda j: (start[j], j))
                for j in V:
                    suspend(j, t)
                execute(h, t + s)
                st.update(V=V, k=st["k"] + 1, mode="RUN_WIDE")
                st["end"] = gang_end(t)
            return

    arrived = 0
    last = -math.inf
    for _ in range(100 * n + 100):
        moments = [since[j] + left[j] for j in running()]
        if arrived < n:
            moments.append(r[arrived])
        if st["mode"] == "WAIT" and st["clock"] is not None and limit >= 1:
            timer = st["clock"] + params.delay
        elif st["mode"] in ("RUN_WIDE", "RUN_SMALL"):
            timer = st["end"]
        else:
            timer = math.inf
        if last < timer < math.inf:
            moments.append(timer)
        if not moments:
            break
        t = min(moments)
        for j in running():
            if since[j] + left[j] == t:
                state[j] = "done"
                end[j] = t
                runs[j][-1][1] = t
        while arrived < n and r[arrived] == t:
            queue.append(arrived)
            arrived += 1
        one_pass(t)
        last = t
    else:
        raise AssertionError("the literal PFCFS did not finish")
    return start, end, runs, count["suspensions"]


def random_params(rng) -> PfcfsParams:
    delay = float(rng.choice([0, 1, 2, 3, 5]))
    slice_ = rng.choice([None, 1.0, 2.0, 3.0])
    if delay == 0 and slice_ is None:
        slice_ = 1.0
    gang = delay if slice_ is None else slice_
    penalty = float(rng.choice([0, 0, 0.5])) if min(gang, delay) > 0.5 else 0.0
    return PfcfsParams(
        wide=float(rng.choice([0.3, 0.4, 0.5, 0.6])),
        max_preemptions=rng.choice([None, 0, 1, 2, 3, 4, 11]),
        delay=delay,
        slice=slice_,
        penalty=penalty,
        preempt=str(rng.choice(["greedy", "all"])),
        wait_half=bool(rng.integers(2)),
    )


def random_instance(rng):
    m = int(rng.integers(3, 9))
    n = int(rng.integers(4, 15))
    r = np.sort(rng.integers(0, 25, n)).astype(float)
    size = rng.integers(1, m + 1, n)
    p = rng.integers(0, 9, n).astype(float)
    p[rng.random(n) < 0.85] += 1  # mostly >= 1 s, sometimes a job of length 0
    return r, size, p, m


@pytest.mark.parametrize("seed", range(400))
def test_simulator_matches_the_literal_rules(seed):
    rng = np.random.default_rng(seed)
    r, size, p, m = random_instance(rng)
    params = random_params(rng)
    start, end, runs, suspensions = literal_pfcfs(r.tolist(), size.tolist(), p.tolist(), m, params)
    schedule = run_schedule(
        from_arrays(r, size, p, p), m, "pfcfs", options=PfcfsOptions(params=params)
    )
    check_feasible(schedule)
    assert schedule.start.tolist() == start
    assert schedule.end.tolist() == end
    assert [[list(run) for run in job] for job in schedule.segments] == runs
    assert schedule.n_preemptions == suspensions


def test_the_random_instances_preempt_switch_and_pay_penalties():
    """The instances reach the rules that matter: preemptions, several switches per wide job,
    penalties, and jobs suspended more than once."""
    preempting = switching = penalised = 0
    for seed in range(400):
        rng = np.random.default_rng(seed)
        r, size, p, m = random_instance(rng)
        params = random_params(rng)
        _, _, runs, suspensions = literal_pfcfs(r.tolist(), size.tolist(), p.tolist(), m, params)
        preempting += suspensions > 0
        switching += any(len(job) > 2 for job in runs)
        penalised += params.penalty > 0 and suspensions > 0
    assert preempting > 200 and switching > 100 and penalised > 40


@pytest.fixture
def watched(monkeypatch):
    """Every pass runs (``PfcfsOptions.reference``); a pass the simulator would skip is checked to
    start, suspend and resume nothing and to leave the handler as it was. Returns the count of
    such passes."""
    select = Pfcfs.select
    seen = {"skippable": 0}

    def state(policy):
        return (
            policy.mode,
            policy.head,
            policy.clock,
            policy.switches,
            policy.end,
            len(policy.site.moves),
            tuple(policy.free),
            policy.site.free,
        )

    def checked(policy, t):
        skippable = not policy.dirty and t < policy.due
        before = state(policy)
        started = select(policy, t)
        if skippable:
            seen["skippable"] += 1
            assert started == [] and state(policy) == before, f"pass at {t} changed something"
        return started

    monkeypatch.setattr(Pfcfs, "select", checked)
    return seen


def test_skipped_passes_change_nothing_on_random_instances(watched):
    for seed in range(400):
        rng = np.random.default_rng(seed)
        r, size, p, m = random_instance(rng)
        params = random_params(rng)
        workload = from_arrays(r, size, p, p)
        every = run_schedule(
            workload, m, "pfcfs", options=PfcfsOptions(params=params, reference=True)
        )
        skipping = run_schedule(workload, m, "pfcfs", options=PfcfsOptions(params=params))
        assert every.segments == skipping.segments
        assert every.n_preemptions == skipping.n_preemptions
    assert watched["skippable"] > 1000


@pytest.mark.parametrize("preset", list(PRESETS))
def test_skipped_passes_change_nothing_on_a_trace(watched, workloads, preset):
    from campaign.models.jobs import build_workload, parse

    workload, processors, _ = build_workload(
        parse({"trace": "KTH-SP2-1996-2.1-cln.swf.gz", "jobs": 1500}),
        np.random.SeedSequence(1).spawn(5),
    )
    params = PRESETS[preset]
    every = run_schedule(
        workload, processors, "pfcfs", options=PfcfsOptions(params=params, reference=True)
    )
    skipping = run_schedule(workload, processors, "pfcfs", options=PfcfsOptions(params=params))
    assert every.n_preemptions > 0
    assert every.segments == skipping.segments
    assert watched["skippable"] > len(workload) / 2
