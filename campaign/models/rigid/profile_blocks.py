"""An availability profile's steps in blocks, for the compiled compression: the steps in
order, cut into blocks of 16 to 64 steps, each with its most free processors.

On a saturated queue the profile has thousands of steps and a compression moves hundreds of
reservations per pass. In one array, each move that adds or drops a breakpoint shifts every
later step, and each search for an earlier start walks one step at a time over the steps
with too few free processors: both grow with the whole profile. In blocks, a move rewrites
its own block (or the few it spans), and the search skips a block whose most free
processors are too few for the job.

The blocks are ``(times, free, count, most, order, spare, meta)``: rows of breakpoints and
free counts, each row's number of steps, its most free processors (``most[row, 0]``) and
those of each group of GROUP steps (``most[row, 1 + g]``), the rows in time order,
the rows not in use, and ``meta`` = [rows in use, spare rows, steps]. A step is named by a
cursor (position in ``order``, offset in its row); every row in use holds at least one step,
and all but a lone row at least ``LOW``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

WIDE = 64
"""Steps a row holds at most."""
FILL = 48
"""Steps per row when rows are cut anew."""
LOW = 16
"""Steps a row holds at least (unless it is the only one)."""
GROUP = 8
"""Steps per group: a row keeps the most free processors of each group of its steps too."""


@njit(cache=True)
def build(times, free, n, room):
    """The blocks of the steps ``times[:n]``, ``free[:n]``, with rows for up to ``room``
    steps in all."""
    rows = room // LOW + 4
    row_times = np.empty((rows, WIDE), np.float64)
    row_free = np.empty((rows, WIDE), np.int64)
    count = np.zeros(rows, np.int64)
    most = np.zeros((rows, 1 + WIDE // GROUP), np.int64)
    order = np.empty(rows, np.int64)
    spare = np.empty(rows, np.int64)
    meta = np.zeros(3, np.int64)
    used = (n + FILL - 1) // FILL if n > 0 else 1
    _cut(row_times, row_free, count, most, order, 0, np.arange(used), times, free, n)
    for k in range(rows - used):
        spare[k] = rows - 1 - k
    meta[0] = used
    meta[1] = rows - used
    meta[2] = n
    return row_times, row_free, count, most, order, spare, meta


@njit(cache=True)
def _cut(row_times, row_free, count, most, order, at, ids, times, free, total):
    """Cut the steps ``times[:total]`` into ``len(ids)`` rows of about equal size, the
    rows ``ids`` in turn, put in ``order`` from position ``at``."""
    rows = len(ids)
    k = 0
    for r in range(rows):
        size = total // rows + (1 if r < total % rows else 0)
        row = ids[r]
        for m in range(size):
            row_times[row, m] = times[k + m]
            row_free[row, m] = free[k + m]
        count[row] = size
        _measure(row_free, count, most, row)
        order[at + r] = row
        k += size


@njit(cache=True)
def flatten(blocks, times, free):
    """Write the steps back to ``times`` and ``free`` (room for them all); their number."""
    row_times, row_free, count, _, order, _, meta = blocks
    k = 0
    for position in range(meta[0]):
        row = order[position]
        size = count[row]
        for m in range(size):  # a loop: a slice assignment compiles seconds longer
            times[k + m] = row_times[row, m]
            free[k + m] = row_free[row, m]
        k += size
    return k


@njit(cache=True)
def locate(blocks, x):
    """The cursor of the last step starting at or before x (the first step if none)."""
    row_times, _, count, _, order, _, meta = blocks
    low = 0
    high = meta[0]
    while high - low > 1:
        middle = (low + high) >> 1
        if row_times[order[middle], 0] <= x:
            low = middle
        else:
            high = middle
    row = order[low]
    offset = 0
    high = count[row]
    while high - offset > 1:  # the last step at or before x (no slice: see bisect)
        middle = (offset + high) >> 1
        if row_times[row, middle] <= x:
            offset = middle
        else:
            high = middle
    return low, offset


@njit(cache=True)
def step_after(blocks, position, offset):
    """The next step's cursor (position = rows in use: past the last step)."""
    count = blocks[2]
    order = blocks[4]
    if offset + 1 < count[order[position]]:
        return position, offset + 1
    return position + 1, 0


