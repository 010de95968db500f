"""A Ctrl-C or SIGTERM whose exception Python swallows (raised in a gc callback or a
``__del__``, where Python prints "Exception ignored" and goes on, as happened inside Dask's
gc diagnosis during a run) still stops the command: it is delivered again."""

from __future__ import annotations

import os
import signal
import time

import pytest
from distributed import Client

from campaign.cli.main import Terminated, guarded
from campaign.execute import ExecutionOptions, Item, dispatch
from campaign.render.progress import Progress
from campaign.store.ledger import Ledger


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


def test_a_ctrl_c_swallowed_inside_the_driver_still_stops_the_dispatch(
    scheduler_address, tmp_path, capsys
):
    """Ctrl-C is remembered as well as raised: where code the driver runs catches the
    KeyboardInterrupt and goes on (a library's handler, a callback), the dispatch's loop still
    stops at its next turn, what finished stored."""
    ledger = Ledger(tmp_path / "out")
    swallowed = []

    def store(records):
        ledger.append(records)
        if not swallowed:
            try:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C arrives here...
                time.sleep(5)
            except KeyboardInterrupt:  # ...where it is caught and the work goes on
                swallowed.append(True)

    items = [
        Item(key=f"t{n:03d}", params={"duration_ms": 50}, seed=n, meta={"key": f"t{n:03d}"})
        for n in range(200)
    ]
    options = ExecutionOptions(retries=0, progress=False, batch_size=1)

    def command() -> int:
        with Client(scheduler_address) as client:
            dispatch(client, "busy", items, store, options, Progress(0, enabled=False))
        return 0

    assert guarded(command, debug=False) == 130
    assert swallowed
    assert 1 <= len(ledger.load()) < 200  # stopped, not run to the end
    assert capsys.readouterr().err.startswith("campaign: interrupted; finished results are saved")
