"""Tasks that end their worker process (``os._exit``, a segfault): only they fail. Their
batchmates and the batches queued behind them on the dying worker run again elsewhere and end
as in an undisturbed run, bit for bit, whatever the batches held."""

from __future__ import annotations

from pathlib import Path

import dask
import numpy as np
import pytest
from distributed import Client

from campaign.cluster.open import keep_workers, start_local_cluster
from campaign.execute import ExecutionOptions, Item, _Driver
from campaign.render.progress import Progress

FOLDER = Path(__file__).resolve().parent
# Dask closes a nanny whose worker is away this long after a death (15 s by default); at 0 s it
# does at the first one, so only the campaign's own keeper brings the workers back.
NANNIES_GIVE_UP = {"DASK_DISTRIBUTED__DEPLOY__LOST_WORKER_TIMEOUT": "0s"}
ALONE = "KilledWorker: the worker process died while running this task alone, "


def test_two_crashing_tasks_in_twelve_fail_alone_and_the_rest_end_as_undisturbed(
    runner, undisturbed
):
    fields = {"factor": "fault", "levels": ["exit", "segfault"], "replicates": 6}
    spec = runner.spec("crashes", above=0.9, **fields)
    done = runner.run(spec, "--workers", "2", "--retries", "0", env=NANNIES_GIVE_UP)
    assert done.returncode == 1, done.stderr + done.stdout
    assert done.stderr == "", "a crash is a recorded failure, not a log or traceback"
    results = runner.results(spec)
    crashed = runner.draws(results) > 0.9
    assert crashed.sum() == 2, "this seed gives one replicate whose task ends its process"
    assert "10 tasks ok, 2 failed, 0 missing" in done.stdout

    clean = undisturbed(**fields)
    assert np.array_equal(results["status"].values, np.where(crashed, 2, 1))
    assert np.array_equal(results["value"].values[~crashed], clean["value"].values[~crashed])
    assert np.array_equal(results["seed"].values, clean["seed"].values)
    assert np.isnan(results["value"].values[crashed]).all()
    failures = runner.failures(spec)
    for error in failures["failure_error"].values:
        assert str(error) == ALONE + "once (the task ends its process: os._exit, a crash, memory)"


@pytest.fixture
def embedded():
    """The embedded cluster of `campaign run` (2 workers, kept at 2 by the campaign alone), its
    workers importing the faulty model from here."""
    with (
        pytest.MonkeyPatch.context() as patch,
        dask.config.set({"distributed.deploy.lost-worker-timeout": "0s"}),
    ):
        patch.syspath_prepend(str(FOLDER))  # the worker processes start with this sys.path
        cluster = start_local_cluster(2, None)
        stop = keep_workers(cluster)
        try:
            with Client(cluster) as client:
                yield client
        finally:
            stop()
            cluster.close()


def test_batches_of_eight_with_two_crashing_tasks_lose_no_batchmate(embedded):
    params = {"fault": "exit", "above": 0.9, "duration_ms": 2}
    items = [Item(f"t{seed:02d}", params, seed, {"key": f"t{seed:02d}"}) for seed in range(24)]
    draws = [float(np.random.default_rng(seed).random()) for seed in range(24)]
    crashing = [item.key for item, draw in zip(items, draws) if draw > 0.9]
    assert crashing == ["t04", "t10"], "in two of the three batches of eight"

    records = []
    progress = Progress(0, enabled=False)
    options = ExecutionOptions(retries=1, wait_workers=600, batch_size=8)
    outcome = _Driver(embedded, "faulty:run", records.extend, options, progress).run(items)

    assert sorted(r["key"] for r in records) == [item.key for item in items]
    assert (outcome.ok, outcome.failed) == (22, 2)
    assert outcome.worker_deaths >= 4, "each crashing task ended its worker alone twice"
    for record, draw in zip(sorted(records, key=lambda r: r["key"]), draws):
        if record["key"] in crashing:
            assert record["status"] == "failed" and record["attempts"] == 2
            assert record["error"] == ALONE + (
                "2 times (the task ends its process: os._exit, a crash, memory)"
            )
        else:  # run again elsewhere, not counted as tried: the model's own value
            assert record["status"] == "ok" and record["attempts"] == 1, record
            assert record["metrics"] == {"value": draw}
