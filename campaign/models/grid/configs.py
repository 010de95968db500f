"""Named grid configurations (parallel-jobs.md sections 1.3 and 6).

Machine configurations (``m64`` ... ``m512``) give only machine sizes (512 nodes in all) and
take their jobs from one trace. Log mixes (``grid1``, ``grid2``, ``pwa4``, ``pwa3``) give the
sites and the logs mixed into their workload; a log is named by the prefix of its file name in
the workloads folder (the archive publishes several versions of each log). Sites are listed in
ascending size, as the strategies and the admissibility rule assume.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MACHINES: dict[str, tuple[int, ...]] = {
    "m64": (8,) * 8 + (32,) * 6 + (64,) * 4,
    "m64-8": (64,) * 8,
    "m128": (128,) * 4,
    "m256": (256,) * 2,
    "m256-5": (64,) * 4 + (256,),
    "m384": (16,) * 4 + (64, 384),
    "m512": (512,),
}


@dataclass(frozen=True)
class LogMix:
    """Sites (processors, ascending) and the logs mixed into their workload."""

    sites: tuple[int, ...]
    logs: tuple[tuple[str, float], ...]
    """(file-name prefix, warm-up days) per log, in mixing order."""


MIXES: dict[str, LogMix] = {
    "grid1": LogMix(
        sites=(100, 128, 240, 430, 1024, 1152, 1368),
        logs=(
            ("KTH-SP2-", 8),
            ("SDSC-SP2-", 5),
            ("HPC2N-", 20),
            ("CTC-SP2-", 5),
            ("LANL-CM5-", 0),
            ("SDSC-BLUE-", 6),
            ("SDSC-DS-", 25),
        ),
    ),
    # One DAS-2 log feeds the five DAS-2 sites (4 x 64 and 144).
    "grid2": LogMix(
        sites=(64, 64, 64, 64, 100, 144, 240, 430, 1024),
        logs=(
            ("DAS2-", 124),
            ("KTH-SP2-", 8),
            ("HPC2N-", 20),
            ("CTC-SP2-", 5),
            ("LANL-CM5-", 0),
        ),
    ),
    # Four logs of the Parallel Workloads Archive (Thunder: no warm-up given, none removed).
    "pwa4": LogMix(
        sites=(100, 240, 1152, 4008),
        logs=(("KTH-SP2-", 8), ("HPC2N-", 20), ("SDSC-BLUE-", 6), ("LLNL-Thunder-", 0)),
    ),
    "pwa3": LogMix(
        sites=(100, 240, 1152),
        logs=(("KTH-SP2-", 8), ("HPC2N-", 20), ("SDSC-BLUE-", 6)),
    ),
}

CONFIGS = (*MACHINES, *MIXES)


def resolve_logs(mix: LogMix, folder: Path) -> list[Path]:
    """The file of every log of a mix (first matching name in sorted order), or one error
    naming every missing log."""
    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    found = []
    missing = []
    for prefix, _ in mix.logs:
        match = [p for p in files if p.name.startswith(prefix) and ".swf" in p.name]
        if match:
            found.append(match[0])
        else:
            missing.append(prefix + "*.swf[.gz]")
    if missing:
        raise ValueError(
            f"logs missing from the workloads folder {folder}: {', '.join(missing)} "
            "(fetch them with: campaign workloads fetch NAME, or use config pwa4 / pwa3)"
        )
    return found
