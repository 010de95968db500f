"""Fingerprints of PFCFS schedules: one SHA-256 per trace and parameter set over every job's
start, end and executions (begin, end, processors), the preemption count and the preempted
jobs. A change meant to make PFCFS faster must leave every line the same:

    python scripts/pfcfs_fingerprint.py > before.txt     # then, after the change:
    python scripts/pfcfs_fingerprint.py | diff before.txt -

The presets of list-scheduling.md 5.4 and a few sweep levels that reach the other rules
(an even switch limit, gang slices of 1 s, penalties, ``all`` victims, ``wait_half``), on the
test slice of KTH-SP2 (tests/data) and on the whole KTH-SP2 and HPC2N traces of
``$CAMPAIGN_WORKLOADS`` (``--quick``: the test slice only).
"""

from __future__ import annotations

import argparse
import hashlib
import os
from pathlib import Path

import numpy as np

from campaign.models.jobs import build_workload, parse
from campaign.models.rigid.policies import PfcfsOptions
from campaign.models.rigid.policies.pfcfs import PRESETS, PfcfsParams
from campaign.models.rigid.simulate import run_schedule

TESTS_DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
TRACES = ("KTH-SP2-1996-2.1-cln.swf.gz", "HPC2N-2002-2.1-cln.swf.gz")
VARIANTS: dict[str, PfcfsParams] = {
    **PRESETS,
    "n11-G1-x0.4": PfcfsParams(wide=0.4, max_preemptions=11, delay=60, slice=1),
    "n2-all-s5": PfcfsParams(max_preemptions=2, delay=120, slice=120, penalty=5, preempt="all"),
    "n3-s5-half": PfcfsParams(max_preemptions=3, delay=240, slice=60, penalty=5, wait_half=True),
    "n0": PfcfsParams(max_preemptions=0),
}


def fingerprint(schedule) -> str:
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(schedule.start, dtype=np.float64).tobytes())
    digest.update(np.ascontiguousarray(schedule.end, dtype=np.float64).tobytes())
    digest.update(f"{schedule.n_preemptions} {schedule.jobs_preempted}".encode())
    digest.update(repr(tuple(schedule.segments)).encode())
    return digest.hexdigest()


def workload_of(trace: str, folder: Path):
    os.environ["CAMPAIGN_WORKLOADS"] = str(folder)
    workload, processors, _ = build_workload(
        parse({"trace": trace}), np.random.SeedSequence(0).spawn(5)
    )
    return workload, processors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the test slice only")
    args = parser.parse_args()
    folders = [("slice", TESTS_DATA, TRACES[0])]
    if not args.quick:
        full = Path(os.environ.get("CAMPAIGN_WORKLOADS", "../shared/workloads"))
        folders += [("whole", full, trace) for trace in TRACES]
    for label, folder, trace in folders:
        workload, processors = workload_of(trace, folder)
        for name, params in VARIANTS.items():
            schedule = run_schedule(
                workload, processors, "pfcfs", options=PfcfsOptions(params=params)
            )
            print(
                f"{label} {trace} {len(workload)} {name} "
                f"{schedule.n_preemptions} {fingerprint(schedule)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
