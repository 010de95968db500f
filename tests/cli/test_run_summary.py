"""What `campaign run` prints at the end: the model's headline metrics, and one line saying
how many other metrics the results hold, which, and how to see them."""

from __future__ import annotations

import contextlib
import io

import pytest

from campaign.cli.main import main


def table_header(printed: str) -> list[str]:
    lines = printed.splitlines()
    at = lines.index("Summary: mean ± half-width of the 95% confidence interval")
    return lines[at + 1].split()


def test_the_summary_shows_the_headline_metrics_and_names_the_others(demo_results):
    printed = (demo_results.parent / "run-output.txt").read_text()
    # the jobs model's headline metrics are mean_wait, mean_bsld and swct_w; the demo's spec
    # keeps the first two of them, three other scalars, and the samples wait and bsld (each
    # a count and its percentiles p50, p95, p99)
    assert table_header(printed) == ["scheduler", "load", "mean_wait", "mean_bsld", "n"]
    assert (
        "11 other metrics (utilization, makespan, jobs_backfilled, wait_count, wait_p50, "
        f"wait_p95, ...): `campaign query "
        f"{demo_results}` shows every metric, --metric NAME one (or run with --show-metrics N)"
    ) in printed.splitlines()
    # 4 replicates a cell: the table says they are too few for its intervals
    assert (
        "warning: some intervals rest on 4 replicate(s) (fewer than 5): too few for an "
        "interval to say much; add replicates"
    ) in printed.splitlines()


def test_show_metrics_adds_others_after_the_headline_ones(demo_results, scheduler_address):
    spec = demo_results.parent / "demo.yaml"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        argv = ["run", str(spec), "--scheduler", scheduler_address, "--quiet"]
        assert main([*argv, "--show-metrics", "3"]) == 0
    text = printed.getvalue()
    assert table_header(text) == ["scheduler", "load", "mean_wait", "mean_bsld", "utilization", "n"]
    assert "10 other metrics (makespan, jobs_backfilled, wait_count, wait_p50, wait_p95, " in text


PROGRAM = """
import json, sys
load = float(sys.argv[1])
print(json.dumps({"makespan": 10 * load, "energy": 200 * load, "wait_p50": load,
                  "wait_p95": 3 * load, "idle": 1 / load, "bytes_host1": 5.0, "bytes_host2": 6.0}))
"""


def test_a_program_shows_its_first_metrics_as_the_help_says(tmp_path, scheduler_address, capsys):
    from campaign.analysis.metrics import SUMMARY_METRICS

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert (
        f"for a model that names none, such as a program, its first {SUMMARY_METRICS} metrics, "
        "or all of them when it has fewer" in help_text
    )
    assert "leaving out per-entity ones (a name ending in an index, such as makespan_job3)" in (
        help_text
    )
    (tmp_path / "sim.py").write_text(PROGRAM)
    (tmp_path / "spec.yaml").write_text(
        "name: program\nmodel:\n  command: [python3, sim.py, '{load}', '{seed}']\n"
        "  inputs: [sim.py]\nfactors:\n  load: [1.0, 2.0]\nreplicates: 2\nseed: 3\noutput: out\n"
    )
    argv = ["run", str(tmp_path / "spec.yaml"), "--scheduler", scheduler_address, "--quiet"]
    assert main(argv) == 0
    # percentiles sum up every entity: only the bytes of each host are per entity
    assert table_header(capsys.readouterr().out) == [
        "load", "makespan", "energy", "wait_p50", "wait_p95", "n"
    ]  # fmt: skip
    assert main([*argv, "--show-metrics", "6"]) == 0
    header = table_header(capsys.readouterr().out)
    assert header == ["load", "makespan", "energy", "wait_p50", "wait_p95", "idle", "n"]


def test_the_failures_line_names_the_output_folder_the_run_was_given(
    tmp_path, scheduler_address, capsys
):
    (tmp_path / "sim.sh").write_text('#!/bin/sh\n[ "$1" -eq 1 ] && exit 3\necho "y=$1"\n')
    (tmp_path / "sim.sh").chmod(0o755)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        'name: half\nmodel:\n  command: [./sim.sh, "{replicate}"]\n  inputs: [sim.sh]\n'
        "replicates: 2\nseed: 4\noutput: out\n"
    )
    out = tmp_path / "other place"
    argv = ["run", str(spec), "--scheduler", scheduler_address, "--quiet", "--out", str(out)]
    assert main(argv) == 1  # tasks failed
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == f"1 tasks failed: `campaign status {spec} --out '{out}'` lists them"
    assert main(["status", str(spec), "--out", str(out)]) == 1
    assert "half: 2 tasks: 1 done, 1 failed, 0 missing" in capsys.readouterr().out
