"""Make the trace slices the tests read, tests/data/*.swf.gz, from the archive's full traces.

    python scripts/make_test_slices.py FOLDER          # write tests/data/ from FOLDER's traces
    python scripts/make_test_slices.py --check FOLDER  # exit 1 unless tests/data/ holds them

FOLDER (default: $CAMPAIGN_WORKLOADS) holds the cleaned traces of the Parallel Workloads
Archive (`campaign workloads fetch NAME`). The tests ship slices, not whole logs, so that a
fresh clone runs every test; the full studies and benchmarks read the full traces.

A slice is a run of consecutive job lines of one trace, copied unchanged under the trace's own
file name (so specs that name the trace validate against tests/data/), after the archive's
header and a note saying which jobs it holds. Each source is checked against its SHA-256, and
the gzip stream carries no name and no time, so rerunning gives byte-identical files.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


@dataclass(frozen=True)
class Slice:
    trace: str
    sha256: str
    first: int  # SWF field 1 (job number) of the slice's first line
    last: int  # ... and of its last line
    jobs: int  # job lines from first to last, inclusive
    why: str


SLICES = (
    Slice(
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "c8c1a8db8b99cce4aa8d823a769280debca90485e30758ba35a76b17ac5485bb",
        15,
        3052,
        3000,
        "the log's first 3,000 jobs (30 Sep - 11 Nov 1996): 1,500-job windows anywhere in "
        "them, and after 8 warm-up days four whole weeks for log mixes",
    ),
    Slice(
        "HPC2N-2002-2.1-cln.swf.gz",
        "e56a97045de773f2a395acaf74cb04e6e3393b9c8c5ae12b542b5de93bb04838",
        1,
        6989,
        3000,
        "the log's first 3,000 jobs (28 Jul - 21 Sep 2002): after 20 warm-up days four "
        "whole weeks for log mixes",
    ),
    Slice(
        "LLNL-Thunder-2007-1.1-cln.swf.gz",
        "df27b2ad62ef5ec1d02d592d48390ab2a8250265b9639bb5f0ebaa11f043ee38",
        105908,
        110884,
        4066,
        "Sunday 27 May 00:32 to Monday 4 Jun 2007 07:36 (US/Pacific): the quietest whole "
        "week of the log (3,662 jobs from Monday 28 May), since a log mix needs one, and the "
        "first jobs after it that cleaning keeps, which close the week",
    ),
    Slice(
        "SDSC-BLUE-2000-4.2-cln.swf.gz",
        "9aab21f3cfa108f3ecefa52391b384d996dcf4216f920186f47a734646b2c658",
        9,
        1485,
        1000,
        "the log's first 1,000 jobs (30 Apr - 10 May 2000): the ready specs that mix the four "
        "logs name it",
    ),
)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def make(piece: Slice, folder: Path) -> bytes:
    """The gzip bytes of one slice, from the full trace in ``folder``."""
    source = folder / piece.trace
    if not source.is_file():
        raise SystemExit(f"{source} does not exist: give the folder of the full traces")
    if sha256(source) != piece.sha256:
        raise SystemExit(f"{source} is not the version the slices come from (its SHA-256 differs)")
    header: list[str] = []
    jobs: list[str] = []
    with gzip.open(source, "rt", encoding="utf-8", newline="") as stream:
        for line in stream:
            if line.startswith(";"):
                if jobs:
                    raise SystemExit(f"{source}: a header line among the jobs")
                header.append(line)
                continue
            number = int(line.split()[0])
            if number > piece.last:
                break
            if number >= piece.first:
                jobs.append(line)
    if len(jobs) != piece.jobs or int(jobs[-1].split()[0]) != piece.last:
        raise SystemExit(f"{source}: jobs {piece.first}-{piece.last} are not {piece.jobs} lines")
    note = [
        f"; Note: TEST SLICE, not the whole log: the {piece.jobs} consecutive job lines\n",
        f";       from job {piece.first} to job {piece.last}, unchanged. Made by\n",
        ";       scripts/make_test_slices.py of the campaign project from the archive\n",
        f";       file of this name (SHA-256 {piece.sha256}).\n",
        ";       MaxJobs, MaxRecords and EndTime above describe the whole log.\n",
        ";\n",
    ]
    text = "".join(header + note + jobs).encode("utf-8")
    return gzip.compress(text, compresslevel=9, mtime=0)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    rest = [arg for arg in argv if arg != "--check"]
    folder = rest[0] if rest else os.environ.get("CAMPAIGN_WORKLOADS")
    if not folder:
        print("usage: make_test_slices.py [--check] FOLDER (or set CAMPAIGN_WORKLOADS)")
        return 2
    stale = []
    for piece in SLICES:
        data = make(piece, Path(folder).expanduser())
        target = DATA / piece.trace
        if target.exists() and target.read_bytes() == data:
            continue
        stale.append(target)
        if not check:
            DATA.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            print(f"wrote {target} ({len(data):,} bytes, {piece.jobs} jobs)")
    if check and stale:
        print("differ (python scripts/make_test_slices.py FOLDER): " + ", ".join(map(str, stale)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