@njit(cache=True)
def next_with(blocks, position, offset, width, before):
    """From the step after the cursor's on, the first step with ``width`` free, or the first
    step of a row starting at or after ``before`` (a row whose most free processors are
    too few is passed over whole); the last step must have ``width`` free."""
    row_times, row_free, count, most, order, _, _ = blocks
    offset += 1
    row = order[position]
    while True:
        if offset >= count[row]:
            position += 1
            offset = 0
            row = order[position]
            if row_times[row, 0] >= before:
                return position, 0
            if most[row, 0] < width:
                offset = count[row]
                continue
        if offset % GROUP == 0 and most[row, 1 + offset // GROUP] < width:
            offset += GROUP
            continue
        if row_free[row, offset] >= width:
            return position, offset
        offset += 1


@njit(cache=True)
def gather(blocks, position, offset, past, out_times, out_free):
    """Copy the steps from the cursor's through the first starting after ``past`` (or to
    the last) into ``out_*``; their number."""
    row_times, row_free, count, _, order, _, meta = blocks
    k = 0
    used = meta[0]
    while position < used:
        row = order[position]
        while offset < count[row]:
            at = row_times[row, offset]
            out_times[k] = at
            out_free[k] = row_free[row, offset]
            k += 1
            if at > past:
                return k
            offset += 1
        position += 1
        offset = 0
    return k


@njit(cache=True)
def replace(blocks, position, offset, length, new_times, new_free, edited, scratch_t, scratch_f):
    """Put the ``edited`` steps of ``new_*`` in place of the ``length`` steps from the
    cursor's on; the rows they touch are cut anew (with a neighbour when too few steps
    would be left), so every row keeps LOW to WIDE steps."""
    row_times, row_free, count, most, order, spare, meta = blocks
    used = meta[0]
    # The rows from ``first`` to ``last`` (positions) hold the old steps.
    last = position
    left = offset + length  # steps from the first row's start to the old steps' end
    while left > count[order[last]]:
        left -= count[order[last]]
        last += 1
    first = position
    if first == last:  # one row, still between its bounds: rewritten in place
        row = order[first]
        size = count[row] + edited - length
        if size < WIDE and (size >= LOW or used == 1):
            _rewrite(
                row_times, row_free, count, most, row, offset, length, new_times, new_free, edited
            )
            meta[2] += edited - length
            return
    k = 0
    for m in range(offset):
        scratch_t[k] = row_times[order[first], m]
        scratch_f[k] = row_free[order[first], m]
        k += 1
    for m in range(edited):
        scratch_t[k] = new_times[m]
        scratch_f[k] = new_free[m]
        k += 1
    tail_row = order[last]
    for m in range(left, count[tail_row]):
        scratch_t[k] = row_times[tail_row, m]
        scratch_f[k] = row_free[tail_row, m]
        k += 1
    if k < LOW and used > last - first + 1:
        # Too few: take in the next row (or the one before, at the end).
        if last + 1 < used:
            last += 1
            row = order[last]
            for m in range(count[row]):
                scratch_t[k] = row_times[row, m]
                scratch_f[k] = row_free[row, m]
                k += 1
        else:
            first -= 1
            row = order[first]
            size = count[row]
            for m in range(k - 1, -1, -1):
                scratch_t[m + size] = scratch_t[m]
                scratch_f[m + size] = scratch_f[m]
            for m in range(size):
                scratch_t[m] = row_times[row, m]
                scratch_f[m] = row_free[row, m]
            k += size
    old_rows = last - first + 1
    new_rows = (k + FILL - 1) // FILL if k > 0 else 1
    # Free the old rows, shift the later positions, then cut the steps into new rows.
    free_rows = meta[1]
    for p in range(first, last + 1):
        spare[free_rows] = order[p]
        free_rows += 1
    shift = new_rows - old_rows
    if shift > 0:
        for p in range(used - 1, last, -1):
            order[p + shift] = order[p]
    elif shift < 0:
        for p in range(last + 1, used):
            order[p + shift] = order[p]
    ids = np.empty(new_rows, np.int64)
    for r in range(new_rows):
        free_rows -= 1
        ids[r] = spare[free_rows]
    meta[1] = free_rows
    meta[0] = used + shift
    meta[2] += edited - length
    _cut(row_times, row_free, count, most, order, first, ids, scratch_t, scratch_f, k)


@njit(cache=True)
def _rewrite(row_times, row_free, count, most, row, offset, length, new_times, new_free, edited):
    """In one row, the ``edited`` new steps in place of ``length`` from ``offset``: the
    steps after them shift within the row, and the groups from the edit on are measured
    again."""
    size = count[row]
    shift = edited - length
    if shift > 0:
        for m in range(size - 1, offset + length - 1, -1):
            row_times[row, m + shift] = row_times[row, m]
            row_free[row, m + shift] = row_free[row, m]
    elif shift < 0:
        for m in range(offset + length, size):
            row_times[row, m + shift] = row_times[row, m]
            row_free[row, m + shift] = row_free[row, m]
    for m in range(edited):
        row_times[row, offset + m] = new_times[m]
        row_free[row, offset + m] = new_free[m]
    size += shift
    count[row] = size
    first_group = offset // GROUP
    for g in range(first_group * GROUP, size, GROUP):
        group_top = row_free[row, g]
        for m in range(g + 1, min(g + GROUP, size)):
            if row_free[row, m] > group_top:
                group_top = row_free[row, m]
        most[row, 1 + g // GROUP] = group_top
    top = most[row, 1]
    for g in range(1, (size + GROUP - 1) // GROUP):
        if most[row, 1 + g] > top:
            top = most[row, 1 + g]
    most[row, 0] = top


@njit(cache=True)
def _measure(row_free, count, most, row):
    """The most free processors of ``row`` and of each of its groups."""
    size = count[row]
    top = row_free[row, 0]
    for g in range(0, size, GROUP):
        group_top = row_free[row, g]
        for m in range(g + 1, min(g + GROUP, size)):
            if row_free[row, m] > group_top:
                group_top = row_free[row, m]
        most[row, 1 + g // GROUP] = group_top
        if group_top > top:
            top = group_top
    most[row, 0] = top


@njit(cache=True)
def step_before(blocks, position, offset):
    """The previous step's cursor (the cursor itself for the first step)."""
    if offset > 0:
        return position, offset - 1
    if position == 0:
        return 0, 0
    return position - 1, blocks[2][blocks[4][position - 1]] - 1


@njit(cache=True)
def time_at(blocks, position, offset):
    return blocks[0][blocks[4][position], offset]


@njit(cache=True)
def free_at(blocks, position, offset):
    return blocks[1][blocks[4][position], offset]


@njit(cache=True)
def last_free(blocks):
    """The free processors of the last step (every processor: nothing is booked forever)."""
    row = blocks[4][blocks[6][0] - 1]
    return blocks[1][row, blocks[2][row] - 1]
