"""Dispatch draws its items as it sends them: a run of millions of tasks never holds an item
per task, and its results are those of items given all at once."""

from __future__ import annotations

import pytest
from distributed import Client

from campaign.design.tasks import Design
from campaign.execute import ExecutionOptions, Item, _Driver, batching
from campaign.execute.items import TaskItems
from campaign.models.check import busy
from campaign.plan.plan import make_plan
from campaign.render.progress import Progress
from campaign.spec.load import spec_from_text
from campaign.store.ledger import Ledger


class Counted:
    """Items made on demand, counting how many were made."""

    def __init__(self, count: int, groups: int = 1):
        self.count, self.groups, self.made = count, groups, 0

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        for seed in range(self.count):
            self.made += 1
            key = f"t{seed:03d}"
            group = seed % self.groups if self.groups > 1 else None
            yield Item(key, {"duration_ms": 0}, seed, {"key": key}, group=group)


def test_the_queue_draws_fed_items_as_they_are_taken(monkeypatch):
    monkeypatch.setattr(batching, "FEED_AHEAD", 5)
    queue, items = batching.GroupedQueue(), Counted(40)
    queue.feed(items)
    assert (items.made, len(queue)) == (5, 40)  # every item counts as pending from the start
    assert [item.seed for item in queue.take(3)] == [0, 1, 2] and items.made == 8
    batch = queue.take(12)  # more than are drawn: drawn first
    assert [item.seed for item in batch] == list(range(3, 15)) and len(queue) == 25
    assert items.made == 20
    while queue:
        queue.take(7)
    assert items.made == 40
    grouped = Counted(10, groups=2)
    queue.feed(grouped)
    assert queue.groups() == [0, 1] and [item.seed for item in queue.take(3, 1)] == [1, 3]


def test_task_items_are_made_at_each_iteration_sharing_each_cells_params():
    spec = spec_from_text(
        "name: x\nmodel: busy\nfactors:\n  tag: [a, b]\nreplicates: 3\nseed: 1\n", None
    )
    plan = make_plan(spec, check_identity=False)
    items = TaskItems(plan, [5, 0, 1], "run-1")
    first, again = list(items), list(items)
    assert len(items) == 3 and first[0] is not again[0]
    design = Design(spec)
    assert [item.key for item in first] == [design.task(i).key for i in (5, 0, 1)]
    assert first[1].params is first[2].params and first[1].meta["cell"] is first[2].meta["cell"]
    assert first[0].meta == {
        "key": design.task(5).key,
        "cell": {"tag": "b"},
        "replicate": 2,
        "run": "run-1",
    }


@pytest.fixture(scope="module")
def client(scheduler_address):
    with Client(scheduler_address) as client:
        client.wait_for_workers(2)
        yield client


def test_a_dispatch_fed_a_few_items_ahead_stores_every_result(client, tmp_path, monkeypatch):
    monkeypatch.setattr(batching, "FEED_AHEAD", 4)
    items, ledger = Counted(60), Ledger(tmp_path)
    options = ExecutionOptions(retries=0, batch_size=3)
    driver = _Driver(client, "busy", ledger.append, options, Progress(0, enabled=False))
    outcome = driver.run(items)
    records = ledger.load()
    assert outcome.ok == 60 and items.made == 60
    for seed in range(60):
        assert records[f"t{seed:03d}"]["metrics"] == busy({"duration_ms": 0}, seed)
