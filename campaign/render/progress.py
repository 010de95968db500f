"""Progress of a running campaign: one live bar on a terminal, a plain line now and then in a
log (so a log holds a readable history rather than a bar's redraws)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from tqdm import tqdm

# The bar redraws at most this often: updates in between only add to the counts.
REFRESH_SECONDS = 0.2
# The bar's line never gets wider than this, however wide the terminal.
MAX_COLUMNS = 120
BAR_FORMAT = "{desc} |{bar}| {rate_noinv_fmt}, elapsed {elapsed}, ETA {remaining}"


def format_duration(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def format_rate(per_second: float) -> str:
    """Tasks per second, or per minute when that reads better (long tasks)."""
    if per_second >= 1:
        return f"{per_second:.1f} tasks/s"
    return f"{per_second * 60:.1f} tasks/min"


def screen(stream: TextIO) -> tuple[int, int]:
    """The terminal's columns and lines, 100 x 24 where it reports none (a fresh pseudo-terminal
    says 0 x 0, and tqdm would then neither size the bar nor trim the line)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return 100, 24
    return size.columns or 100, size.lines or 24


def say(message: str) -> None:
    """Print a line on stdout without breaking a live bar: the bar is cleared, the line
    printed, and the bar drawn again below it."""
    tqdm.write(message, file=sys.stdout)
    sys.stdout.flush()


class Progress:
    """Counts the finished tasks of this run and shows done, ok, failed, remaining, the rate
    and the time left: a tqdm bar redrawn in place on a terminal; elsewhere a line every
    `log_every` seconds (by `clock`) and a last one when the run ends.

    Tasks may take minutes: so that the bar's clock runs and the log's lines come while none
    finishes, a thread calls `tick` every `tick_every` seconds (None: only updates show)."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        enabled: bool = True,
        log_every: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        tick_every: float | None = 1.0,
    ):
        self.total = total
        self.ok = 0
        self.failed = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.live = self.enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.log_every = log_every
        self.clock = clock
        self.start = clock()
        self._last = self.start
        self._finished = False
        self._lock = threading.RLock()  # updates come from the run, ticks from the thread
        self._stop = threading.Event()
        self._bar: tqdm | None = None
        if self.live:
            columns, lines = screen(self.stream)
            self._bar = tqdm(
                total=total,
                file=self.stream,
                bar_format=BAR_FORMAT,
                unit=" tasks",
                ascii=" #",
                mininterval=REFRESH_SECONDS,
                ncols=min(columns, MAX_COLUMNS),
                nrows=lines,
                desc=self.counts(),
            )
        if self.enabled and tick_every is not None:
            ticker = threading.Thread(target=self._ticks, args=(tick_every,), daemon=True)
            ticker.start()

    @property
    def done(self) -> int:
        return self.ok + self.failed

    def counts(self) -> str:
        remaining = self.total - self.done
        return (
            f"{self.done}/{self.total} done ({self.ok} ok, {self.failed} failed), "
            f"{remaining} remaining"
        )

    def update(self, ok: int = 0, failed: int = 0) -> None:
        with self._lock:
            self.ok += ok
            self.failed += failed
            if not self.enabled or self._finished:
                return
            if self.done >= self.total:
                self.finish()
            elif self._bar is not None:
                # tqdm redraws only when REFRESH_SECONDS have passed, with the counts of then
                self._bar.set_description_str(self.counts(), refresh=False)
                self._bar.update(ok + failed)
            else:
                self.tick()

    def tick(self) -> None:
        """Show the time going by: redraw the bar, or write the log's line when it is due."""
        with self._lock:
            if not self.enabled or self._finished:
                return
            if self._bar is not None:
                self._bar.refresh()
            elif self.clock() - self._last >= self.log_every:
                self._last = self.clock()
                self._write()

    def finish(self) -> None:
        """Show the last state (all done, or where an interrupted run stopped), once."""
        with self._lock:
            if not self.enabled or self._finished:
                return
            self._finished = True
            self._stop.set()
            if self._bar is not None:
                self._bar.set_description_str(self.counts(), refresh=False)
                self._bar.update(self.done - self._bar.n)
                self._bar.close()  # draws the last state and leaves the bar on its line
            else:
                self._write()

    def _ticks(self, every: float) -> None:
        while not self._stop.wait(every):
            self.tick()

    def line(self) -> str:
        elapsed = self.clock() - self.start
        remaining = self.total - self.done
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = remaining / rate if rate > 0 else float("nan")
        return (
            f"{self.counts()}, {format_rate(rate)}, elapsed {format_duration(elapsed)}, "
            f"ETA {format_duration(left)}"
        )

    def _write(self) -> None:
        self.stream.write(f"progress: {self.line()}\n")
        self.stream.flush()
