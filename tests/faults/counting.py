"""A model that counts its calls and fails on the tasks whose draw exceeds 0.5, as ``fault``
says: ``value`` raises a ``ValueError`` (as for bad params), ``garbage`` returns a value that
is not a number, ``oserror`` and ``memory`` raise an ``OSError`` or a ``MemoryError`` on the
first call only (a flaky mount, memory another process held). Each call appends a line to
``calls``/FAULT-SEED (``calls``: a folder, a param). Otherwise it returns ``{"value": u}``, the
first draw ``u`` of its seed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    value = float(np.random.default_rng(seed).random())
    fault = params["fault"]
    log = Path(str(params["calls"])) / f"{fault}-{seed}"
    with open(log, "a") as calls:
        calls.write("call\n")
    first = len(log.read_text().splitlines()) == 1
    if value <= 0.5:
        return {"value": value}
    if fault == "value":
        raise ValueError(f"parameter 'fault': no value for draw {value:.6f}")
    if fault == "garbage":
        return {"value": "not a number"}
    if fault == "oserror" and first:
        raise OSError(5, "Input/output error", "/flaky/mount/trace.swf")
    if fault == "memory" and first:
        raise MemoryError()
    return {"value": value}
