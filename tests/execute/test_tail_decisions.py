"""Tail decisions from a snapshot of a dispatch, without a cluster."""

import math

from campaign.execute import (
    STRAGGLER_FACTOR,
    Copy,
    Item,
    Rescue,
    Steal,
    TailSnapshot,
    tail_decisions,
)
from campaign.execute.tail import Standing, tail_questions


def items(count, prefix="t"):
    """Tasks each with one copy in flight (they were sent once)."""
    return [Item(f"{prefix}{n}", {}, n, {}, copies=1) for n in range(count)]


def test_an_idle_worker_steals_the_second_half_of_the_unstarted_tasks():
    batch = items(11)
    snapshot = TailSnapshot({"b": batch}, {"b": ("w1", 0, 0.1)}, ["w2"], 1.0)
    # tasks 1..10 have not started: the second half (6..10) moves to w2
    assert tail_decisions(snapshot) == [Steal("w2", "b", "w1", tuple(batch[6:]))]


def test_idle_workers_stealing_from_one_batch_share_its_unstarted_tasks_with_its_worker():
    batch = items(11)
    snapshot = TailSnapshot({"b": batch}, {"b": ("w1", 0, 0.1)}, ["w2", "w3"], 1.0)
    # tasks 1..10 unstarted, three to share them: w1 keeps 1..3 (it also ends task 0),
    # w2 takes 4..7, w3 8..10
    assert tail_decisions(snapshot) == [
        Steal("w2", "b", "w1", tuple(batch[4:8])),
        Steal("w3", "b", "w1", tuple(batch[8:])),
    ]


def test_six_idle_workers_and_one_long_batch_all_end_together():
    batch = items(37)
    idle = [f"i{n}" for n in range(6)]
    snapshot = TailSnapshot({"b": batch}, {"b": ("w", 0, 0.1)}, idle, 1.0)
    # 36 unstarted over seven: w keeps 1..5, the first thief 6 tasks, the others 5 each
    # (taking half of what is left one thief after another gave 18, 9, 5, 2, 1, 1)
    bounds = [6, 12, 17, 22, 27, 32, 37]
    assert tail_decisions(snapshot) == [
        Steal(to, "b", "w", tuple(batch[start:end]))
        for to, start, end in zip(idle, bounds[:-1], bounds[1:], strict=True)
    ]


def test_each_idle_worker_joins_the_batch_where_its_share_is_largest():
    a, b = items(13, "a"), items(8, "b")
    running = {"a": ("wa", 0, 0.1), "b": ("wb", 0, 0.1)}
    snapshot = TailSnapshot({"a": a, "b": b}, running, ["i1", "i2", "i3"], 1.0)
    # a has 12 unstarted, b 7: i1 joins a (12 / 2 = 6 against 7 / 2), i2 a (12 / 3 = 4 against
    # 3.5), i3 b (12 / 4 = 3 against 3.5); wa keeps a1..a4, wb keeps b1..b3
    assert tail_decisions(snapshot) == [
        Steal("i1", "a", "wa", tuple(a[5:9])),
        Steal("i2", "a", "wa", tuple(a[9:])),
        Steal("i3", "b", "wb", tuple(b[4:])),
    ]


def test_no_more_thieves_join_a_batch_than_it_has_unstarted_tasks():
    batch = items(3)
    snapshot = TailSnapshot({"b": batch}, {"b": ("w1", 0, 0.1)}, ["w2", "w3", "w4"], 1.0)
    # t1 and t2 unstarted: two thieves take one each, w1 ends t0; w4 gets nothing
    assert tail_decisions(snapshot) == [
        Steal("w2", "b", "w1", (batch[1],)),
        Steal("w3", "b", "w1", (batch[2],)),
    ]


def test_the_batch_with_most_unstarted_tasks_is_stolen_from():
    short, long = items(4, "s"), items(6, "l")
    running = {"s": ("w1", 0, 0.1), "l": ("w2", 1, 0.1)}
    snapshot = TailSnapshot({"s": short, "l": long}, running, ["w3"], 1.0)
    # s has 3 unstarted (s1..s3), l has 4 (l2..l5): w3 takes l4, l5
    assert tail_decisions(snapshot) == [Steal("w3", "l", "w2", (long[4], long[5]))]


def test_with_no_unstarted_task_the_straggler_is_copied():
    slow, fast = items(1, "s"), items(1, "f")
    mean = 2.0
    running = {"s": ("w1", 0, STRAGGLER_FACTOR * mean + 0.5), "f": ("w2", 0, 1.0)}
    snapshot = TailSnapshot({"s": slow, "f": fast}, running, ["w3", "w4"], mean)
    # the straggler gets one copy; then nothing is left for w4
    assert tail_decisions(snapshot) == [Copy("w3", slow[0])]


def test_a_task_at_the_straggler_limit_is_not_copied():
    batch = items(1)
    snapshot = TailSnapshot({"b": batch}, {"b": ("w1", 0, STRAGGLER_FACTOR * 2.0)}, ["w2"], 2.0)
    assert tail_decisions(snapshot) == []


