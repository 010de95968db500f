"""A worker of many threads starts many batches at once: it loads each model once."""

from __future__ import annotations

import logging

import numpy as np
from distributed import Client, LocalCluster

from campaign.execute import ExecutionOptions, Item, dispatch
from campaign.render.progress import Progress
from campaign.store.ledger import Ledger

HELPERS = 3000  # functions in the model's module: parsing it takes a while


def long_model(folder):
    """A model module long enough that its threads would parse it side by side."""
    lines = [
        "import numpy as np",
        "def run(params, seed):",
        "    return {'value': float(np.random.default_rng(seed).random())}",
    ]
    lines += [f"def helper_{n}(x):\n    return [x + {n} for _ in range(3)]" for n in range(HELPERS)]
    (folder / "long_model.py").write_text("\n".join(lines) + "\n")


def test_sixteen_threads_loading_one_model_at_once_all_run_it(tmp_path, monkeypatch):
    """Python 3.11's parser fails ("AST constructor recursion depth mismatch") when threads
    of one process parse at once, as sixteen batches loading and digesting a model did."""
    long_model(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # the worker process starts with this path
    items = [Item(key=f"t{n:02d}", params={}, seed=n, meta={"key": f"t{n:02d}"}) for n in range(48)]
    ledger = Ledger(tmp_path / "out")
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=16,
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        options = ExecutionOptions(retries=0, progress=False)
        quiet = Progress(0, enabled=False)
        outcome = dispatch(client, "long_model:run", items, ledger.append, options, quiet)
    assert outcome.ok == 48
    records = ledger.load()
    for item in items:
        value = float(np.random.default_rng(item.seed).random())
        assert records[item.key]["metrics"] == {"value": value}
