"""What the commands share: exit statuses, the arguments several commands take, and printing
what a renderer wrote."""

from __future__ import annotations

import argparse
import sys

EXIT_OK, EXIT_FAILED_TASKS, EXIT_USAGE = 0, 1, 2
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader left

WHERE_HELP = (
    "keep only these levels of FACTOR (repeatable). The levels are one CSV line: a level "
    "holding a comma or a double quote goes in double quotes, its quotes doubled, e.g. "
    "--where 'name=\"a,b\",c'; true/false select boolean levels. A numeric factor also takes "
    "FACTOR<NUMBER (or <=, >, >=); a factor drawn over a range selects the points whose value "
    "passes (--where 'load<0.5')"
)
RESULTS_HELP = "results.nc (or its folder)"


def tell(line: str) -> None:
    """A note beside a command's output, on stderr: what the numbers it printed or wrote lack
    (a CSV or JSON table on stdout stays the data alone)."""
    print(f"campaign: {line}", file=sys.stderr)


def add_target_argument(parser: argparse.ArgumentParser) -> None:
    """The campaign a command works on, given by its spec or its output folder."""
    parser.add_argument(
        "target",
        metavar="SPEC_OR_OUTPUT",
        help="spec file, or output folder (its results.nc keeps the spec and where it was: "
        "relative paths in it are taken from that folder if it is still there, else the "
        "working folder)",
    )


def add_where_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--where", action="append", default=[], metavar="FACTOR=LEVEL[,LEVEL]", help=WHERE_HELP
    )


def add_confidence_option(
    parser: argparse.ArgumentParser, default: float | None, kept: str | None = None
) -> None:
    """--confidence: fixed for a command that makes results, else the results' own level
    (``kept``: which results, for a command that writes results again from stored ones)."""
    if default is not None:
        told = "confidence level of the intervals (default 0.95)"
    elif kept is not None:
        told = f"confidence level of the intervals (default: that of {kept}, else 0.95)"
    else:
        told = "confidence level (default: the one the results were made with)"
    parser.add_argument("--confidence", type=float, default=default, help=told)


def add_cluster_options(parser: argparse.ArgumentParser, tls: bool = False) -> None:
    """--workers and --scheduler: the embedded cluster's size, or an existing scheduler."""
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes of the embedded cluster (default: one per core)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="use an existing Dask scheduler instead of the embedded cluster"
        + (" (tls://HOST:PORT with --security)" if tls else ""),
    )


def add_change_options(parser: argparse.ArgumentParser, plan: bool = False) -> None:
    """--rerun-changed / --accept-changed: what to do with stored results computed before the
    model's code or an input file changed (without either, such results stop the command)."""
    changed = (
        "stored results computed before the model's code or one of their input files (traces) "
        "changed"
    )
    rerun = (
        f"count the tasks of {changed} as to run, as run --rerun-changed would"
        if plan
        else f"run again the tasks of {changed} (the earlier records are kept in "
        "OUTPUT/ledger.changed-*); without this or --accept-changed, such results stop the run "
        "before anything runs, with one line naming the changed file"
    )
    accept = (
        "count such results as done, as run --accept-changed would"
        if plan
        else "keep such results as they are; the choice and the new digests are recorded in "
        "campaign.json and in results.nc (attribute source_changes)"
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--rerun-changed",
        dest="on_change",
        action="store_const",
        const="rerun",
        default="refuse",
        help=rerun,
    )
    group.add_argument(
        "--accept-changed", dest="on_change", action="store_const", const="accept", help=accept
    )


def add_place_options(parser: argparse.ArgumentParser) -> None:
    """--out and --shard: which output folder a command uses, and which part of the design."""
    parser.add_argument(
        "--out",
        metavar="FOLDER",
        default=None,
        help="output folder instead of the spec's output (for a shard, instead of "
        "OUTPUT/shard-I-of-N)",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        default=None,
        help="only shard I of N (counted from 1) of the design, dealt from the design alone "
        "(shards never overlap and together cover every task), into OUTPUT/shard-I-of-N (or "
        "--out); `campaign merge` joins the shards' folders",
    )


def factor_list(by: list[str] | None) -> list[str] | None:
    """--by given repeatedly or comma-separated, as one list (None: not given)."""
    return None if by is None else [b for item in by for b in item.split(",") if b]


def print_lines(lines: list[str]) -> None:
    """Print a renderer's lines, each on its own."""
    for line in lines:
        print(line)
