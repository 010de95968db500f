"""How much conservative backfilling's compression must move on a saturated queue: for the
randomized workload of ``specs/list-orders-randomized.yaml`` at each size, the compressions
run, the queued reservations they saw on average, and the reservations that moved (got an
earlier start), with the growth exponent of the moves between the first and last size.

Any implementation of the definition that keeps each reservation's start must write every
move, so the moves bound the cost from below: about n^2 moves means no exponent below 2.

How the moves are shaped, for a book that would hold them implicitly: ``same shift`` counts
the moves by their compression's most common shift (the whole queue behind an early end
mostly moves up by one amount), ``whole queue`` those of the compressions where every queued
reservation moved by one amount. Times are not integers, so such a shift is not a subtraction:
``minus shift`` is the share of those moves whose new start is the old one minus the shift to
the last bit, ``from anchor`` the share (of those that start when another queued job ends)
whose new start is that job's new end, the sum the definition computes.

``ns/move`` is the CPU time spent in the compressions over the moves: flat across sizes, it
says the compression's cost grows as its work does (the moves), no faster.

    python scripts/count_compression_moves.py                  # conservative, 500 to 4,000 jobs
    python scripts/count_compression_moves.py --cell psrs/conservative --sizes 1000 2000
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from campaign.models import jobs
from campaign.models.rigid import compiled_book


class Counts:
    calls = 0
    queued = 0
    moves = 0
    same_shift = 0
    whole_queue = 0
    minus_shift = 0
    anchored = 0
    from_anchor = 0
    seconds = 0.0


def counting(compress):
    """``CompiledBook.compress`` that counts the reservations it moves."""

    def wrapped(book, t):
        keys = book._keys[: book._count].copy()
        before = book._reservation[keys]
        Counts.calls += 1
        Counts.queued += len(keys)
        began = time.process_time()
        compress(book, t)
        Counts.seconds += time.process_time() - began
        after = book._reservation[keys]
        shifts = before - after
        moved = shifts[shifts > 0]
        Counts.moves += len(moved)
        if len(moved):
            # One amount up to rounding: start - shift carries the start's rounding error.
            common = np.unique(np.round(moved, 6), return_counts=True)[1].max()
            Counts.same_shift += int(common)
            if common == len(keys):
                Counts.whole_queue += int(common)
                estimate = book._arrays.of(book.size, book.estimate)[1]  # the book's own
                _exactness(before, after, estimate[keys])

    return wrapped


def _exactness(before: np.ndarray, after: np.ndarray, estimate: np.ndarray) -> None:
    """Count the starts of a whole-queue shift that are the old ones minus the shift, and
    those that are their anchor's new end (the anchor: a job whose old end is their old
    start)."""
    Counts.minus_shift += int(np.count_nonzero(after == before - (before[0] - after[0])))
    anchor = dict(zip((before + estimate).tolist(), range(len(before))))
    for k, start in enumerate(before.tolist()):
        j = anchor.get(start)
        if j is not None and j != k:
            Counts.anchored += 1
            Counts.from_anchor += bool(after[k] == after[j] + estimate[j])


def _share(count: int, whole: int | None = None) -> str:
    whole = Counts.moves if whole is None else whole
    return f"{count / whole:.0%}" if whole else "-"


def _per_move() -> str:
    return f"{Counts.seconds / Counts.moves * 1e9:.0f}" if Counts.moves else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", default="conservative", help="a scheduler, or order/mode")
    parser.add_argument("--sizes", nargs="+", type=int, default=[500, 1000, 2000, 4000])
    parser.add_argument("--seed", type=int, default=0, help="the workload's seed")
    args = parser.parse_args()
    compiled_book.CompiledBook.compress = counting(compiled_book.CompiledBook.compress)
    spec = {"workload": "randomized"}
    if "/" in args.cell:
        order, mode = args.cell.split("/")
        spec.update(order=order, backfill=mode)
    else:
        spec["scheduler"] = args.cell
    print(
        f"{'jobs':>7} {'compressions':>13} {'mean queue':>11} {'moves':>11} {'moves/job²':>11}"
        f" {'ns/move':>8} {'same shift':>11} {'whole queue':>12} {'minus shift':>12}"
        f" {'from anchor':>12}"
    )
    # A first small run compiles (or loads) the kernel outside the figures.
    jobs.schedule({**spec, "jobs": 200}, args.seed)
    moves = {}
    for n in args.sizes:
        for name in vars(Counts):
            if not name.startswith("_"):
                setattr(Counts, name, 0)
        jobs.schedule({**spec, "jobs": n}, args.seed)  # user estimates, killed at them
        moves[n] = Counts.moves
        mean_queue = Counts.queued / max(Counts.calls, 1)
        print(
            f"{n:>7} {Counts.calls:>13} {mean_queue:>11.0f} {Counts.moves:>11}"
            f" {Counts.moves / n**2:>11.4f} {_per_move():>8} {_share(Counts.same_shift):>11}"
            f" {_share(Counts.whole_queue):>12}"
            f" {_share(Counts.minus_shift, Counts.whole_queue):>12}"
            f" {_share(Counts.from_anchor, Counts.anchored):>12}"
        )
    low, high = min(moves), max(moves)
    if low != high and moves[low] > 0:
        power = math.log(moves[high] / moves[low]) / math.log(high / low)
        print(f"moves grow as n^{power:.2f} between {low} and {high} jobs")


if __name__ == "__main__":
    main()
