"""Worker-death decisions from what the driver knows of a death, without a cluster."""

from campaign.execute import Item
from campaign.execute.deaths import (
    Charge,
    Death,
    DiedWith,
    Moved,
    Requeue,
    SendAgain,
    Split,
    charged_result,
    death_record,
    died_with,
    resend_parts,
    stale_batch,
)


def items(count):
    return [Item(f"t{n}", {}, n, {}) for n in range(count)]


def test_a_batch_that_died_with_its_worker_is_split_in_two_halves_none_charged():
    batch = items(5)
    death = Death(frozenset({"b", "other"}), expected=False)
    decision = died_with("b", batch, batch, death, ended=False, isolated=False)
    assert decision == Split((tuple(batch[:2]), tuple(batch[2:])))


def test_one_task_left_of_a_dead_batch_runs_alone_uncharged():
    batch = items(3)
    death = Death(frozenset({"b"}), expected=False)
    assert died_with("b", batch, batch[2:], death, False, False) == Split(((batch[2],),))


def test_a_task_alone_on_its_worker_when_it_died_is_charged():
    batch = items(1)
    death = Death(frozenset({"b"}), expected=False)
    assert died_with("b", batch, batch, death, False, False) == Charge(batch[0])
    # the record names another task too: it did not run alone, so it is not charged
    shared = Death(frozenset({"b", "c"}), expected=False)
    assert died_with("b", batch, batch, shared, False, True) == Split(((batch[0],),))


def test_without_a_record_the_drivers_own_isolation_decides():
    batch = items(1)
    assert died_with("b", batch, batch, None, False, isolated=True) == Charge(batch[0])
    assert died_with("b", batch, batch, None, False, isolated=False) == Split(((batch[0],),))


def test_a_worker_ended_by_the_driver_or_leaving_on_purpose_says_nothing_of_its_tasks():
    batch = items(1)
    alone = Death(frozenset({"b"}), expected=False)
    assert died_with("b", batch, batch, alone, True, True) == SendAgain((batch[0],))
    left = Death(frozenset({"b"}), expected=True)
    assert died_with("b", batch, batch, left, False, True) == SendAgain((batch[0],))


def test_nothing_is_done_when_every_task_of_the_batch_finished_elsewhere():
    batch = items(2)
    assert died_with("b", batch, [], None, False, False) is None


def test_the_record_of_a_death_reads_the_removal_and_a_closing_before_it():
    died = [(1.0, {"action": "remove-worker", "processing-tasks": ["b", "c"]})]
    assert death_record(died) == Death(frozenset({"b", "c"}), expected=False)
    retired = [(1.0, {"action": "remove-worker", "processing-tasks": [], "expected": True})]
    assert death_record(retired) == Death(frozenset(), expected=True)
    closed = [(0.5, {"action": "closing-worker"}), *died]
    assert death_record(closed) == Death(frozenset({"b", "c"}), expected=True)
    assert death_record([(1.0, {"action": "add-worker"}), (2.0, "text")]) is None


def test_a_task_charged_twice_fails_saying_so():
    assert charged_result(1)["error"] == (
        "KilledWorker: the worker process died while running this task alone, once "
        "(the task ends its process: os._exit, a crash, memory)"
    )
    assert "alone, 2 times (" in charged_result(2)["error"]
    assert (charged_result(2)["status"], charged_result(2)["elapsed"]) == ("failed", 0.0)


def test_a_batch_on_a_gone_worker_moved_requeued_or_died_with_it():
    held = Death(frozenset({"b"}), expected=False)
    assert stale_batch("b", False, {"b": "w2"}, held) == Moved("w2")
    # a batch that may run only on its worker is never taken as moved
    assert stale_batch("b", True, {"b": "w2"}, held) == DiedWith()
    assert stale_batch("c", False, {}, held) == Requeue()
    assert stale_batch("b", False, {}, held) == DiedWith()
    assert stale_batch("b", False, {}, None) == DiedWith()


def test_tasks_sent_again_keep_those_that_died_with_a_worker_together():
    rest = items(4)
    rest[1].suspect = rest[3].suspect = True
    assert resend_parts(rest) == (((rest[1], rest[3]),), [rest[0], rest[2]])
    assert resend_parts(rest[:1]) == ((), [rest[0]])
