"""`campaign merge`: the output folders of one campaign's shards joined into one results.nc."""

from __future__ import annotations

from campaign import api
from campaign.cli.arguments import (
    EXIT_FAILED_TASKS,
    EXIT_OK,
    add_confidence_option,
    print_lines,
)


def add_merge(subparsers) -> None:
    p = subparsers.add_parser(
        "merge",
        help="join the output folders of one campaign's shards and write one results.nc",
        description="Join the ledgers of the shards of one campaign (`campaign run SPEC "
        "--shard I/N`): same model, params, seed and design, computed from the same model "
        "code and input files (a folder of another campaign is refused, saying why). A task "
        "stored twice is resolved as on one machine; OUT/results.nc equals a single run's. "
        "Missing tasks are listed per shard.",
    )
    p.add_argument("folders", nargs="+", metavar="SHARD_FOLDER", help="the shards' folders")
    p.add_argument("-o", "--out", required=True, metavar="OUT", help="the merged output folder")
    kept = "a precision target, else of the folders' results.nc, when they agree"
    add_confidence_option(p, default=None, kept=kept)
    p.set_defaults(func=cmd_merge, option_names={"out": "-o"})


PARSERS = {"merge": add_merge}


def cmd_merge(args) -> int:
    from campaign.render.outcomes import merge_lines

    merged = api.merge(args.folders, args.out, confidence=args.confidence)
    print_lines(merge_lines(merged))
    return EXIT_FAILED_TASKS if merged.failed or merged.missing else EXIT_OK
