"""The tail of a campaign: work stealing, straggler copies and input locality of batches."""

from __future__ import annotations

import pytest
from distributed import Client

from campaign.execute import (
    ExecutionOptions,
    Item,
    _Driver,
    run_batch,
    running_tasks,
    skip_tasks,
)
from campaign.models.check import busy
from campaign.render.progress import Progress
from campaign.store.ledger import Ledger


def items_for(durations, group=None):
    items = []
    for seed, duration in enumerate(durations):
        params = {"duration_ms": duration}
        item = Item(key=f"t{seed:02d}", params=params, seed=seed, meta={"key": f"t{seed:02d}"})
        item.group = group
        items.append(item)
    return items


def drive(client, items, tmp_path, size, **switches):
    ledger = Ledger(tmp_path)
    options = ExecutionOptions(retries=0, batch_size=size, **switches)
    driver = _Driver(client, "busy", ledger.append, options, Progress(0, enabled=False))
    outcome = driver.run(items)
    return outcome, ledger.load()


@pytest.fixture(scope="module")
def client(scheduler_address):
    with Client(scheduler_address) as client:
        client.wait_for_workers(2)
        yield client


def check_records(records, items):
    assert sorted(records) == [item.key for item in items]
    for item in items:
        record = records[item.key]
        assert record["status"] == "ok" and record["attempts"] == 1
        assert record["metrics"] == busy(item.params, item.seed)


def test_idle_worker_steals_unstarted_tasks_of_the_last_batch(client, tmp_path):
    # one batch: a slow head then ten short tasks; the other worker is idle from the start
    items = items_for([800] + [100] * 10)
    outcome, records = drive(client, items, tmp_path, size=11)
    check_records(records, items)
    assert outcome.stolen >= 1
    workers = {records[i.key]["worker"] for i in items}
    assert len(workers) == 2  # the stolen tasks ran on the other worker


def test_without_tail_replication_one_worker_runs_the_whole_batch(client, tmp_path):
    items = items_for([300] + [20] * 10)
    outcome, records = drive(client, items, tmp_path, size=11, replicate_tail=False)
    check_records(records, items)
    assert outcome.stolen == outcome.replicated == 0
    assert len({records[i.key]["worker"] for i in items}) == 1


def test_a_straggling_task_is_copied_and_stored_once(client, tmp_path):
    # short tasks set the mean; the last task runs far longer, alone in its batch
    items = items_for([5] * 6 + [1500])
    outcome, records = drive(client, items, tmp_path, size=1)
    check_records(records, items)
    assert outcome.replicated == 1


def test_batches_never_mix_input_groups(client, tmp_path):
    items = items_for([1] * 6, group=("a",)) + items_for([1] * 6, group=("b",))
    for index, item in enumerate(items):
        item.key = f"k{index:02d}"
        item.meta = {"key": item.key}
    sent = []
    ledger = Ledger(tmp_path)
    options = ExecutionOptions(retries=0, batch_size=4)
    driver = _Driver(client, "busy", ledger.append, options, Progress(0, enabled=False))
    original = driver.flight.send

    def spy(batch, worker, strict=True):
        sent.append([item.group for item in batch])
        return original(batch, worker, strict)

    driver.flight.send = spy
    driver.run(items)
    assert all(len(set(groups)) == 1 for groups in sent)
    records = ledger.load()
    assert sorted(records) == [item.key for item in items]
    # each worker kept to one group: each input was loaded by one worker only
    workers = {
        group: {records[i.key]["worker"] for i in items if i.group == group}
        for group in (("a",), ("b",))
    }
    assert all(len(w) == 1 for w in workers.values()) and workers[("a",)] != workers[("b",)]


def test_a_skip_request_arriving_after_its_batch_ended_skips_nothing_later():
    # the batch the request names is no longer running: a later batch with the same task key
    # (a rerun, another campaign on the same workers) must still run that task
    skip_tasks("campaign-ended", ["t01"])
    params = {"duration_ms": 1}
    worker, results, *_ = run_batch("busy", [("t01", params, 1)], "campaign-ended")
    assert [r["status"] for r in results] == ["ok"]
    assert results[0]["metrics"] == busy(params, 1)


def test_a_batch_on_its_way_counts_as_waiting_and_a_finished_one_is_not_named(client):
    # a loaded scheduler may forward a batch after the driver asks about it: taken for
    # finished, its tasks were never stolen and one worker ran them all
    finished = client.submit(run_batch, "busy", [("t01", {"duration_ms": 1}, 1)], "on-way")
    worker = finished.result()[0]
    asked = [finished.key, "campaign-batch-on-its-way"]
    reports = client.run(running_tasks, asked, workers=[worker])
    assert reports == {worker: {"campaign-batch-on-its-way": (-1, 0.0)}}


def test_a_batch_waiting_on_its_worker_skips_the_tasks_taken_from_it(client):
    # the worker's one thread runs a long batch; the next waits behind it and is told to skip
    # a task another worker took, before any of its tasks started
    worker = client.submit(run_batch, "busy", [("t00", {"duration_ms": 1}, 0)]).result()[0]
    params = {"duration_ms": 1}
    head = client.submit(
        run_batch, "busy", [("t01", {"duration_ms": 1500}, 1)], "head", key="head", workers=[worker]
    )
    waiting = [("t02", params, 2), ("t03", params, 3)]
    behind = client.submit(run_batch, "busy", waiting, "behind", key="behind", workers=[worker])
    assert client.run(running_tasks, ["behind"], workers=[worker])[worker]["behind"] == (-1, 0.0)
    client.run(skip_tasks, "behind", ["t03"], workers=[worker])
    _, results, *_ = behind.result(timeout=30)
    assert [r["status"] for r in results] == ["ok", "skipped"]
    assert results[0]["metrics"] == busy(params, 2)
    assert head.result(timeout=30)[1][0]["status"] == "ok"
