"""Conservative backfilling's fast compression compiled by numba: ``compression.compress``
on arrays (the same jobs moved to the same starts, the same spans freed), run by the compiled
book (``compiled_book``).

Two things differ from the pure-Python loop, neither in what it decides. The profile is held
in rows (``profile_blocks``): a move rewrites the row it falls in instead of shifting every
later step, and a search passes over rows and groups of steps too narrow for the job. And a
job that found no start before c bounds every later job at least as wide and as long, not
only those of its own width (a two-dimensional Fenwick tree of those bounds), so far fewer
jobs scan the profile from the first freed span on.

The pure-Python book stays the reference: tests run both (and the literal re-insertion) on
the same workloads and compare every job's start. numba compiles the kernel at its first
call in a process (cached on disk next to this file when the folder is writable, so later
processes load it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from campaign.models.rigid.book_kernel import bisect, delete_step, insert_step, sort_order
from campaign.models.rigid.profile_blocks import (
    WIDE,
    build,
    flatten,
    free_at,
    gather,
    next_with,
    replace,
    step_after,
    step_before,
    time_at,
)
from campaign.models.rigid.profile_blocks import locate as blocks_locate


@njit(cache=True)
def _behind(earliest, latest, limit, a, b, most):
    k = limit - most + 1 if most < limit else 1
    size = len(earliest)
    while k < size:
        if a < earliest[k]:
            earliest[k] = a
            if b > latest[k]:
                latest[k] = b
        elif b > latest[k]:
            latest[k] = b
        else:
            return
        k += k & -k


RANKS = 32
"""Estimate ranks of the bounds of every width and estimate."""


SAMPLE = 8 * RANKS
"""Estimates the ranks are picked from: evenly spaced among those of the jobs to check."""


@njit(cache=True)
def _estimate_ranks(durations):
    """RANKS estimates spread over those of the jobs to check, ascending. Any ascending
    estimates give the same moves (they only group the bounds), so they are picked from a
    sample: sorting every estimate at every compression cost more than the bounds saved."""
    step = max(len(durations) // SAMPLE, 1)
    count = (len(durations) + step - 1) // step
    ordered = np.empty(count, np.float64)
    for k in range(count):
        ordered[k] = durations[k * step]
    sort_order(ordered, np.zeros(count, np.int64), count)
    picked = np.empty(min(RANKS, count), np.float64)
    for k in range(len(picked)):
        picked[k] = ordered[(k * (count - 1)) // max(len(picked) - 1, 1)]
    return picked


@njit(cache=True)
def _bound(bounds, width, rank):
    """The largest bound of the jobs of width <= ``width`` and estimate rank <= ``rank``."""
    most = -np.inf
    w = width
    while w > 0:
        r = rank
        while r > 0:
            if bounds[w, r] > most:
                most = bounds[w, r]
            r &= r - 1
        w &= w - 1
    return most


@njit(cache=True)
def _bind(bounds, width, rank, clear):
    """A job of ``width`` and estimate rank ``rank`` found no start before ``clear``."""
    w = width
    while w < bounds.shape[0]:
        r = rank
        while r < bounds.shape[1]:
            if clear > bounds[w, r]:
                bounds[w, r] = clear
            r += r & -r
        w += w & -w


@njit(cache=True)
def _push(heap_at, heap_span, size, at, span):
    k = size
    while k > 0:
        parent = (k - 1) >> 1
        if heap_at[parent] <= at:
            break
        heap_at[k] = heap_at[parent]
        heap_span[k] = heap_span[parent]
        k = parent
    heap_at[k] = at
    heap_span[k] = span
    return size + 1


@njit(cache=True)
def _pop(heap_at, heap_span, size):
    """Remove the root; the new size (the root was read before)."""
    size -= 1
    at = heap_at[size]
    span = heap_span[size]
    k = 0
    while True:
        child = 2 * k + 1
        if child >= size:
            break
        if child + 1 < size and heap_at[child + 1] < heap_at[child]:
            child += 1
        if heap_at[child] >= at:
            break
        heap_at[k] = heap_at[child]
        heap_span[k] = heap_span[child]
        k = child
    if size > 0:
        heap_at[k] = at
        heap_span[k] = span
    return size


@njit(cache=True)
def compress(times, free, n, starts, widths, durations, moves, span_a, span_b, span_most, known, t):
    """``ReservationBook.compress``'s bounding of the spans, then the loop of
    ``compression.compress`` (the comments there explain each rule). Returns the profile's
    length, the number of spans kept (0: nothing to do) and their number with those freed."""
    inf = np.inf
    horizon = starts[len(starts) - 1]
    kept = 0
    for k in range(known):
        a = span_a[k]
        b = span_b[k]
        if b > t and a < horizon:
            end = b if b < horizon else horizon
            # Profile.most_free(a, end)
            m = bisect(times, 0, n, a, True) - 1
            if m < 0:
                m = 0
            most = free[m]
            m += 1
            while m < n and times[m] < end:
                if free[m] > most:
                    most = free[m]
                m += 1
            span_a[kept] = a
            span_b[kept] = b
            span_most[kept] = most
            kept += 1
    known = kept
    if known == 0:
        return n, 0, 0
    spans = known
    low = span_a[0]
    for k in range(known):
        if span_a[k] < low:
            low = span_a[k]
    first = bisect(starts, 0, len(starts), low, True)
    top = 0
    for k in range(known):
        if span_most[k] > top:
            top = span_most[k]
    limit = free[n - 1]
    size_tree = limit + 2
    blocks = build(times, free, n, len(times))
    buffer_times = np.empty(len(times) + 4, np.float64)
    buffer_free = np.empty(len(times) + 4, np.int64)
    scratch_times = np.empty(len(times) + 3 * WIDE, np.float64)
    scratch_free = np.empty(len(times) + 3 * WIDE, np.int64)
    earliest = np.full(size_tree, inf)
    latest = np.full(size_tree, t)
    passed = 0
    ahead = np.ones(len(span_a), np.bool_)
    heap_at = np.empty(len(span_a) * 2 + 1, np.float64)
    heap_span = np.empty(len(span_a) * 2 + 1, np.int64)
    heap_size = 0
    coming = inf
    for k in range(known):
        heap_size = _push(heap_at, heap_span, heap_size, span_a[k], k)
        if span_a[k] < coming:
            coming = span_a[k]
    # Per width: reach, until, seen (-1: not yet), shortest, clear, dead.
    reach_of = np.full(limit + 1, inf)
    until_of = np.full(limit + 1, t)
    seen_of = np.full(limit + 1, -1, np.int64)
    shortest_of = np.full(limit + 1, inf)
    clear_of = np.full(limit + 1, t)
    dead_of = np.full(limit + 1, inf)
    # Bounds of every width and estimate at once: a job of width w and estimate d that
    # found no start before c (its new start, or its old) tells the same of every later
    # job at least as wide and at least as long (the rule of ``clear`` above, whose proof
    # holds for any width >= w). They are kept by width and by a rank of the estimate in a
    # two-dimensional Fenwick tree of prefix maxima: a later job reads the largest c of
    # the jobs no wider and (by rank) no longer.
    ranks = _estimate_ranks(durations[first:])
    bounds = np.full((limit + 1, len(ranks) + 1), -inf)
    for position in range(first, len(starts)):
        old = starts[position]
        if old > coming:
            while heap_size > 0 and heap_at[0] < old:
                k = heap_span[0]
                heap_size = _pop(heap_at, heap_span, heap_size)
                if ahead[k]:
                    ahead[k] = False
                    passed += 1
                    _behind(earliest, latest, limit, span_a[k], span_b[k], span_most[k])
            coming = heap_at[0] if heap_size > 0 else inf
        width = widths[position]
        if width > top:
            continue
        if seen_of[width] != passed:
            reach = inf
            until = t
            k = limit - width + 1
            while k > 0:
                if earliest[k] < reach:
                    reach = earliest[k]
                if latest[k] > until:
                    until = latest[k]
                k &= k - 1
            reach_of[width] = reach
            until_of[width] = until
            seen_of[width] = passed
            if reach == inf:
                dead_of[width] = -1.0
            elif clear_of[width] >= until:
                dead_of[width] = shortest_of[width]
            else:
                dead_of[width] = inf
        duration = durations[position]
        if duration >= dead_of[width]:
            continue
        until = until_of[width]
        after = reach_of[width] - duration
        if after < t:
            after = t
        before = until if until < old else old
        if duration >= shortest_of[width]:
            clear = clear_of[width]
            if clear >= before:
                continue
            if clear > after:
                after = clear
        rank = bisect(ranks, 0, len(ranks), duration, True)  # ranks <= duration
        if width > 0 and rank > 0:
            clear = _bound(bounds, width, rank)
            if clear >= before:
                continue
            if clear > after:
                after = clear
        shortest_of[width] = duration
        # The scan for an earlier start, over the profile's rows (a row with too few free
        # processors at every step is passed over whole).
        bp, bo = blocks_locate(blocks, after)
        here = time_at(blocks, bp, bo)
        found = False
        reach = 0  # steps from here's to the first at or after end
        rows = blocks[6][0]
        while here < before:
            if free_at(blocks, bp, bo) < width:
                bp, bo = next_with(blocks, bp, bo, width, before)
                here = time_at(blocks, bp, bo)
                continue
            end = here + duration
            if end > old:
                end = old
            jp, jo = step_after(blocks, bp, bo)
            reach = 1
            fits = True
            while jp < rows and time_at(blocks, jp, jo) < end:
                if free_at(blocks, jp, jo) < width:
                    fits = False
                    break
                jp, jo = step_after(blocks, jp, jo)
                reach += 1
            if fits:
                found = True
                break
            bp, bo = step_after(blocks, jp, jo)
            here = time_at(blocks, bp, bo)
        rank = bisect(ranks, 0, len(ranks), duration, False) + 1  # the first >= duration
        if not found:
            clear_of[width] = old
            dead_of[width] = duration if old >= until else inf
            if width > 0 and rank <= len(ranks):
                _bind(bounds, width, rank, old)
            continue
        clear_of[width] = here
        if width > 0 and rank <= len(ranks):
            _bind(bounds, width, rank, here)
        dead_of[width] = duration if here >= until else inf
        starts[position] = here
        moves[position] = True
        if duration <= 0 or width <= 0:
            continue
        # The steps the move changes (from the one before ``here`` to the first after the
        # old booking's end) are edited in a buffer, then put back in their rows.
        i = 0 if bp == 0 and bo == 0 else 1
        fp, fo = step_before(blocks, bp, bo)
        length = gather(blocks, fp, fo, old + duration, buffer_times, buffer_free)
        edited, most = _move(
            buffer_times, buffer_free, length, i, i + reach, here, end, old, duration, width,
            horizon,
        )  # fmt: skip
        replace(
            blocks, fp, fo, length, buffer_times, buffer_free, edited, scratch_times,
            scratch_free,
        )  # fmt: skip
        freed_from = here + duration
        if freed_from < old:
            freed_from = old
        finish = old + duration
        if most > top:
            top = most
        # The span freed, coalesced with the last one freed here when they overlap.
        k = spans - 1
        a = span_a[k]
        b = span_b[k]
        m = span_most[k]
        if k >= known and a <= finish and freed_from <= b:
            if a > freed_from:
                a = freed_from
            if finish > b:
                b = finish
            if most > m:
                m = most
            span_a[k] = a
            span_b[k] = b
            span_most[k] = m
            if not ahead[k]:
                _behind(earliest, latest, limit, a, b, m)
                passed += 1
            else:
                heap_size = _push(heap_at, heap_span, heap_size, a, k)
                if a < coming:
                    coming = a
        else:
            heap_size = _push(heap_at, heap_span, heap_size, freed_from, spans)
            span_a[spans] = freed_from
            span_b[spans] = finish
            span_most[spans] = most
            ahead[spans] = True
            spans += 1
            if freed_from < coming:
                coming = freed_from
    return flatten(blocks, times, free), known, spans


@njit(cache=True)
def _move(times, free, n, i, j, here, end, old, duration, width, horizon):
    """Book [here, end) (j: its first step at or after end) and give back [max(here +
    duration, old), old + duration), merging equal neighbours, in the steps ``times[:n]``:
    the profile's from the one before ``here`` (if any) to the first after old + duration
    (or the end). The new length, and the most free processors in the span given back
    before the horizon. (Every index compared with n is below it unless n is the end.)"""
    # Book [here, end) (j: its first step at or after end), merging equal neighbours.
    if j == i + 1:
        count = free[i] - width
        if j == n or times[j] != end:
            if i > 0 and free[i - 1] == count:
                times[i] = end
            else:
                insert_step(times, free, n, j, end, count + width)
                free[i] = count
                n += 1
        else:
            free[i] = count
            if free[j] == count:
                delete_step(times, free, n, j)
                n -= 1
            if i > 0 and free[i - 1] == count:
                delete_step(times, free, n, i)
                n -= 1
    else:
        if j == n or times[j] != end:
            insert_step(times, free, n, j, end, free[j - 1])
            n += 1
        for k in range(i, j):
            free[k] -= width
        if j < n and free[j] == free[j - 1]:
            delete_step(times, free, n, j)
            n -= 1
        if i > 0 and free[i] == free[i - 1]:
            delete_step(times, free, n, i)
            n -= 1
    # Give back [freed_from, finish) with ``most`` its most free processors.
    freed_from = here + duration
    if freed_from < old:
        freed_from = old
    finish = old + duration
    lo = bisect(times, i, n, freed_from, False)
    if lo == n or times[lo] != freed_from:
        insert_step(times, free, n, lo, freed_from, free[lo - 1])
        n += 1
    hi = lo + 1
    if hi < n and times[hi] < finish:
        hi = bisect(times, hi + 1, n, finish, False)
    if hi == lo + 1:
        most = free[lo] + width
        if hi == n or times[hi] != finish:
            if free[lo - 1] == most:
                times[lo] = finish
            else:
                insert_step(times, free, n, hi, finish, most - width)
                n += 1
                free[lo] = most
        else:
            free[lo] = most
            if free[hi] == most:
                delete_step(times, free, n, hi)
                n -= 1
            if free[lo - 1] == most:
                delete_step(times, free, n, lo)
                n -= 1
    else:
        if hi == n or times[hi] != finish:
            insert_step(times, free, n, hi, finish, free[hi - 1])
            n += 1
        most = free[lo] + width
        free[lo] = most
        bound = finish if finish < horizon else horizon
        for k in range(lo + 1, hi):
            count = free[k] + width
            free[k] = count
            if count > most and times[k] < bound:
                most = count
        if hi < n and free[hi] == free[hi - 1]:
            delete_step(times, free, n, hi)
            n -= 1
        if free[lo] == free[lo - 1]:
            delete_step(times, free, n, lo)
            n -= 1
    return n, most
