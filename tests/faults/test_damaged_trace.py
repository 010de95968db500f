"""A trace damaged after results were computed from it (cut short, as a full disk or an
interrupted copy leaves it): the stored results are never served as current, the damaged
trace's tasks fail one line each and lose nothing else, and once the trace is whole again a
plain rerun ends with the results the campaign first had, bit for bit."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import yaml

from campaign.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_trace_cut_short_is_refused_fails_its_tasks_alone_and_once_whole_recovers(
    runner, same_results, scheduler_address, capsys
):
    def run(*options: str) -> tuple[int, str, str]:
        """`campaign run SPEC --quiet OPTIONS` in this process, on the shared cluster (the
        refusal is the driver's, the tasks run on real workers that read the trace as it is
        on disk): its exit status, what it printed and said."""
        capsys.readouterr()
        code = main(["run", str(spec), "--quiet", "--scheduler", scheduler_address, *options])
        out, err = capsys.readouterr()
        return code, out, err

    traces = runner.folder / "traces"
    traces.mkdir()
    a, b = traces / "a.swf.gz", traces / "b.swf.gz"
    shutil.copy(DATA / "KTH-SP2-1996-2.1-cln.swf.gz", a)
    shutil.copy(DATA / "HPC2N-2002-2.1-cln.swf.gz", b)
    spec = runner.folder / "traces.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "traces",
                "model": "jobs",
                "params": {"jobs": 100, "scheduler": "easy"},
                "factors": {"trace": [str(a), str(b)]},
                "replicates": 2,
                "seed": 3,
                "output": "traces",
            }
        )
    )
    output = runner.folder / "traces"
    code, _, err = run()
    assert code == 0, err
    clean = runner.results(spec)  # an undisturbed run of the spec
    whole = a.read_bytes()

    a.write_bytes(whole[: len(whole) // 2])
    code, _, err = run()
    assert code == 2
    assert err == (
        f"campaign: error: {output}: 2 stored results were computed before input file {a} "
        "changed; rerun with --rerun-changed to compute them again (the earlier ones are kept "
        "in ledger.changed-*), or with --accept-changed to keep them as they are (recorded in "
        "results.nc)\n"
    )
    same_results(runner.results(spec), clean)  # nothing was touched

    # Told to compute them again from the damaged trace: its tasks fail, one line each.
    code, out, err = run("--rerun-changed", "--retries", "0")
    assert code == 1, err
    assert "2 tasks ok, 2 failed, 0 missing" in out
    results = runner.results(spec)
    assert np.array_equal(results["status"].values, [[2, 2], [1, 1]])
    for error in runner.failures(spec)["failure_error"].values:
        assert "\n" not in str(error) and str(error), error
    kept = {name: results[name].values[1] for name in results.data_vars}
    for name, values in kept.items():
        if results[name].dims[:1] == ("trace",):
            assert np.array_equal(values, clean[name].values[1], equal_nan=True), name

    # The trace whole again: its failed tasks run again (no result stands on the damaged
    # trace), and the campaign ends as it first was.
    a.write_bytes(whole)
    code, out, err = run()
    assert code == 0, err
    assert "2 already done, 2 to run" in out
    restored = runner.results(spec)
    same_results(restored, clean)
    assert restored.attrs["input_digests"] == clean.attrs["input_digests"]
