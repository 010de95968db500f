"""The compiled book's pieces against the plain ones they stand for: the profile in rows
(``profile_blocks``) against the same steps in one array, and the book's array steps
(``book_kernel``) against ``Profile``, over long random sequences of edits and queries."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from campaign.models.rigid import book_kernel, profile_blocks  # noqa: E402
from campaign.models.rigid.profile import Profile  # noqa: E402


def random_steps(rng, n):
    times = np.cumsum(rng.integers(1, 50, n)).astype(np.float64)
    free = rng.integers(0, 256, n).astype(np.int64)
    free[-1] = 256
    return times, free


def flat(blocks, room):
    times = np.empty(room, np.float64)
    free = np.empty(room, np.int64)
    n = profile_blocks.flatten(blocks, times, free)
    return times[:n], free[:n]


def rows_within_bounds(blocks):
    _, row_free, count, most, order, _, meta = blocks
    used = meta[0]
    sizes = [count[order[p]] for p in range(used)]
    assert sum(sizes) == meta[2]
    assert all(size <= profile_blocks.WIDE for size in sizes)
    assert used == 1 or all(size >= profile_blocks.LOW for size in sizes)
    for p in range(used):
        row = order[p]
        steps = row_free[row, : count[row]]
        assert most[row, 0] == steps.max()
        for g in range(0, count[row], profile_blocks.GROUP):
            group = steps[g : g + profile_blocks.GROUP]
            assert most[row, 1 + g // profile_blocks.GROUP] == group.max()


def cursor_index(blocks, position, offset):
    count, order = blocks[2], blocks[4]
    return sum(count[order[p]] for p in range(position)) + offset


@pytest.mark.parametrize("seed", range(4))
def test_rows_follow_the_same_edits_as_one_array(seed):
    rng = np.random.default_rng(seed)
    times, free = random_steps(rng, int(rng.integers(1, 400)))
    room = 4000
    blocks = profile_blocks.build(times, free, len(times), room)
    reference_t, reference_f = list(times), list(free)
    scratch_t = np.empty(room + 3 * profile_blocks.WIDE)
    scratch_f = np.empty(room + 3 * profile_blocks.WIDE, np.int64)
    for _ in range(3000):
        n = len(reference_t)
        at = int(rng.integers(0, n))
        length = int(rng.integers(1, min(n - at, 80) + 1))
        edited = int(rng.integers(0, length + 4)) if length < n else int(rng.integers(1, 4))
        if n - length + edited > room - 10 or n - length + edited < 1:
            continue
        # New steps: strictly between the neighbours' times, so the steps stay sorted.
        low = reference_t[at - 1] if at > 0 else reference_t[0] - 100.0
        high = reference_t[at + length] if at + length < n else reference_t[-1] + 100.0
        new_t = np.sort(rng.uniform(low, high, edited))
        new_f = rng.integers(0, 256, edited).astype(np.int64)
        position, offset = profile_blocks.locate(blocks, reference_t[at])
        assert cursor_index(blocks, position, offset) == at
        profile_blocks.replace(
            blocks, position, offset, length, new_t, new_f, edited, scratch_t, scratch_f
        )
        reference_t[at : at + length] = new_t.tolist()
        reference_f[at : at + length] = new_f.tolist()
        rows_within_bounds(blocks)
    got_t, got_f = flat(blocks, room)
    assert got_t.tolist() == reference_t
    assert got_f.tolist() == reference_f


@pytest.mark.parametrize("seed", range(3))
def test_next_with_finds_what_a_walk_step_by_step_finds(seed):
    rng = np.random.default_rng(seed)
    times, free = random_steps(rng, 700)
    blocks = profile_blocks.build(times, free, len(times), 2000)
    for _ in range(2000):
        start = int(rng.integers(0, len(times) - 1))
        width = int(rng.integers(1, 257))
        before = float(times[int(rng.integers(start, len(times)))]) + 0.5
        position, offset = profile_blocks.locate(blocks, times[start])
        position, offset = profile_blocks.next_with(blocks, position, offset, width, before)
        found = cursor_index(blocks, position, offset)
        k = start + 1
        while free[k] < width:
            k += 1
        if times[k] < before:
            assert found == k
        else:  # nothing before ``before``: it stops at or before the step found
            assert found <= k
            assert times[found] >= before or free[found] >= width


def test_locate_and_gather_name_the_steps_one_array_names():
    rng = np.random.default_rng(7)
    times, free = random_steps(rng, 500)
    blocks = profile_blocks.build(times, free, len(times), 1000)
    out_t = np.empty(600)
    out_f = np.empty(600, np.int64)
    for x in rng.uniform(times[0] - 10, times[-1] + 10, 500):
        position, offset = profile_blocks.locate(blocks, x)
        expected = max(int(np.searchsorted(times, x, side="right")) - 1, 0)
        assert cursor_index(blocks, position, offset) == expected
        past = x + rng.uniform(0, 300)
        count = profile_blocks.gather(blocks, position, offset, past, out_t, out_f)
        last = min(int(np.searchsorted(times, past, side="right")) + 1, len(times))
        assert out_t[:count].tolist() == times[expected:last].tolist()
        assert out_f[:count].tolist() == free[expected:last].tolist()


@pytest.mark.parametrize("seed", range(3))
def test_the_book_steps_on_arrays_match_the_profile(seed):
    rng = np.random.default_rng(seed)
    profile = Profile(0.0, 256)
    times = np.empty(20000)
    free = np.empty(20000, np.int64)
    times[0], free[0], n = 0.0, 256, 1
    now = 0.0
    for _ in range(3000):
        kind = rng.integers(0, 4)
        if kind == 0:
            width, duration = int(rng.integers(1, 257)), float(rng.integers(0, 500))
            here, n = book_kernel.book(times, free, n, width, duration)
            assert here == profile.book(width, duration)
        elif kind == 1 and n > 1:
            begin = float(rng.uniform(now, times[n - 1]))
            duration, width = float(rng.uniform(0, 300)), int(rng.integers(1, 20))
            if profile.most_free(begin, begin + duration) + width <= 256:
                n = book_kernel.add(times, free, n, begin, duration, width)
                profile.add(begin, duration, width)
        elif kind == 2:
            now += float(rng.integers(0, 40))
            n = book_kernel.prune(times, free, n, now)
            profile.prune(now)
        else:
            width, duration = int(rng.integers(1, 257)), float(rng.integers(0, 500))
            assert book_kernel.earliest(times, free, n, width, duration) == profile.earliest(
                width, duration
            )
        assert times[:n].tolist() == profile.times
        assert free[:n].tolist() == profile.free
