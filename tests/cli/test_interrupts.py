"""A Ctrl-C or SIGTERM whose exception Python swallows (raised in a gc callback or a
``__del__``, where Python prints "Exception ignored" and goes on, as happened inside Dask's
gc diagnosis during a run) still stops the command: it is delivered again."""

from __future__ import annotations

import time

import pytest

from campaign.cli.main import Terminated, guarded


class StopsWhenCollected:
    def __init__(self, stop: type[BaseException]):
        self.stop = stop

    def __del__(self):
        raise self.stop()


@pytest.mark.parametrize(("stop", "code"), [(KeyboardInterrupt, 130), (Terminated, 143)])
def test_a_stop_raised_where_python_swallows_it_still_ends_the_command(stop, code, capsys):
    ran_on = []

    def command() -> int:
        StopsWhenCollected(stop)  # collected at once: its stop is raised in __del__
        for _ in range(50):  # ten seconds, if the stop were lost
            time.sleep(0.2)
        ran_on.append(True)
        return 0

    started = time.monotonic()
    assert guarded(command, debug=False) == code
    assert not ran_on and time.monotonic() - started < 5
    words = "stopped by SIGTERM" if stop is Terminated else "interrupted"
    assert capsys.readouterr().err == (
        f"campaign: {words}; finished results are saved, run the same command again to finish "
        "the rest\n"
    )
