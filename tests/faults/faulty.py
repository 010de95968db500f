"""A model that misbehaves on purpose, on the tasks a test can name in advance.

``run`` returns ``{"value": u}``, the first uniform draw of ``numpy.random.default_rng(seed)``,
like the ``busy`` model; but on the tasks whose ``u`` exceeds ``above`` it does what ``fault``
says instead:

- ``raise``: raises a ``RuntimeError``;
- ``garbage``: returns a value that is not a number;
- ``hang``: sleeps for an hour;
- ``exit``: ends its process at once (``os._exit``);
- ``segfault``: reads address 0, which kills its process with SIGSEGV;
- ``memory``: allocates memory until its process is stopped;
- ``sysexit``: calls ``sys.exit``;
- ``cancel``: raises ``asyncio.CancelledError``.

``duration_ms`` (default 2) is CPU time every task burns first, so batches have a known length.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import sys
import time
from collections.abc import Mapping

import numpy as np

FAULTS = ("none", "raise", "garbage", "hang", "exit", "segfault", "memory", "sysexit", "cancel")


def draw(seed: int) -> float:
    return float(np.random.default_rng(seed).random())


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    fault = params.get("fault", "none")
    if fault not in FAULTS:
        raise ValueError(f"parameter 'fault' must be one of {', '.join(FAULTS)}, got {fault!r}")
    value = draw(seed)
    deadline = time.perf_counter() + float(params.get("duration_ms", 2.0)) / 1000.0
    while time.perf_counter() < deadline:
        pass
    if fault == "none" or value <= float(params.get("above", 1.0)):
        return {"value": value}
    if fault == "raise":
        raise RuntimeError(f"fault injected for draw {value:.6f}")
    if fault == "garbage":
        return {"value": "not a number"}
    if fault == "hang":
        time.sleep(3600)
    if fault == "exit":
        os._exit(13)
    if fault == "segfault":
        ctypes.string_at(0)
    if fault == "memory":
        hoard = []
        while True:
            hoard.append(np.ones(2**22))  # 32 MiB at a time, every page touched
    if fault == "sysexit":
        sys.exit(4)
    raise asyncio.CancelledError()
