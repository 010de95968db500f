"""The output folder's lock: one run at a time writes a folder. An advisory lock (``flock``)
on ``OUTPUT/campaign.lock``, which the system releases when its holder ends, however it ends;
the file names the holder, for the one line a second run stops with."""

from __future__ import annotations

import fcntl
import os
import platform
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from campaign.errors import CampaignError
from campaign.store.durable import remove_stale_temporaries
from campaign.store.folder import (
    LEDGER_BATCHES,
    LEDGER_FOLDER,
    LOCK_FILE,
    OUTPUT_ARCHIVES,
    OUTPUTS_FOLDER,
    WRITTEN_BESIDE_LEDGER,
)


@contextmanager
def hold(output: Path) -> Iterator[None]:
    """Hold the output folder for one run: a second run on it stops with one line saying
    who holds it. Once held, what writers killed mid-write left is removed."""
    path = output / LOCK_FILE
    try:
        output.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise CampaignError(f"cannot use the output folder {output}: {error.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 1024, 0).decode(errors="replace").strip()
            raise CampaignError(
                f"{output} is in use by another campaign run "
                f"({holder or 'holder unknown'}); wait for it to end, or use another "
                f"output folder"
            ) from None
        started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"host {platform.node()}, pid {os.getpid()}, since {started}\n".encode(), 0)
        remove_leftovers(output)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


def remove_leftovers(output: Path) -> list[Path]:
    """Remove what writers killed mid-write left in the folder (temporary files of
    results.nc, campaign.json, ledger batches and output archives whose writer is gone): run
    by the holder of the lock, so no writer of this folder is at work."""
    removed = []
    for name in WRITTEN_BESIDE_LEDGER:
        removed += remove_stale_temporaries(output, name)
    removed += remove_stale_temporaries(output / LEDGER_FOLDER, LEDGER_BATCHES)
    removed += remove_stale_temporaries(output / OUTPUTS_FOLDER, OUTPUT_ARCHIVES)
    return removed