def test_before_any_task_finished_nothing_is_a_straggler():
    batch = items(1)
    snapshot = TailSnapshot({"b": batch}, {"b": ("w1", 0, 1e9)}, ["w2"], math.inf)
    assert tail_decisions(snapshot) == []


def test_a_task_that_died_with_a_worker_is_not_copied():
    batch = items(1)
    batch[0].suspect = True
    snapshot = TailSnapshot({"b": batch}, {"b": ("w1", 0, 100.0)}, ["w2"], 1.0)
    assert tail_decisions(snapshot) == []


def test_done_or_copied_tasks_are_not_stolen():
    batch = items(5)
    batch[3].done = True
    batch[4].copies = 2
    snapshot = TailSnapshot({"b": batch}, {"b": ("w1", 0, 0.1)}, ["w2"], 1.0)
    # unstarted with one copy: t1, t2; the second half is t2
    assert tail_decisions(snapshot) == [Steal("w2", "b", "w1", (batch[2],))]


def test_a_batch_no_worker_reports_running_is_left_alone():
    batch = items(11)
    snapshot = TailSnapshot({"b": batch}, {}, ["w2"], 1.0)
    assert tail_decisions(snapshot) == []


def test_with_no_idle_worker_nothing_is_decided():
    batch = items(11)
    snapshot = TailSnapshot({"b": batch}, {"b": ("w1", 0, 100.0)}, [], 1.0)
    assert tail_decisions(snapshot) == []


def test_every_unfinished_task_of_a_silent_workers_batch_is_copied_before_any_steal():
    silent, busy = items(5, "s"), items(7, "b")
    silent[0].done = True  # stored before its worker went silent
    silent[3].suspect = True  # died with a worker: it runs alone, never copied
    running = {"b": ("w2", 0, 0.1)}  # the silent worker w1 reported nothing
    snapshot = TailSnapshot(
        {"s": silent, "b": busy}, running, ["w3", "w4"], 1.0, silent=frozenset({"s"})
    )
    # w3 copies what w1 may never finish; w4 then steals from the batch that answers
    assert tail_decisions(snapshot) == [
        Rescue("w3", "s", (silent[1], silent[2], silent[4])),
        Steal("w4", "b", "w2", tuple(busy[4:])),
    ]


def test_a_silent_batch_already_copied_is_not_copied_again():
    silent = items(3, "s")
    for item in silent:
        item.copies = 2
    snapshot = TailSnapshot({"s": silent}, {}, ["w2"], 1.0, silent=frozenset({"s"}))
    assert tail_decisions(snapshot) == []


def test_a_batch_waiting_on_its_worker_has_every_task_to_steal():
    batch = items(8)
    snapshot = TailSnapshot({"b": batch}, {"b": ("w1", -1, 0.0)}, ["w2"], 1.0)
    assert tail_decisions(snapshot) == [Steal("w2", "b", "w1", tuple(batch[4:]))]


def test_idle_slots_are_asked_about_the_batches_with_most_unstarted_tasks_then_late_ones():
    now, mean = 100.0, 1.0
    standings = [
        Standing("running", "w1", 10, since=96.5, index=0),  # at task 3: 6 unstarted
        Standing("waiting", "w2", 4, since=None),  # none started: 4 unstarted
        Standing("ending", "w3", 5, since=96.0, index=0),  # at its last task, on time
        Standing("late", "w4", 2, since=90.0, index=1),  # should have ended at 91
        Standing("later", "w5", 1, since=80.0, index=0),  # should have ended at 81
    ]
    asked = tail_questions(standings, 4, mean, now, {})
    assert [s.key for s in asked] == ["running", "waiting", "later", "late"]
    # one idle slot: one question; a late batch asked about too recently is left out
    assert [s.key for s in tail_questions(standings, 1, mean, now, {})] == ["running"]
    recent = {"later": 101.0}
    assert [s.key for s in tail_questions(standings, 4, mean, now, recent)][2:] == ["late"]
    assert tail_questions(standings, 0, mean, now, {}) == []


def test_a_batch_is_late_only_past_what_a_straggler_would_add():
    # a straggler runs STRAGGLER_FACTOR times the mean: less than that past the end is not late
    mean = 1.0
    limit = (STRAGGLER_FACTOR - 1) * mean
    on_time = Standing("b", "w1", 2, since=0.0, index=0)  # ends at 2.0
    assert tail_questions([on_time], 1, mean, 2.0 + limit, {}) == []
    assert tail_questions([on_time], 1, mean, 2.0 + limit + 0.1, {}) == [on_time]


def test_before_any_task_finished_a_running_batch_is_taken_to_run_its_first_task():
    batch = Standing("b", "w1", 11, since=0.0, index=0)
    assert batch.unstarted(1e6, math.inf) == 10
    assert tail_questions([batch], 1, math.inf, 1e6, {}) == [batch]
