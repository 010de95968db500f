"""Conservative backfilling's fast compression: the same reservations as re-inserting every
queued job in order, with the jobs that provably cannot move skipped.

One function, with the profile's search for an earlier start and the move of a booking
written inline: on a long queue it checks hundreds of reservations per pass and moves tens,
mostly in cascades of equal jobs each moving up a little (its new booking's end and the end
of the span it frees then replace breakpoints in place), so every call and list shift saved
per job counts. The literal compression in ``reservations.py``
(``PolicyOptions(reference=True)``) is the reference it is checked against.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from heapq import heapify, heappop, heappush

from campaign.models.rigid.profile import Profile

_LAST = float("inf")
"""Sorts after every key: (t, _LAST) bisects past all entries (t, key)."""

_AT_LEAST = [re.compile(b"[\\x%02x-\\xff]" % width).search for width in range(256)]
"""Per width below 256: the search of a byte of at least that value."""


def _cap(limit: int):
    """The byte of a free count (0 to ``limit``): 255 for 255 or more; None when every
    count is its own byte."""
    if limit < 256:
        return None
    return (bytes(range(256)) + b"\xff" * (limit - 255)).__getitem__


def compress(
    profile: Profile,
    order: list[tuple[float, int]],
    reservation: dict[int, float],
    size: Sequence[int],
    estimate: Sequence[float],
    freed: list[tuple[float, float, int]],
    t: float,
    horizon: float,
) -> bool:
    """Move every reservation of ``order`` (sorted (start, key), no start before t) to its
    earliest start given the running jobs and the reservations before it; whether any moved.
    A key (a job, or a rank in a list order) indexes ``size`` and ``estimate``.

    ``freed``: the spans [a, b) where processors were freed since each job was last placed
    or checked, with the most free processors each has now (``horizon``: the last
    reservation start; later free counts do not matter). Every job is at its earliest start
    given the profile as it was then. The spans that moves free are appended to ``freed``
    (coalesced among themselves); ``order`` keeps its positions, its starts updated.
    """
    times = profile.times
    free = profile.free
    known = len(freed)
    low = min(span[0] for span in freed)
    top = max(span[2] for span in freed)
    # The spans every job from here on lies past (a < old) are ``behind``: ``passed`` counts
    # them (a span that grows by coalescing after that counts again, whole), and for each
    # width the earliest start and the latest end of those with ``most`` >= width is a
    # prefix of a Fenwick tree indexed by ``limit - most`` (``_behind`` adds one). The others
    # are ``ahead`` (flag per span), in a heap by start (an entry per start a span had; a
    # span's smallest is its own), the first of them starting at ``coming``.
    limit = free[-1]  # the last step: every processor
    # ``level``: the free counts as bytes (255 stands for 255 or more), kept as the steps
    # change, for the search of the next step with enough processors.
    cap = _cap(limit)
    level = bytearray(free if cap is None else map(cap, free))
    earliest = [_LAST] * (limit + 2)
    latest = [t] * (limit + 2)
    size_tree = limit + 2
    passed = 0
    ahead = [True] * known
    coming_spans = [(span[0], k) for k, span in enumerate(freed)]
    heapify(coming_spans)
    coming = low
    # Per width: [reach, until, seen, shortest, clear, dead]. The spans behind that could let
    # a job of that width move, the first ``seen`` of them taken in, bound its starts to
    # [reach - est, until) (reach infinite: no span). No job of that width and an estimate
    # >= ``shortest`` fits before ``clear`` (see below); ``dead``: the shortest estimate
    # that cannot move at all.
    state: list[list | None] = [None] * (limit + 1)
    moved = False
    # Jobs starting by ``low`` cannot move: the first job checked starts after it, and every
    # span freed here starts after a job checked before.
    first = bisect_right(order, (low, _LAST))
    for position, (old, job) in enumerate(order[first:], first):
        if old > coming:
            while coming_spans and coming_spans[0][0] < old:
                k = heappop(coming_spans)[1]
                if ahead[k]:
                    ahead[k] = False
                    a, b, most = freed[k]
                    passed += 1
                    # _behind, written inline (most spans pass here)
                    k = limit - most + 1 if most < limit else 1
                    while k < size_tree:
                        if a < earliest[k]:
                            earliest[k] = a
                            if b > latest[k]:
                                latest[k] = b
                        elif b > latest[k]:
                            latest[k] = b
                        else:
                            break
                        k += k & -k
            coming = coming_spans[0][0] if coming_spans else _LAST
        width = size[job]
        if width > top:
            continue
        # A start s < old only needs free processors over [s, min(s + est, old)): the rest of
        # its window lies in the job's own span. It was infeasible when the job was last
        # placed or checked, so it can only have become feasible through a point p < old
        # freed since then, where the free count now reaches the width; the most free
        # processors a span had when freed bounds every later count in it.
        entry = state[width]
        if entry is None or entry[2] != passed:
            if entry is None:
                entry = state[width] = [_LAST, t, 0, _LAST, t, _LAST]
            reach = _LAST
            until = t
            k = limit - width + 1
            while k > 0:
                if earliest[k] < reach:
                    reach = earliest[k]
                if latest[k] > until:
                    until = latest[k]
                k &= k - 1
            entry[0] = reach
            entry[1] = until
            entry[2] = passed
            entry[5] = -1.0 if reach == _LAST else entry[3] if entry[4] >= until else _LAST
        duration = estimate[job]
        if duration >= entry[5]:
            continue
        until = entry[1]
        after = entry[0] - duration
        if after < t:
            after = t
        before = until if until < old else old
        # Every job checked earlier here that stayed had no start before its old, and one
        # that moved none before its new start: at each start s before that, an instant x <
        # its old within [s, min(s + est, old)) had too few free processors. The moves since
        # then took processors, or freed them from their own old start on (>= its old),
        # never at x; so a later job (old' >= old) of the same width and an estimate no
        # shorter, whose window holds that one's, starts there neither. ``clear``: the last
        # such bound, for estimates >= ``shortest``.
        if duration >= entry[3]:
            clear = entry[4]
            if clear >= before:
                continue
            if clear > after:
                after = clear
        entry[3] = duration
        # The earliest breakpoint s from after's step on, before ``before``, with ``width``
        # free over [s, min(s + duration, old)).
        # (The last step has every processor free: a scan never runs past it.)
        # Runs of steps with too few processors are skipped by a search of ``level`` in C.
        n = len(times)
        find = _AT_LEAST[width] if width < 256 else None
        i = bisect_right(times, after) - 1  # >= 0: the profile starts at t
        here = times[i]
        while here < before:
            if free[i] < width:
                i = i + 1 if find is None else find(level, i + 1).start()
                here = times[i]
                continue
            end = here + duration
            if end > old:
                end = old
            j = i + 1
            while j < n and times[j] < end:
                if free[j] < width:
                    break
                j += 1
            else:
                break
            i = j + 1
            here = times[i]
        else:
            entry[4] = old
            entry[5] = duration if old >= until else _LAST
            continue
        # here < before <= old: the job moves up.
        entry[4] = here
        entry[5] = duration if here >= until else _LAST
        reservation[job] = here
        order[position] = (here, job)  # the caller restores the order
        moved = True
        if duration <= 0 or width <= 0:  # it takes and frees nothing
            continue
        # Book [here, end); j is its first step at or after end. Then merge equal neighbours
        # (with one step booked, mostly a breakpoint moved in place).
        if j == i + 1:
            count = free[i] - width
            if j == n or times[j] != end:  # a breakpoint at end, the step before it lower
                if i > 0 and free[i - 1] == count:
                    times[i] = end  # the lowered step joins the one before it
                else:
                    times.insert(j, end)
                    free.insert(j, count + width)
                    free[i] = count
                    n += 1
            else:
                free[i] = count
                if free[j] == count:
                    del times[j]
                    del free[j]
                    n -= 1
                if i > 0 and free[i - 1] == count:
                    del times[i]
                    del free[i]
                    n -= 1
        else:
            if j == n or times[j] != end:
                times.insert(j, end)
                free.insert(j, free[j - 1])
                n += 1
            for k in range(i, j):
                free[k] -= width
            if j < n and free[j] == free[j - 1]:
                del times[j]
                del free[j]
                n -= 1
            if i > 0 and free[i] == free[i - 1]:
                del times[i]
                del free[i]
                n -= 1
        # Give back [freed_from, finish), the part of the old booking the new one left (every
        # breakpoint before i is before here); ``most``: the most free processors at any
        # instant of it before the horizon.
        freed_from = here + duration
        if freed_from < old:
            freed_from = old
        finish = old + duration
        lo = bisect_left(times, freed_from, i)
        if lo == n or times[lo] != freed_from:
            times.insert(lo, freed_from)
            free.insert(lo, free[lo - 1])
            n += 1
        hi = lo + 1
        if hi < n and times[hi] < finish:
            hi = bisect_left(times, finish, hi + 1)
        if hi == lo + 1:
            most = free[lo] + width
            if hi == n or times[hi] != finish:  # a breakpoint at finish, the step before higher
                if free[lo - 1] == most:
                    times[lo] = finish  # the raised step joins the one before it
                else:
                    times.insert(hi, finish)
                    free.insert(hi, most - width)
                    free[lo] = most
            else:
                free[lo] = most
                if free[hi] == most:
                    del times[hi]
                    del free[hi]
                if free[lo - 1] == most:
                    del times[lo]
                    del free[lo]
        else:
            if hi == n or times[hi] != finish:
                times.insert(hi, finish)
                free.insert(hi, free[hi - 1])
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
                del times[hi]
                del free[hi]
            if free[lo] == free[lo - 1]:
                del times[lo]
                del free[lo]
        # The steps from i to hi changed (every later one only moved by the steps added).
        stop = hi + 2
        if stop > len(free):
            stop = len(free)
        level[i : stop - len(free) + len(level)] = (
            free[i:stop] if cap is None else map(cap, free[i:stop])
        )
        if most > top:
            top = most
        # The span it freed: coalesced with the last span freed here when they overlap (a
        # coarser span only lets more jobs through the filter, never fewer).
        k = len(freed) - 1
        a, b, m = freed[k]
        if k >= known and a <= finish and freed_from <= b:
            if a > freed_from:
                a = freed_from
            if finish > b:
                b = finish
            if most > m:
                m = most
            freed[k] = (a, b, m)
            if not ahead[k]:
                _behind(earliest, latest, limit, a, b, m)
                passed += 1
            else:
                heappush(coming_spans, (a, k))
                if a < coming:
                    coming = a
        else:
            heappush(coming_spans, (freed_from, k + 1))
            freed.append((freed_from, finish, most))
            ahead.append(True)
            if freed_from < coming:
                coming = freed_from
    return moved


def _behind(
    earliest: list[float], latest: list[float], limit: int, a: float, b: float, most: int
) -> None:
    """A span [a, b) of at most ``most`` free processors joins the spans behind: the
    Fenwick tree's prefixes from ``limit - most`` on (1-based) take its start and end. The
    nodes on the way cover ever larger ranges, so once one already holds both, all do."""
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
