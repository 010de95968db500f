"""The reservation book's own steps compiled by numba, on arrays the compiled book keeps
between passes: the availability profile (``Profile``'s steps, on a breakpoint array with
room to grow) and the compression order (reservation starts and keys, sorted).

Each function does what the pure-Python step it names does, to the same numbers; the book
(``compiled_book.CompiledBook``) makes room before it calls one.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def bisect(values, low, high, x, right):
    """``low + np.searchsorted(values[low:high], x, side)`` ("right" when ``right``) without
    the slice: each view of an array costs two atomic reference counts, which the
    compression's inner loop felt."""
    while low < high:
        middle = (low + high) >> 1
        if values[middle] < x or (right and values[middle] == x):
            low = middle + 1
        else:
            high = middle
    return low


@njit(cache=True)
def prune(times, free, n, t):
    """``Profile.prune``: forget the steps before t; the new length."""
    if times[0] >= t:
        return n
    k = bisect(times, 0, n, t, True) - 1
    if k > 0:
        for m in range(k, n):
            times[m - k] = times[m]
            free[m - k] = free[m]
        n -= k
    times[0] = t
    return n


@njit(cache=True)
def earliest(times, free, n, width, duration):
    """``Profile.earliest``: the earliest start where ``width`` stay free for ``duration``."""
    i = 0
    while True:
        if free[i] < width:
            i += 1
            continue
        here = times[i]
        end = here + duration
        j = i + 1
        fits = True
        while j < n and times[j] < end:
            if free[j] < width:
                fits = False
                break
            j += 1
        if fits:
            return here
        i = j + 1


@njit(cache=True)
def insert_step(times, free, n, at, time, count):
    """A step (``time``, ``count``) at index ``at`` of the first ``n``."""
    for k in range(n, at, -1):
        times[k] = times[k - 1]
        free[k] = free[k - 1]
    times[at] = time
    free[at] = count


@njit(cache=True)
def delete_step(times, free, n, at):
    """Step ``at`` of the first ``n`` removed."""
    for k in range(at, n - 1):
        times[k] = times[k + 1]
        free[k] = free[k + 1]


@njit(cache=True)
def add(times, free, n, begin, duration, delta):
    """``Profile.add``: ``delta`` more free processors over [begin, begin + duration); the
    new length (at most two more steps: the caller makes room)."""
    return add_span(times, free, n, begin, begin + duration, delta)


@njit(cache=True)
def add_span(times, free, n, begin, finish, delta):
    """``Profile.add_span``: ``delta`` more free processors over [begin, finish) (clipped to
    the origin); the new length."""
    origin = times[0]
    if begin < origin:
        begin = origin
    if finish <= begin:
        return n
    first = bisect(times, 0, n, begin, False)
    if first == n or times[first] != begin:
        insert_step(times, free, n, first, begin, free[first - 1])
        n += 1
    last = bisect(times, first, n, finish, False)
    if last == n or times[last] != finish:
        insert_step(times, free, n, last, finish, free[last - 1])
        n += 1
    for k in range(first, last):
        free[k] += delta
    if last < n and free[last] == free[last - 1]:
        delete_step(times, free, n, last)
        n -= 1
    if first > 0 and free[first] == free[first - 1]:
        delete_step(times, free, n, first)
        n -= 1
    return n


@njit(cache=True)
def book(times, free, n, width, duration):
    """``Profile.book``: the earliest start of ``width`` for ``duration``, booked there; the
    start and the new length."""
    here = earliest(times, free, n, width, duration)
    return here, add(times, free, n, here, duration, -width)


@njit(cache=True)
def most(free, n):
    """The most free processors of any step."""
    top = free[0]
    for k in range(1, n):
        if free[k] > top:
            top = free[k]
    return top


@njit(cache=True)
def insort(starts, keys, q, start, key):
    """Insert (start, key) into the first ``q`` entries, sorted by (start, key); the new
    count (the caller makes room)."""
    at = bisect(starts, 0, q, start, False)
    while at < q and starts[at] == start and keys[at] < key:
        at += 1
    for k in range(q, at, -1):
        starts[k] = starts[k - 1]
        keys[k] = keys[k - 1]
    starts[at] = start
    keys[at] = key
    return q + 1


@njit(cache=True)
def _before(start, key, other_start, other_key):
    """Whether (start, key) sorts before (or as) (other_start, other_key)."""
    return start < other_start or (start == other_start and key <= other_key)


