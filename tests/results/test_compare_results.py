"""scripts/compare_results.py --common: results of code that added metrics compare with those
of the code before on the variables both files have, the others listed as skipped."""

from __future__ import annotations

import contextlib
import io

import pytest

from tests.conftest import PAPER_SPEC, load_script


def compare_results():
    return load_script("compare_results")


def keeping(text: str, metrics: str) -> str:
    """The spec with a `metrics:` list of what to keep."""
    return text + f"metrics: [{metrics}]\n"


@pytest.fixture(scope="module")
def fewer_metrics(run_campaign):
    """The paper campaign (same spec and seed) keeping only mean_wait: what older code that did
    not have max_wait and utilization would have written."""
    return run_campaign("mean-wait-only", keeping(PAPER_SPEC, "mean_wait")) / "results.nc"


def run_main(*argv: str) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = compare_results().main(list(argv))
    return status, printed.getvalue()


SKIPPED = (
    "max_wait, max_wait_ci_high, max_wait_ci_low, max_wait_mean, max_wait_n, max_wait_nan, "
    "max_wait_std, utilization, utilization_ci_high, utilization_ci_low, utilization_mean, "
    "utilization_n, utilization_nan, utilization_std"
)


def test_common_compares_the_shared_variables_and_lists_the_others(paper_results, fewer_metrics):
    full = paper_results / "results.nc"
    module = compare_results()
    without = module.differences(full, fewer_metrics)
    assert without == [f"variable {name} only in {full}" for name in SKIPPED.split(", ")]
    assert module.differences(full, fewer_metrics, common=True) == []

    status, printed = run_main("--common", str(paper_results), str(fewer_metrics))
    assert status == 0
    assert printed.splitlines() == [
        f"identical {full} == {fewer_metrics} (the variables and coordinates both have)",
        f"  skipped: variables only in {full}: {SKIPPED}",
    ]
    status, printed = run_main(str(paper_results), str(fewer_metrics))
    assert status == 1
    assert printed.splitlines()[0] == f"DIFFERENT {full} vs {fewer_metrics}"


def test_common_still_reports_a_shared_variable_that_differs(
    run_campaign, paper_results, fewer_metrics
):
    other_seed = PAPER_SPEC.replace("seed: 8", "seed: 9")
    assert other_seed != PAPER_SPEC
    reseeded = run_campaign("reseeded", keeping(other_seed, "mean_wait")) / "results.nc"

    status, printed = run_main("--common", str(fewer_metrics), str(reseeded))
    assert status == 1
    lines = printed.splitlines()
    assert lines[0] == (
        f"DIFFERENT {fewer_metrics} vs {reseeded} (the variables and coordinates both have)"
    )
    differing = {line.split()[1] for line in lines[1:] if "differs" in line}
    assert {"mean_wait", "mean_wait_mean", "mean_wait_std"} <= differing
    assert not any("skipped" in line for line in lines)


def test_outputs_come_in_pairs(paper_results, capsys):
    with pytest.raises(SystemExit) as stop:
        compare_results().main(["--common", str(paper_results)])
    assert stop.value.code == 2
    assert "outputs come in pairs (OUT_A OUT_B ...); 1 given" in capsys.readouterr().err
