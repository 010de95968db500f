"""Progress of `run`: in a log, a plain line every so often and a last one, each with done,
ok, failed, remaining, the rate and the time left; on a terminal, one bar redrawn in place,
with the lines `run` says printed above it; with --quiet, nothing."""

from __future__ import annotations

import io
import os
import re
import sys
import threading

import campaign
from campaign.cli.main import main
from campaign.render.progress import Progress, say
from tests.conftest import MM1_TWO_LOADS as SPEC


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def logging_progress(tasks: int, log_every: float) -> tuple[Clock, io.StringIO, Progress]:
    """A progress of ``tasks`` that writes log lines (no terminal) on a clock the test moves:
    the clock, the log and the progress."""
    clock, log = Clock(), io.StringIO()
    progress = Progress(tasks, stream=log, log_every=log_every, clock=clock, tick_every=None)
    return clock, log, progress


def test_log_gets_a_line_every_log_every_seconds_and_a_last_one():
    clock, log, progress = logging_progress(10, log_every=10)
    for at, ok, failed in [(4, 2, 0), (10, 1, 1), (15, 2, 0), (25, 1, 0), (30, 3, 0)]:
        clock.now = 1000 + at
        progress.update(ok=ok, failed=failed)
    progress.finish()  # already shown: nothing more
    assert log.getvalue().splitlines() == [
        # 4 done in 10 s: 0.4 tasks/s, so 6 more take 15 s
        "progress: 4/10 done (3 ok, 1 failed), 6 remaining, 24.0 tasks/min, elapsed 0:10, ETA 0:15",
        # 7 in 25 s: 0.28 tasks/s, 3 more in 10.7 s
        "progress: 7/10 done (6 ok, 1 failed), 3 remaining, 16.8 tasks/min, elapsed 0:25, ETA 0:11",
        "progress: 10/10 done (9 ok, 1 failed), 0 remaining, 20.0 tasks/min, elapsed 0:30, "
        "ETA 0:00",
    ]


def test_an_interrupted_run_ends_its_log_where_it_stopped():
    clock, log, progress = logging_progress(90000, log_every=60)
    clock.now += 20
    progress.update(ok=3000)  # first line only once 60 s have passed
    clock.now += 40
    progress.update(ok=2995, failed=5)
    clock.now += 30
    progress.finish()
    assert log.getvalue().splitlines() == [
        # 6000 in 60 s: 100 tasks/s, 84000 more in 840 s
        "progress: 6000/90000 done (5995 ok, 5 failed), 84000 remaining, 100.0 tasks/s, "
        "elapsed 1:00, ETA 14:00",
        # no task in the last 30 s: 66.7 tasks/s over the run, 84000 more in 21 min
        "progress: 6000/90000 done (5995 ok, 5 failed), 84000 remaining, 66.7 tasks/s, "
        "elapsed 1:30, ETA 21:00",
    ]


def test_log_gets_its_lines_while_no_task_finishes():
    clock, log, progress = logging_progress(4, log_every=10)
    progress.update(ok=1)
    clock.now += 5
    progress.tick()  # not yet due
    clock.now += 5
    progress.tick()
    clock.now += 9
    progress.tick()
    clock.now += 1
    progress.tick()
    assert log.getvalue().splitlines() == [
        "progress: 1/4 done (1 ok, 0 failed), 3 remaining, 6.0 tasks/min, elapsed 0:10, ETA 0:30",
        "progress: 1/4 done (1 ok, 0 failed), 3 remaining, 3.0 tasks/min, elapsed 0:20, ETA 1:00",
    ]


class Log(io.StringIO):
    """A log that says when a line arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        self.arrived.set()
        return written


def test_a_thread_ticks_so_lines_come_with_no_update_at_all():
    log = Log()
    progress = Progress(3, stream=log, log_every=0, tick_every=0.01)
    assert log.arrived.wait(timeout=120), "the ticking thread wrote nothing"
    progress.finish()
    lines = log.getvalue().splitlines()
    assert len(lines) >= 2
    for line in lines:
        assert re.fullmatch(
            r"progress: 0/3 done \(0 ok, 0 failed\), 3 remaining, 0\.0 tasks/min, "
            r"elapsed \d+:\d\d, ETA \?",
            line,
        )
    log.arrived.clear()
    progress.tick()  # finished: the ticks are over
    assert not log.arrived.is_set()


def test_quiet_progress_and_nothing_to_do_show_nothing():
    log = io.StringIO()
    quiet = Progress(3, stream=log, enabled=False)
    quiet.update(ok=3)
    quiet.finish()
    empty = Progress(0, stream=log)
    empty.finish()
    assert log.getvalue() == ""


def render(text: str) -> list[str]:
    """The lines a terminal shows after `text`: a carriage return moves back to the start of
    the line, later characters overwrite earlier ones."""
    lines, line, column = [], [], 0
    for char in text:
        if char == "\r":
            column = 0
        elif char == "\n":
            lines.append("".join(line).rstrip())
            line, column = [], 0
        else:
            line[column : column + 1] = [char]
            column += 1
    assert not re.search(r"\x1b", text), "no cursor movement expected"
    return lines + ([("".join(line).rstrip())] if line else [])


def test_terminal_gets_one_bar_redrawn_in_place_with_messages_above_it(monkeypatch):
    control, terminal = os.openpty()
    stderr = os.fdopen(terminal, "w", closefd=False)
    stdout = os.fdopen(os.dup(terminal), "w")
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(sys, "stdout", stdout)
    progress = Progress(5)  # on stderr, a terminal
    progress.update(ok=2)
    say("waiting for Dask workers")  # what `run` says during a run, on stdout
    progress.update(ok=1, failed=1)
    progress.update(ok=1)  # the last task: the bar shows its last state and ends its line
    progress.finish()
    stderr.flush()
    stdout.close()
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(control, 65536)
        except OSError:  # the terminal's other end is closed and all is read
            break
        if not chunk:
            break
        output += chunk
    os.close(control)
    screen = render(output.decode().replace("\r\n", "\n"))  # the terminal's own newlines
    assert len(screen) == 2, screen
    assert screen[0] == "waiting for Dask workers"
    bar = re.fullmatch(
        r"5/5 done \(4 ok, 1 failed\), 0 remaining \|(#+)\| +[\d.]+ tasks/s, "
        r"elapsed 00:\d\d, ETA 00:00",
        screen[1],
    )
    assert bar, screen[1]
    assert len(screen[1]) == 100  # a fresh terminal says 0 columns: 100 then, bar filling in


def test_run_into_a_pipe_ends_with_a_progress_line_and_quiet_prints_none(
    write_spec, scheduler_address, capsys
):
    path = write_spec(SPEC)
    campaign.run(path, scheduler=scheduler_address)
    *earlier, last = capsys.readouterr().err.splitlines()  # earlier: if it took 10 s or more
    assert re.fullmatch(
        r"progress: 8/8 done \(8 ok, 0 failed\), 0 remaining, [\d.]+ tasks/(s|min), "
        r"elapsed \d+:\d\d, ETA 0:00",
        last,
    )
    assert all(re.match(r"progress: [0-7]/8 done", line) for line in earlier)
    quiet = write_spec(SPEC.replace("output: out", "output: quiet"), "quiet.yaml")
    assert main(["run", str(quiet), "--scheduler", scheduler_address, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "8 tasks ok, 0 failed, 0 missing" in captured.out
