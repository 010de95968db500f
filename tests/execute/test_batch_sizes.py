"""Batch sizes and batches in flight from measured durations and the number of slots."""

from campaign.execute import BATCHES_PER_WORKER, BatchSizer
from campaign.execute.batching import MAX_BATCHES_PER_SECOND
from campaign.execute.shell import worker_slots


def measured(slots, mean, count=10):
    sizer = BatchSizer(slots)
    sizer.observe([mean] * count)
    return sizer


def test_before_any_duration_is_known_one_task_goes_to_each_slot():
    sizer = BatchSizer(64)
    assert sizer.size(10_000) == 1
    assert sizer.in_flight() == 64  # not two per slot: sizes are known once one lands
    sizer.observe([0.05])
    assert sizer.in_flight() == 64 * BATCHES_PER_WORKER


def test_up_to_500_slots_a_batch_runs_about_five_seconds():
    assert measured(8, 0.05).size(100_000) == 100  # 5 s / 50 ms
    assert measured(8, 0.25).size(100_000) == 20
    assert measured(1, 6.0).size(100_000) == 1  # a task longer than the target goes alone
    # as many tasks a batch on 8 slots as on 500: the driver's cost per task is the same
    assert [measured(slots, 0.05).size(1_000_000) for slots in (8, 64, 250, 500)] == [100] * 4


def test_on_many_slots_batches_run_longer_so_that_no_more_than_a_hundred_land_a_second():
    assert MAX_BATCHES_PER_SECOND == 100
    # 1,024 slots: batches of 10.24 s, 204 tasks of 50 ms; 1,024 slots / 10.24 s = 100 a second
    assert measured(1024, 0.05).size(1_000_000) == 204
    assert measured(512, 0.05).size(1_000_000) == 102


def test_the_last_round_shares_what_is_left_equally_instead_of_ever_smaller_batches():
    sizer = measured(4, 0.5)  # batches of 10 tasks; a round is 4 slots x 2 = 8 batches
    assert sizer.size(81) == 10  # more than a round of full batches is left
    assert sizer.size(80) == 10  # exactly a round: 80 / 8
    # the round's size holds while the round goes out, however little is left
    assert [sizer.size(left) for left in (70, 60, 50, 40, 30, 20, 10)] == [10] * 7
    sizer = measured(4, 0.5)
    assert sizer.size(41) == 6  # 41 left: 8 batches of ceil(41 / 8) = 6
    assert [sizer.size(left) for left in (35, 29, 23, 17, 11, 5)] == [6, 6, 6, 6, 6, 5]


def test_a_fixed_batch_size_is_kept_from_the_start():
    sizer = BatchSizer(16, fixed=3)
    assert sizer.size(100) == 3 and sizer.size(2) == 2
    assert sizer.in_flight() == 16 * BATCHES_PER_WORKER


def test_a_worker_runs_as_many_batches_at_once_as_its_threads_or_what_tasks_ask_allows():
    threads = {"a": 8, "b": 8, "c": 2}
    assert worker_slots(threads, {}, None) == threads
    held = {"a": {"cores": 8}, "b": {"cores": 3}, "c": {"cores": 16}}
    # each task asks 2 cores: a runs 4 at once, b 1, c 2 (its threads); none fits nowhere
    assert worker_slots(threads, held, {"cores": 2}) == {"a": 4, "b": 1, "c": 2}
    assert worker_slots(threads, held, {"cores": 4}) == {"a": 2, "c": 2}  # b cannot hold one
