"""Preloaded into each worker process of the embedded cluster (Dask's ``preload``).

Ctrl-C on a terminal sends SIGINT to every process of its foreground group, the embedded
cluster's worker processes included: each would die printing a KeyboardInterrupt traceback
over the one line `run` prints. The workers ignore it; `run` catches it and closes the
cluster, which ends them.
"""

from __future__ import annotations

import signal
import threading
from typing import Any


def dask_setup(worker: Any) -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
