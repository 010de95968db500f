"""SWF reading, malformed lines and the cleaning filters of parallel-jobs.md 1.2."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from campaign.models.rigid.swf import FIELDS, clean_mask, read_swf
from campaign.models.rigid.workload import from_trace

HEADER = """; Version: 2.2
; Computer: Test machine
; MaxNodes: 8
; MaxProcs: 16
; UnixStartTime: 1000000000
; TimeZoneString: Europe/Stockholm
;
"""
# job submit wait run alloc cpu mem reqp reqt reqm status user group exe queue part prec think
ROWS = [
    "1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1",
    "2 10 0 50 -1 -1 -1 2 60 -1 1 2 1 -1 -1 -1 -1 -1",  # size from requested processors
    "3 20 0 -1 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1",  # unknown run time
    "4 30 0 10 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1",  # unknown estimate
    "5 40 0 10 2 -1 -1 2 60 -1 1 -1 1 -1 -1 -1 -1 -1",  # unknown user
    "6 50 0 10 2 -1 -1 2 60 -1 0 1 1 -1 -1 -1 -1 -1",  # failed
    "7 60 0 10 2 -1 -1 2 60 -1 5 1 1 -1 -1 -1 -1 -1",  # cancelled
    "8 70 0 10 32 -1 -1 32 60 -1 1 1 1 -1 -1 -1 -1 -1",  # wider than the machine
    "9 80 0 10 -1 -1 -1 -1 60 -1 1 1 1 -1 -1 -1 -1 -1",  # no size at all
    "10 90.5 0 12.5 1 -1 -1 1 60 -1 4 3 1 -1 -1 -1 -1 -1",  # partial record, last failed
]


def write(path, rows=ROWS, header=HEADER, compress=False):
    text = header + "\n".join(rows) + "\n"
    if compress:
        with gzip.open(path, "wt") as stream:
            stream.write(text)
    else:
        path.write_text(text)
    return path


def test_reads_all_fields_and_header(tmp_path):
    trace = read_swf(write(tmp_path / "t.swf"))
    assert len(trace) == len(ROWS)
    assert set(trace.columns) == set(FIELDS) and len(FIELDS) == 18
    assert trace["job_number"].tolist() == list(range(1, 11))
    assert trace["submit_time"][9] == 90.5
    assert trace["run_time"][9] == 12.5
    assert trace["requested_time"][3] == -1
    assert trace["think_time"][0] == -1
    assert trace.header["Computer"] == "Test machine"
    assert trace.header_int("MaxProcs") == 16
    assert trace.header_int("MaxNodes") == 8
    assert trace.header_int("UnixStartTime") == 1_000_000_000
    assert trace.header["TimeZoneString"] == "Europe/Stockholm"
    assert trace.max_procs == 16
    assert trace.line_numbers[0] == HEADER.count("\n") + 1


def test_gzip_gives_the_same_columns(tmp_path):
    plain = read_swf(write(tmp_path / "t.swf"))
    packed = read_swf(write(tmp_path / "t.swf.gz", compress=True))
    for name in FIELDS:
        np.testing.assert_array_equal(plain[name], packed[name])


def test_max_nodes_is_used_without_max_procs(tmp_path):
    trace = read_swf(write(tmp_path / "t.swf", header="; MaxNodes: 8\n"))
    assert trace.max_procs == 8


def test_a_short_line_is_one_error_with_its_line_number(tmp_path):
    rows = ROWS[:3] + ["4 30 0 10 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1"] + ROWS[4:]
    path = write(tmp_path / "bad.swf", rows)
    line = HEADER.count("\n") + 4
    with pytest.raises(
        ValueError, match=rf"bad\.swf: line {line}: expected 18 SWF fields, found 17"
    ):
        read_swf(path)


def test_a_non_number_is_one_error_with_its_line_and_field(tmp_path):
    rows = ROWS[:1] + ["2 10 0 fifty -1 -1 -1 2 60 -1 1 2 1 -1 -1 -1 -1 -1"]
    path = write(tmp_path / "bad.swf.gz", rows, compress=True)
    line = HEADER.count("\n") + 2
    with pytest.raises(ValueError, match=rf"line {line}: field 4 \(run_time\) is not a number"):
        read_swf(path)


def test_cleaning_counts_each_reason(tmp_path):
    trace = read_swf(write(tmp_path / "t.swf"))
    keep, counts = clean_mask(trace)
    assert keep.tolist() == [True, True, False, False, False, False, False, True, False, False]
    assert counts == {
        "job_number": 0,
        "submit_time": 0,
        "run_time": 1,
        "size": 1,
        "requested_time": 1,
        "user_id": 1,
        "status": 3,
    }


def test_workload_without_cleaning_keeps_every_job_with_a_size(tmp_path):
    trace = read_swf(write(tmp_path / "t.swf"))
    workload, counts = from_trace(trace, clean=False)
    # Job 9 has no size; job 8 is wider than MaxProcs 16.
    assert counts == {"size": 1, "too_wide": 1}
    assert workload.job_id.tolist() == [1, 2, 3, 4, 5, 6, 7, 10]
    assert workload.size.tolist() == [4, 2, 2, 2, 2, 2, 2, 1]
    assert workload.runtime[2] == 0  # unknown run time replays as 0 s
    assert workload.unknown_runtime.tolist() == [False, False, True, *[False] * 5]
    assert workload.unknown_runtimes == 1
    assert workload.take(slice(3, None)).unknown_runtimes == 0
    assert np.isnan(workload.estimate[3])  # unknown estimate
    assert workload.processors == 16


def test_workload_with_cleaning(tmp_path):
    trace = read_swf(write(tmp_path / "t.swf"))
    workload, counts = from_trace(trace, clean=True)
    assert workload.job_id.tolist() == [1, 2]
    assert counts["too_wide"] == 1 and counts["status"] == 3


def test_a_trace_without_jobs_is_one_error(tmp_path):
    path = write(tmp_path / "empty.swf", rows=[])
    with pytest.raises(ValueError) as info:
        read_swf(path)
    assert str(info.value) == f"trace {path} has no jobs (no job line after its header)"


def test_the_jobs_model_counts_the_jobs_it_replays_with_an_unknown_run_time(tmp_path):
    from campaign.models.jobs import run

    rows = [*ROWS[:2], ROWS[2], ROWS[2].replace("3 20 0 -1", "11 25 0 -7", 1), *ROWS[3:]]
    path = write(tmp_path / "t.swf", rows=rows)
    values = run({"trace": str(path)}, 1)
    assert (values["jobs"], values["n_unknown_run_time"]) == (9, 2)
    assert run({"trace": str(path), "jobs": 2}, 1)["n_unknown_run_time"] == 0
    cleaned = run({"trace": str(path), "clean": True}, 1)
    assert (cleaned["n_unknown_run_time"], cleaned["n_dropped_run_time"]) == (0, 2)


def test_a_run_left_without_jobs_fails_instead_of_giving_nan(tmp_path):
    from campaign.models.jobs import run

    path = write(tmp_path / "t.swf")
    with pytest.raises(ValueError) as info:
        run({"trace": str(path), "warmup_days": 1}, 1)
    assert str(info.value) == (
        "no job is left to simulate (jobs dropped: 1 size, 1 too_wide; then warmup_days, days "
        "and jobs shape the rest): every metric would be undefined"
    )


def test_mean_slowdown_of_jobs_replayed_as_0_s_is_over_the_others(tmp_path):
    """A job of 0 s has no slowdown (its response over 0 s is inf, or 0/0): mean_slowdown is
    the mean over the jobs of a positive runtime, n_zero_run_time counts those it leaves out
    (here the two unknown run times replayed as 0 s, without clean), and with clean, which
    drops them, it is the same mean over the same jobs."""
    from campaign.models.jobs import run, schedule

    rows = [*ROWS[:2], ROWS[2], ROWS[2].replace("3 20 0 -1", "11 25 0 -7", 1), *ROWS[3:]]
    path = write(tmp_path / "t.swf", rows=rows)
    values = run({"trace": str(path)}, 1)
    done = schedule({"trace": str(path)}, 1)
    timed = done.runtime > 0
    expected = ((done.end - done.workload.submit)[timed] / done.runtime[timed]).mean()
    assert values["mean_slowdown"] == pytest.approx(expected)
    assert np.isfinite(values["mean_slowdown"]) and values["n_zero_run_time"] == 2
    assert values["n_unknown_run_time"] == 2
    assert run({"trace": str(path), "clean": True}, 1)["n_zero_run_time"] == 0
