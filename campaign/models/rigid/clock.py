"""A trace's own clock: its time zone and calendar months on it (list-scheduling.md
section 7.3, the clock rule of the grid model's log mixing: a fixed offset, no daylight
saving)."""

from __future__ import annotations

import datetime
import re
from zoneinfo import ZoneInfo

from campaign.models.rigid.swf import SwfTrace
from campaign.models.rigid.workload import Workload

MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def utc_offset(trace: SwfTrace) -> float:
    """Seconds east of UTC of the log's clock: the TimeZone header, else TimeZoneString read
    at the log's start, else 0 (UTC)."""
    offset = trace.header_int("TimeZone")
    if offset is not None:
        return float(offset)
    name = trace.header.get("TimeZoneString")
    start = trace.header_int("UnixStartTime")
    if name and start is not None:
        try:
            zone = ZoneInfo(name.strip())
        except (KeyError, ValueError, OSError):
            return 0.0
        moment = datetime.datetime.fromtimestamp(start, datetime.UTC).astimezone(zone)
        return moment.utcoffset().total_seconds()
    return 0.0


def month_start(month: str) -> tuple[float, float]:
    """Seconds since 1970 (on a local clock) of the first instants of ``month`` (YYYY-MM)
    and of the month after it."""
    match = MONTH.match(month)
    if match is None or not 1 <= int(match.group(2)) <= 12:
        raise ValueError(f"parameter 'month' must be YYYY-MM, got {month!r}")
    year, number = int(match.group(1)), int(match.group(2))
    first = datetime.datetime(year, number, 1, tzinfo=datetime.UTC)
    after = datetime.datetime(year + number // 12, number % 12 + 1, 1, tzinfo=datetime.UTC)
    return first.timestamp(), after.timestamp()


def month_slice(workload: Workload, trace: SwfTrace, month: str) -> Workload:
    """The jobs of ``workload`` (times of ``trace``) submitted in ``month`` on the trace's
    clock (UnixStartTime plus its offset)."""
    start = trace.header_int("UnixStartTime")
    if start is None:
        raise ValueError(f"trace {trace.path} has no UnixStartTime header: no calendar month")
    first, after = month_start(month)
    local = start + workload.submit + utc_offset(trace)
    return workload.take((local >= first) & (local < after))
