"""Which failures are tried again: a model's exception or a value that is not a number comes
back the same from a pure model with the same params and seed, so it is recorded at once; an
OSError or a MemoryError (a task's surroundings) is tried again, up to --retries times."""

from __future__ import annotations

import numpy as np
import yaml

from campaign.store.ledger import Ledger

KINDS = ["value", "garbage", "oserror", "memory"]


def test_model_errors_fail_at_once_and_transient_ones_recover_through_retries(runner):
    calls = runner.folder / "calls"
    calls.mkdir()
    spec = runner.folder / "retries.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "retries",
                "model": "counting:run",
                "params": {"calls": str(calls)},
                "factors": {"fault": KINDS},
                "paired": ["fault"],  # every kind sees the same seeds
                "replicates": 8,
                "seed": 11,
                "output": "retries",
            }
        )
    )
    # no tail replication: a copy of a straggling task would be one more call
    done = runner.run(spec, "--workers", "2", "--retries", "1", "--no-tail-replication")
    results = runner.results(spec)
    draws = runner.draws(results)
    hit = draws > 0.5
    assert hit.sum(axis=1).tolist() == [2] * 4, "this seed gives two faulty tasks per kind"
    assert done.returncode == 1, done.stderr
    assert "28 tasks ok, 4 failed, 0 missing" in done.stdout
    deterministic = np.array([kind in ("value", "garbage") for kind in KINDS])[:, None]
    failed = hit & deterministic
    assert np.array_equal(results["status"].values, np.where(failed, 2, 1))
    assert np.array_equal(results["value"].values[~failed], draws[~failed])

    # each call of the model left a line: a failing model error once, a transient one twice
    seeds = results["seed"].values
    for row, kind in enumerate(KINDS):
        for seed, faulty in zip(seeds[row], hit[row]):
            count = len((calls / f"{kind}-{seed}").read_text().splitlines())
            assert count == (2 if faulty and kind in ("oserror", "memory") else 1), (kind, seed)
    records = Ledger(runner.folder / "retries").load().values()
    attempts = sorted(
        (r["status"], r["error"].split(":")[0] if "error" in r else "", r["attempts"])
        for r in records
        if r["attempts"] != 1 or r["status"] != "ok"
    )
    assert (
        attempts
        == [("failed", "TypeError", 1)] * 2
        + [("failed", "ValueError", 1)] * 2
        + [("ok", "", 2)] * 4
    )
    assert not any("transient" in record for record in records)
