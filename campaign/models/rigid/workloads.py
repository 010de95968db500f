"""Where traces live: locate, list, show and fetch SWF files; load them once per process.

The workloads folder is ``$CAMPAIGN_WORKLOADS``, by default a per-user cache folder
(``$XDG_CACHE_HOME/campaign/workloads`` or ``~/.cache/campaign/workloads``) that ``fetch``
fills from the Parallel Workloads Archive; the project ships no whole trace (its tests
carry small slices in tests/data). A trace is named by
a file name looked up in that folder, or by a path.

Traces are parsed once per worker process: the cache is keyed by resolved path and file digest
(SHA-256), so a task only carries the name and a changed file is never served stale.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import urllib.request
from pathlib import Path

import numpy as np

from campaign.models.rigid.swf import SwfTrace, clean_mask, job_sizes, read_swf

ARCHIVE = "https://www.cs.huji.ac.il/labs/parallel/workload"
SUFFIXES = (".swf", ".swf.gz")

_DIGESTS: dict[tuple[str, int, int, int, int, int], str] = {}
_TRACES: dict[tuple[str, str], SwfTrace] = {}


def workloads_folder() -> Path:
    """$CAMPAIGN_WORKLOADS, else the per-user cache folder."""
    folder = os.environ.get("CAMPAIGN_WORKLOADS")
    if folder:
        return Path(folder).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "campaign" / "workloads"


def locate(name: str | os.PathLike[str], folder: Path | None = None) -> Path:
    """The file a trace param names: a path if it has a folder part, else a workloads file."""
    text = str(name)
    path = Path(text).expanduser()
    if os.sep in text or (os.altsep and os.altsep in text) or path.is_absolute():
        if not path.is_file():
            raise ValueError(f"trace file {text!r} does not exist")
        return path
    folder = folder if folder is not None else workloads_folder()
    candidate = folder / text
    if candidate.is_file():
        return candidate
    raise ValueError(
        f"trace {text!r} not found in the workloads folder {folder} "
        f"(set CAMPAIGN_WORKLOADS, or run: campaign workloads fetch {text})"
    )


def list_traces(folder: Path | None = None) -> list[Path]:
    """SWF files (plain or gzipped) in the workloads folder, sorted by name."""
    folder = folder if folder is not None else workloads_folder()
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(SUFFIXES))


def file_digest(path: Path) -> str:
    """SHA-256 of a file, memoised by path, size, modification and change times and inode.

    The change time (ctime) cannot be set back the way the modification time can (``touch
    -d``, ``cp -p``, a tar extraction): a file rewritten in place with its size and mtime
    kept is still read again.
    """
    stat = path.stat()
    key = (
        str(path.resolve()),
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ctime_ns,
        stat.st_ino,
        stat.st_dev,
    )
    digest = _DIGESTS.get(key)
    if digest is None:
        sha = hashlib.sha256()
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                sha.update(block)
        digest = _DIGESTS[key] = sha.hexdigest()
    return digest


def load_trace(name: str | os.PathLike[str]) -> SwfTrace:
    """The parsed trace a name or path refers to, parsed at most once per process."""
    path = locate(name)
    key = (str(path.resolve()), file_digest(path))
    trace = _TRACES.get(key)
    if trace is None:
        trace = _TRACES[key] = read_swf(path)
    return trace


def trace_statistics(trace: SwfTrace) -> dict[str, float]:
    """Summary figures printed by ``show``."""
    submit = trace["submit_time"]
    size = job_sizes(trace)
    runtime = trace["run_time"]
    requested = trace["requested_time"]
    keep, counts = clean_mask(trace)
    ok = runtime > 0
    both = ok & (requested > 0)
    procs = trace.max_procs
    span = float(submit.max() - submit.min()) if len(trace) else 0.0
    work = float((np.maximum(runtime, 0) * np.maximum(size, 0)).sum())
    stats = {
        "jobs": float(len(trace)),
        "jobs_after_cleaning": float(keep.sum()),
        "users": float(len(np.unique(trace["user_id"][trace["user_id"] > 0]))),
        "span_days": span / 86400.0,
        "max_size": float(size.max()) if len(trace) else float("nan"),
        "mean_size": float(size[size > 0].mean()) if (size > 0).any() else float("nan"),
        "mean_runtime_s": float(runtime[ok].mean()) if ok.any() else float("nan"),
        "median_runtime_s": float(np.median(runtime[ok])) if ok.any() else float("nan"),
        "mean_estimate_accuracy": (
            float((runtime[both] / requested[both]).mean()) if both.any() else float("nan")
        ),
        "offered_load": work / (procs * span) if procs and span > 0 else float("nan"),
    }
    stats.update({f"n_dropped_{reason}": float(count) for reason, count in counts.items()})
    return stats


def archive_url(name: str) -> str:
    """Archive address of a trace file name (``KTH-SP2-1996-2.1-cln.swf.gz`` lives in
    ``l_kth_sp2/``): the log folder is the name up to the year, lower case, ``-`` as ``_``."""
    match = re.match(r"^(.+?)-(\d{4})-", name)
    if not match or not name.endswith(SUFFIXES):
        raise ValueError(
            f"cannot derive an archive address from {name!r}: expected a name like "
            "KTH-SP2-1996-2.1-cln.swf.gz (or give --url)"
        )
    log = match.group(1).lower().replace("-", "_")
    return f"{ARCHIVE}/l_{log}/{name}"


def fetch(name: str, folder: Path | None = None, url: str | None = None) -> Path:
    """Download a trace from the Parallel Workloads Archive into the workloads folder."""
    if os.sep in name or "/" in name:
        raise ValueError(f"fetch takes a file name, not a path: {name!r}")
    folder = folder if folder is not None else workloads_folder()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    partial = folder / (name + ".part")
    source = url or archive_url(name)
    with urllib.request.urlopen(source, timeout=60) as response, open(partial, "wb") as out:
        while block := response.read(1 << 20):
            out.write(block)
    read_swf(partial)  # refuse a file that is not a valid SWF trace
    partial.replace(target)
    return target


def _show(trace: SwfTrace) -> str:
    lines = [f"# {trace.path}", f"digest: sha256:{file_digest(Path(trace.path))}", "header:"]
    lines += [f"  {key}: {value}" for key, value in trace.header.items()]
    lines.append("statistics:")
    for key, value in trace_statistics(trace).items():
        text = f"{value:.0f}" if float(value).is_integer() else f"{value:.4g}"
        lines.append(f"  {key}: {text}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """``list | show NAME | fetch NAME``: the ``campaign workloads`` command."""
    parser = argparse.ArgumentParser(prog="campaign workloads", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--folder", type=Path, help="workloads folder (default: $CAMPAIGN_WORKLOADS)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="list the traces in the workloads folder")
    show = commands.add_parser("show", help="print a trace's header and statistics")
    show.add_argument("name", help="file name in the workloads folder, or a path")
    get = commands.add_parser("fetch", help="download a trace from the Parallel Workloads Archive")
    get.add_argument("name", help="archive file name, e.g. KTH-SP2-1996-2.1-cln.swf.gz")
    get.add_argument("--url", help="download from this address instead")
    args = parser.parse_args(argv)
    folder = args.folder if args.folder is not None else workloads_folder()
    try:
        if args.command == "list":
            traces = list_traces(folder)
            if not traces:
                print(f"no traces in {folder}")
            for path in traces:
                print(f"{path.name}\t{path.stat().st_size} bytes")
        elif args.command == "show":
            print(_show(read_swf(locate(args.name, folder))))
        else:
            path = fetch(args.name, folder, args.url)
            print(f"fetched {path}")
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
