"""Design expansion: full factorial x replicates, stable keys, seed rule with paired factors."""

from __future__ import annotations

import numpy as np

from campaign.design.tasks import Design, task_seed
from campaign.spec.load import parse_spec


def make(factors, paired=(), replicates=3, seed=11, params=None):
    return Design(
        parse_spec(
            {
                "name": "d",
                "model": "mm1",
                "params": params or {"customers": 10},
                "factors": factors,
                "paired": list(paired),
                "replicates": replicates,
                "seed": seed,
            },
        )
    )


def by_cell(design):
    return {(design.cell_label(t.cell).__repr__(), t.replicate): t for t in design.tasks()}


def test_full_factorial_times_replicates_with_unique_keys():
    design = make({"a": [1, 2, 3], "b": ["x", "y"]}, replicates=4)
    tasks = list(design.tasks())
    assert len(tasks) == 3 * 2 * 4 == design.size
    assert len({t.key for t in tasks}) == len(tasks)
    assert [t.cell for t in tasks[:5]] == [(0, 0)] * 4 + [(0, 1)]


def test_seed_follows_seedsequence_of_base_replicate_and_unpaired_levels():
    design = make({"a": [1, 2], "b": ["x", "y"]}, paired=["b"])
    for task in design.tasks():
        words = tuple(int(w) for w in design.unpaired_words[design.cells.index(task.cell)])
        expected = np.random.SeedSequence(11, spawn_key=(task.replicate, *words))
        assert task.seed == int(expected.generate_state(1, np.uint64)[0]) & ((1 << 63) - 1)
        assert task.seed == task_seed(11, task.replicate, words)


def test_paired_levels_share_seeds_unpaired_levels_do_not():
    design = make({"a": [1, 2], "strategy": ["s1", "s2", "s3"]}, paired=["strategy"])
    seeds = {}
    for task in design.tasks():
        label = design.cell_label(task.cell)
        seeds[(label["a"], label["strategy"], task.replicate)] = task.seed
    for a in (1, 2):
        for r in range(3):
            assert seeds[(a, "s1", r)] == seeds[(a, "s2", r)] == seeds[(a, "s3", r)]
    assert seeds[(1, "s1", 0)] != seeds[(2, "s1", 0)]
    assert len({seeds[(1, "s1", r)] for r in range(3)}) == 3


def test_adding_levels_and_replicates_keeps_existing_keys_and_seeds():
    small = by_cell(make({"a": [1, 2], "b": ["x"]}, replicates=2))
    large = by_cell(make({"a": [0, 1, 2, 5], "b": ["x", "z"]}, replicates=5))
    for where, task in small.items():
        assert large[where].key == task.key
        assert large[where].seed == task.seed


def test_factor_order_does_not_change_seeds_or_keys():
    one = by_cell(make({"a": [1, 2], "b": ["x", "y"]}))
    two = make({"b": ["x", "y"], "a": [1, 2]})
    for task in two.tasks():
        label = two.cell_label(task.cell)
        same = one[(repr({"a": label["a"], "b": label["b"]}), task.replicate)]
        assert (same.key, same.seed) == (task.key, task.seed)


def test_changing_a_fixed_param_or_base_seed_changes_every_key():
    base = {t.key for t in make({"a": [1, 2]}).tasks()}
    assert base.isdisjoint(t.key for t in make({"a": [1, 2]}, params={"customers": 20}).tasks())
    assert base.isdisjoint(t.key for t in make({"a": [1, 2]}, seed=12).tasks())


def test_no_factors_gives_one_cell():
    design = make({}, replicates=4)
    assert design.cells == [()]
    assert len(list(design.tasks())) == 4
