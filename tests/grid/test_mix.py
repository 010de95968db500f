"""Mixing logs into one grid workload (parallel-jobs.md section 1.3)."""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
import pytest

from campaign.models.grid.mix import align, mix, utc_offset
from campaign.models.rigid.swf import clean_mask, read_swf

DAY = 86400
# 2024-01-01 was a Monday; 00:00 on the US/Pacific clock (UTC-8) is 08:00 UTC.
MONDAY_PACIFIC = 1704096000


def swf(path: Path, start: int, zone: int, jobs: list[tuple[int, int, int]]) -> Path:
    """A small SWF file: (submit, size, user) per job, runtime 60, estimate 100."""
    lines = [f"; UnixStartTime: {start}", f"; TimeZone: {zone}", "; MaxProcs: 64"]
    for number, (submit, size, user) in enumerate(jobs, start=1):
        fields = [number, submit, 0, 60, size, -1, -1, size, 100, -1, 1, user, 1, -1, 1, 1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def logs(tmp_path):
    # Log A (UTC+1) starts at Monday 00:00 Pacific = 09:00 on its own clock: read on the
    # westernmost clock it starts on a Monday. Its last complete Sunday ends at day 7.
    a = swf(
        tmp_path / "a.swf",
        MONDAY_PACIFIC,
        3600,
        [(0, 1, 7), (5, 2, 3), (3 * DAY, 3, 7), (8 * DAY, 4, 3)],
    )
    # Log B (UTC-8) starts on the Saturday before; 1 warm-up day; Sunday noon is before the
    # first Monday; the job of day 17 falls after its last complete Sunday (day 16).
    b = swf(
        tmp_path / "b.swf",
        MONDAY_PACIFIC - 2 * DAY,
        -28800,
        [
            (0, 5, 5),
            (DAY + DAY // 2, 6, 5),
            (2 * DAY + 100, 7, 5),
            (5 * DAY, 8, 2),
            (9 * DAY + 50, 9, 2),
            (17 * DAY, 10, 5),
        ],
    )
    return read_swf(a), read_swf(b)


def test_alignment_on_the_westernmost_clock(logs):
    a, b = logs
    assert utc_offset(a) == 3600 and utc_offset(b) == -28800
    aligned = align(a, 0, -28800, 64)
    assert aligned.submit.tolist() == [0, 5, 3 * DAY]
    assert aligned.span == 7 * DAY
    # On its own clock log A starts Monday 09:00: its first Monday would be a week later.
    with pytest.raises(ValueError, match="no complete week"):
        align(a, 0, 3600, 64)


def test_warmup_and_last_sunday(logs):
    _, b = logs
    aligned = align(b, 1, -28800, 64)
    assert aligned.submit.tolist() == [100, 3 * DAY, 7 * DAY + 50]
    assert aligned.span == 14 * DAY
    assert aligned.size.tolist() == [7, 8, 9]
    # Three warm-up days end on Tuesday: the log starts a week later.
    late = align(b, 3, -28800, 64)
    assert late.submit.tolist() == [50]
    assert late.span == 7 * DAY


def test_users_renumbered_merge_order_and_repetition(logs):
    workload, origin, dropped = mix(list(logs), [0, 1], 64, days=14)
    assert workload.submit.tolist() == [
        0,
        5,
        100,
        3 * DAY,  # log A before log B at equal times
        3 * DAY,
        7 * DAY,  # log A repeated, shifted by its 7-day span
        7 * DAY + 5,
        7 * DAY + 50,
        10 * DAY,
    ]
    assert origin.tolist() == [1, 1, 2, 1, 2, 1, 1, 2, 1]
    assert workload.size.tolist() == [1, 2, 7, 3, 8, 1, 2, 9, 3]
    # Log A users 3, 7 -> 1, 2; log B users 2, 5 -> 3, 4 (offset by log A's two users).
    assert workload.user.tolist() == [2, 1, 4, 2, 3, 2, 1, 3, 2]
    assert workload.job_id.tolist() == list(range(1, 10))
    assert dropped["too_wide"] == 0


def test_horizon_in_jobs_repeats_logs(logs):
    workload, _, _ = mix([logs[1]], [1], 64, jobs=5)
    assert workload.submit.tolist() == [100, 3 * DAY, 7 * DAY + 50, 14 * DAY + 100, 17 * DAY]


def test_wider_than_the_largest_site_is_dropped(logs):
    workload, _, dropped = mix([logs[1]], [1], 9, days=14)
    # size 10 goes, so the log now ends on day 9 (Monday of its second week): span 7 days
    assert workload.size.tolist() == [7, 8, 7, 8]
    assert dropped["too_wide"] == 1


def _independent_count(path: Path, warmup: int, west: int, days: int, widest: int) -> int:
    """Jobs of one log within its first `days` aligned days, with datetime for the calendar."""
    trace = read_swf(path)
    keep, _ = clean_mask(trace)
    size = np.where(
        trace["allocated_processors"] > 0,
        trace["allocated_processors"],
        trace["requested_processors"],
    )
    keep &= size <= widest
    start = trace.header_int("UnixStartTime")
    clock = datetime.timezone(datetime.timedelta(seconds=west))
    first = datetime.datetime.fromtimestamp(start + trace["submit_time"][keep].min(), clock)
    first += datetime.timedelta(days=warmup)
    monday = first.replace(hour=0, minute=0, second=0, microsecond=0)
    if monday < first:
        monday += datetime.timedelta(days=1)
    while monday.weekday() != 0:
        monday += datetime.timedelta(days=1)
    begin = monday.timestamp()
    moment = start + trace["submit_time"]
    return int((keep & (moment >= begin) & (moment < begin + days * DAY)).sum())


def test_two_real_traces(workloads):
    # LLNL-Thunder has no TimeZone header: its clock comes from TimeZoneString US/Pacific,
    # west of KTH's Stockholm.
    # The Thunder slice holds one whole week: a longer horizon would repeat it, which the
    # independent count below does not do.
    kth = workloads / "KTH-SP2-1996-2.1-cln.swf.gz"
    thunder = workloads / "LLNL-Thunder-2007-1.1-cln.swf.gz"
    traces = [read_swf(kth), read_swf(thunder)]
    assert utc_offset(traces[1]) == -28800
    workload, origin, _ = mix(traces, [8, 0], 4008, days=7)
    assert np.all(np.diff(workload.submit) >= 0)
    assert workload.submit[0] >= 0 and workload.submit[-1] < 7 * DAY
    west = -28800
    assert (origin == 1).sum() == _independent_count(kth, 8, west, 7, 4008)
    assert (origin == 2).sum() == _independent_count(thunder, 0, west, 7, 4008)
    users_a = set(workload.user[origin == 1].tolist())
    users_b = set(workload.user[origin == 2].tolist())
    assert max(users_a) < min(users_b)
    # Log 2's ids start after all users of log 1's aligned log (not only this window's).
    assert min(users_a) == 1 and len(users_b) <= max(users_b) - max(users_a)


def test_window_offset_rotates_whole_weeks(logs):
    # Log B (warm-up 1 day) spans 14 days; one week later its second week comes first and
    # its first week follows as the start of the repetition.
    workload, _, _ = mix([logs[1]], [1], 64, days=14, offset_weeks=1)
    assert workload.submit.tolist() == [50, 7 * DAY + 100, 10 * DAY]
    assert workload.size.tolist() == [9, 7, 8]
    same, _, _ = mix([logs[1]], [1], 64, days=14, offset_weeks=2)
    assert same.submit.tolist() == [100, 3 * DAY, 7 * DAY + 50]
    drawn = {
        tuple(mix([logs[1]], [1], 64, days=14, offset_weeks="random", rng=rng)[0].size.tolist())
        for rng in (np.random.default_rng(s) for s in range(20))
    }
    assert drawn == {(7, 8, 9), (9, 7, 8)}