@njit(cache=True)
def _merge(
    first_starts,
    first_keys,
    a,
    a_end,
    second_starts,
    second_keys,
    b,
    b_end,
    out_starts,
    out_keys,
    k,
):
    """Merge the sorted runs [a, a_end) of the first arrays and [b, b_end) of the second
    into ``out_*`` from k on (ties: the first's entry first)."""
    while a < a_end or b < b_end:
        if b >= b_end or (
            a < a_end and _before(first_starts[a], first_keys[a], second_starts[b], second_keys[b])
        ):
            out_starts[k] = first_starts[a]
            out_keys[k] = first_keys[a]
            a += 1
        else:
            out_starts[k] = second_starts[b]
            out_keys[k] = second_keys[b]
            b += 1
        k += 1


@njit(cache=True)
def sort_order(starts, keys, q):
    """Sort the first ``q`` entries by (start, key): a merge sort, bottom up (numpy's sorts
    cost seconds more to compile on every machine)."""
    source_starts, source_keys = starts, keys
    target_starts = np.empty(q, np.float64)
    target_keys = np.empty(q, keys.dtype)
    in_place = True
    width = 1
    while width < q:
        for low in range(0, q, 2 * width):
            middle = min(low + width, q)
            high = min(low + 2 * width, q)
            _merge(
                source_starts, source_keys, low, middle, source_starts, source_keys, middle,
                high, target_starts, target_keys, low,
            )  # fmt: skip
        source_starts, target_starts = target_starts, source_starts
        source_keys, target_keys = target_keys, source_keys
        in_place = not in_place
        width *= 2
    if not in_place:
        for k in range(q):  # a loop: a slice assignment compiles seconds longer
            starts[k] = source_starts[k]
            keys[k] = source_keys[k]


@njit(cache=True)
def to_front(first, second, begin, end):
    """Move entries ``begin`` to ``end`` of two arrays to their front; their number."""
    for k in range(begin, end):
        first[k - begin] = first[k]
        second[k - begin] = second[k]
    return end - begin


@njit(cache=True)
def settle(starts, keys, q, moves, reservation):
    """After a compression moved the entries flagged in ``moves`` to earlier starts: their
    keys' reservations, and the order (start, key) restored: the others are still sorted;
    the moved ones are sorted and merged in."""
    count = 0
    for p in range(q):
        if moves[p]:
            reservation[keys[p]] = starts[p]
            count += 1
    if count == 0:
        return
    moved_starts = np.empty(count, np.float64)
    moved_keys = np.empty(count, np.int64)
    stay_starts = np.empty(q - count, np.float64)
    stay_keys = np.empty(q - count, np.int64)
    a = 0
    b = 0
    for p in range(q):
        if moves[p]:
            moved_starts[a] = starts[p]
            moved_keys[a] = keys[p]
            a += 1
        else:
            stay_starts[b] = starts[p]
            stay_keys[b] = keys[p]
            b += 1
    _sort_nearly_sorted(moved_starts, moved_keys, count)
    _merge(
        moved_starts, moved_keys, 0, count, stay_starts, stay_keys, 0, q - count, starts, keys, 0
    )


@njit(cache=True)
def _sort_nearly_sorted(starts, keys, q):
    """``sort_order``, by insertion while few entries are out of place (the moves of a
    compression mostly keep their order), else by ``sort_order``."""
    shifted = 0
    for p in range(1, q):
        start = starts[p]
        key = keys[p]
        k = p
        while k > 0 and not _before(starts[k - 1], keys[k - 1], start, key):
            starts[k] = starts[k - 1]
            keys[k] = keys[k - 1]
            k -= 1
        starts[k] = start
        keys[k] = key
        shifted += p - k
        if shifted > 8 * q:
            sort_order(starts, keys, q)
            return


@njit(cache=True)
def reinsert(times, free, n, starts, keys, q, size, estimate, reservation):
    """The literal compression: each entry of the order in turn at its earliest start given
    the profile (the running jobs alone on entry) and the entries before it; the profile's
    new length. The order is sorted again and ``reservation`` (per key) updated."""
    for p in range(q):
        key = keys[p]
        width = size[key]
        duration = estimate[key]
        here = earliest(times, free, n, width, duration)
        n = add(times, free, n, here, duration, -width)
        reservation[key] = here
        starts[p] = here
    sort_order(starts, keys, q)
    return n
