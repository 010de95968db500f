"""What the driver asks the scheduler and the workers: nothing that touches every worker.

The driver places every batch itself, so it knows which batches each worker holds and which
slots are free; it asks only the workers holding the batches in question. Counted here on
the embedded scheduler's own handlers, around a real dispatch.
"""

from __future__ import annotations

import functools

import pytest
from distributed import Client

from campaign.execute import ExecutionOptions, Item, _Driver
from campaign.execute.tailing import Tailing
from campaign.models.check import busy
from campaign.render.progress import Progress
from campaign.store.ledger import Ledger
from tests.conftest import dask_cluster


@pytest.fixture(scope="module")
def cluster():
    with dask_cluster(4) as cluster:
        yield cluster


@pytest.fixture
def asked(cluster):
    """The scheduler's `processing` and `broadcast` handlers (behind `Client.processing` and
    `Client.run`), each call recorded: the workers a broadcast named, or None."""
    scheduler = cluster.scheduler
    calls: dict[str, list] = {"processing": [], "broadcast": []}
    originals = {name: scheduler.handlers[name] for name in calls}

    def counting(name):
        @functools.wraps(originals[name])
        def handler(*args, **kwargs):
            calls[name].append(kwargs.get("workers"))
            return originals[name](*args, **kwargs)

        return handler

    scheduler.handlers.update({name: counting(name) for name in calls})
    yield calls
    scheduler.handlers.update(originals)


def items_for(durations):
    return [
        Item(
            key=f"t{n:03d}",
            params={"duration_ms": d, "sleep": True},
            seed=n,
            meta={"key": f"t{n:03d}"},
        )
        for n, d in enumerate(durations)
    ]


def drive(cluster, items, tmp_path, **options):
    ledger = Ledger(tmp_path)
    with Client(cluster) as client:
        client.wait_for_workers(4)
        options = ExecutionOptions(retries=0, **options)
        driver = _Driver(client, "busy", ledger.append, options, Progress(0, enabled=False))
        outcome = driver.run(items)
    records = ledger.load()
    assert sorted(records) == [item.key for item in items]
    for item in items:
        assert records[item.key]["metrics"] == busy(item.params, item.seed)
    return outcome


def test_the_tail_steals_without_asking_where_every_batch_is(cluster, asked, tmp_path, monkeypatch):
    steps = []  # the tail's looks, each as the number of workers asked by then
    step = Tailing.step

    def counted(self):
        step(self)
        steps.append(len(asked["broadcast"]))

    monkeypatch.setattr(Tailing, "step", counted)
    # batches of 8: one worker's batch holds a long task, so the others run out first; the
    # tasks behind it are long enough to be stolen however late a loaded driver looks
    items = items_for([20] * 24 + [600] + [100] * 7)
    outcome = drive(cluster, items, tmp_path, batch_size=8)
    assert outcome.stolen >= 1
    assert asked["processing"] == []  # the scheduler was never asked for every worker's tasks
    # each question went to one worker, and fewer went out than one to every worker each look
    assert all(workers is not None and len(workers) == 1 for workers in asked["broadcast"])
    assert steps and len(asked["broadcast"]) < 4 * len(steps), (steps, asked["broadcast"])


def test_a_timeout_no_task_comes_near_costs_no_question(cluster, asked, tmp_path):
    items = items_for([50] * 80)  # a second on four workers: polls happen (every 0.2 s at the tail)
    drive(cluster, items, tmp_path, task_timeout=60.0, replicate_tail=False)
    assert asked["broadcast"] == []
