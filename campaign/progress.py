"""Progress of a running campaign: a live bar on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def format_duration(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Counts finished tasks of this run and shows done, failed, remaining and time left."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        enabled: bool = True,
        log_every: float = 10.0,
    ):
        self.total = total
        self.ok = 0
        self.failed = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.live = self.enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.log_every = log_every
        self.start = time.monotonic()
        self._last = 0.0
        self._finished = False

    @property
    def done(self) -> int:
        return self.ok + self.failed

    def update(self, ok: int = 0, failed: int = 0) -> None:
        self.ok += ok
        self.failed += failed
        now = time.monotonic()
        interval = 0.2 if self.live else self.log_every
        if self.done < self.total and now - self._last < interval:
            return
        self._last = now
        self._show(final=False)

    def finish(self) -> None:
        if self.enabled and not self._finished:
            self._show(final=True)

    def line(self) -> str:
        elapsed = time.monotonic() - self.start
        remaining = self.total - self.done
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = remaining / rate if rate > 0 else float("nan")
        return (
            f"{self.done}/{self.total} done ({self.failed} failed), {remaining} remaining, "
            f"elapsed {format_duration(elapsed)}, left {format_duration(left)}"
        )

    def _show(self, final: bool) -> None:
        if not self.enabled:
            return
        final = final or self.done >= self.total
        self._finished = final
        if self.live:
            width = 30
            filled = int(width * self.done / self.total) if self.total else width
            bar = "#" * filled + "-" * (width - filled)
            end = "\n" if final else ""
            self.stream.write(f"\r[{bar}] {self.line()}\033[K{end}")
        else:
            self.stream.write(f"progress: {self.line()}\n")
        self.stream.flush()
