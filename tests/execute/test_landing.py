"""Batches that land together are finished together and stored in one call."""

from __future__ import annotations

import threading
import time
from contextlib import nullcontext

import pytest
from distributed import Client

import campaign.execute.driver as driver_module
from campaign.execute import ExecutionOptions, Item, _Driver
from campaign.execute.flight import Flight
from campaign.models.check import busy
from campaign.render.progress import Progress


@pytest.fixture(scope="module")
def client(scheduler_address):
    with Client(scheduler_address) as client:
        client.wait_for_workers(2)
        yield client


def test_every_batch_landing_with_others_is_finished_and_stored_once(client, monkeypatch):
    # one finished at a time, and a slow store: meanwhile, batches of a millisecond land
    monkeypatch.setattr(driver_module, "LANDED_AT_ONCE", 1)
    items = [
        Item(key=f"t{n:02d}", params={"duration_ms": 1}, seed=n, meta={"key": f"t{n:02d}"})
        for n in range(60)
    ]
    stored: list[list[dict]] = []

    def store(records):
        time.sleep(0.02)
        stored.append(records)

    options = ExecutionOptions(retries=0, batch_size=1)
    driver = _Driver(client, "busy", store, options, Progress(0, enabled=False))
    run = threading.Thread(target=driver.run, args=(items,), daemon=True)
    run.start()
    run.join(timeout=120)
    assert not run.is_alive(), "a landed batch was never finished: the run waits for it"
    records = [record for call in stored for record in call]
    assert sorted(record["key"] for record in records) == [item.key for item in items]
    for record in records:
        assert record["metrics"] == busy({"duration_ms": 1}, record["seed"])
    assert driver.outcome.ok == 60


def test_a_batch_landing_wakes_the_driver_at_once_and_an_empty_wait_ends_at_its_deadline(client):
    # the driver sleeps on as_completed's condition until its next look at the workers: a
    # landing must wake it (no notification missed between looking and sleeping), and with
    # nothing landing it wakes at the deadline it gave, not before
    flight = Flight(client, "busy", nullcontext)
    item = Item(key="t", params={"duration_ms": 300}, seed=1, meta={"key": "t"})
    worker = sorted(client.nthreads())[0]
    sent = time.monotonic()
    future = flight.send([item], worker)
    done = flight.next_done(until=sent + 60)
    waited = time.monotonic() - sent
    assert done is not None and done[0] is future, "the wait ended without the landed batch"
    assert 0.3 <= waited < 20, f"the landed batch woke the driver after {waited:.1f} s"
    assert done[1][1][0]["metrics"] == busy({"duration_ms": 300}, 1)

    slow = Item(key="s", params={"duration_ms": 3_000}, seed=2, meta={"key": "s"})
    later = flight.send([slow], worker)
    start = time.monotonic()
    assert flight.next_done(until=start + 0.5) is None
    assert 0.5 <= time.monotonic() - start < 2.5
    # and it lands (the module's cluster is left with nothing running)
    done = flight.next_done(until=start + 60)
    assert done is not None and done[0] is later and time.monotonic() - start < 20
