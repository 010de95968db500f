"""Placement choices from what the driver knows of the workers, without a cluster."""

from campaign.execute.placement import group_for, least_loaded, to_keep_free


def test_the_least_loaded_worker_per_thread_takes_the_next_batch_ties_by_name():
    threads = {"b": 2, "a": 2, "c": 1}
    assert least_loaded(threads, {"a": 2, "b": 1, "c": 1}) == "b"  # 0.5 < 1.0
    assert least_loaded(threads, {"a": 1, "b": 1}) == "c"  # c has none in flight
    assert least_loaded(threads, {"c": 1}) == "a"  # a and b tie at 0: by name


def test_a_worker_keeps_to_its_own_group_while_it_has_tasks():
    sizes = {"x": 0, "y": 3, "z": 9}
    assert group_for(["x", "y"], {"x", "y", "z"}, ["y", "z"], sizes.get) == ("y", False)


def test_a_worker_whose_groups_are_exhausted_takes_one_nobody_has_then_the_largest():
    sizes = {"x": 0, "y": 3, "z": 9, "w": 1}
    assert group_for(["x"], {"x", "y", "z"}, ["y", "z", "w"], sizes.get) == ("w", True)
    assert group_for(["x"], {"x", "y", "z", "w"}, ["y", "z", "w"], sizes.get) == ("z", True)


def test_workers_kept_free_for_lone_tasks_are_the_least_busy_not_already_kept():
    workers = ["a", "b", "c", "d"]
    sent_to = {"a": 3, "b": 1, "c": 1, "d": 0}
    assert to_keep_free(workers, {"d"}, {"c": "k"}, sent_to, 2) == ["b", "a"]
    assert to_keep_free(workers, set(), {}, sent_to, 1) == ["d"]
    assert to_keep_free(workers, set(), {}, sent_to, 9) == ["d", "b", "c", "a"]
