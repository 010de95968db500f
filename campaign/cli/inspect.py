"""`campaign validate`, `plan`, `status` and `models`: what a spec asks, what is done, what
models there are; nothing runs."""

from __future__ import annotations

import sys

from campaign import api
from campaign.cli.arguments import (
    EXIT_FAILED_TASKS,
    EXIT_OK,
    add_change_options,
    add_place_options,
    print_lines,
)
from campaign.errors import CampaignError


def add_validate(subparsers) -> None:
    p = subparsers.add_parser("validate", help="check a spec and print its design")
    p.add_argument("spec", help="spec file (YAML)")
    p.set_defaults(func=cmd_validate)


def add_plan(subparsers) -> None:
    p = subparsers.add_parser("plan", help="show what would run and what is already done")
    p.add_argument("spec", help="spec file (YAML)")
    add_place_options(p)
    add_change_options(p, plan=True)
    p.add_argument(
        "--estimate",
        action="store_true",
        help="size the campaign: run a pilot (the first --pilot replicates of every cell, "
        "stored as results of the campaign), then print its core-hours, slowest cells, "
        "largest peak memory and the batch jobs that finish it in --target hours",
    )
    p.add_argument(  # the pilot's options default to None: given without --estimate, refused
        "--pilot", type=int, metavar="N", help="replicates per cell (default 2)"
    )
    p.add_argument("--target", type=float, metavar="HOURS", help="time to finish (default 1)")
    p.add_argument(
        "--job-cores",
        type=int,
        metavar="C",
        help="cores (one-thread workers) per batch job (default 16)",
    )
    p.add_argument(
        "--workers", type=int, default=None, help="pilot: worker processes of the embedded cluster"
    )
    p.set_defaults(
        func=cmd_plan, option_names={"replicates": "--pilot", "target_hours": "--target"}
    )


def add_status(subparsers) -> None:
    p = subparsers.add_parser(
        "status",
        help="done / failed / missing tasks, from the ledger alone, and those computed before "
        "the model or an input file changed",
    )
    p.add_argument("spec", help="spec file (YAML)")
    p.add_argument(
        "--limit", type=int, default=20, help="failed tasks listed, 0 or more (default 20)"
    )
    add_place_options(p)
    p.set_defaults(func=cmd_status)


def add_models(subparsers) -> None:
    p = subparsers.add_parser(
        "models",
        help="list the models; `models show NAME`: its params, metrics with units, defaults",
    )
    p.add_argument("action", nargs="?", choices=["show"], help="show one model")
    p.add_argument("name", nargs="?", help="the model to show")
    p.add_argument(
        "--markdown",
        action="store_true",
        help="with show NAME: print the documentation tables (Markdown)",
    )
    p.set_defaults(func=cmd_models, option_names={"name": "show NAME"})


def add_schema(subparsers) -> None:
    p = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of a spec file, for editors (the YAML language server)",
    )
    p.add_argument("-o", "--out", metavar="FILE", help="write it to FILE instead")
    p.set_defaults(func=cmd_schema)


PARSERS = {
    "validate": add_validate,
    "plan": add_plan,
    "status": add_status,
    "models": add_models,
    "schema": add_schema,
}


def cmd_validate(args) -> int:
    from campaign.render.state import validate_lines

    print_lines(validate_lines(api.validate(args.spec)))
    return EXIT_OK


PILOT_OPTIONS = {"--pilot": 2, "--target": 1.0, "--job-cores": 16, "--workers": None}
"""The options of `plan --estimate`'s pilot and their defaults."""


def cmd_plan(args) -> int:
    from campaign.render.state import plan_lines

    if args.estimate:
        return estimate(args)
    for option in PILOT_OPTIONS:
        if getattr(args, option.lstrip("-").replace("-", "_")) is not None:
            raise CampaignError(
                f"{option} sizes the pilot of --estimate; give --estimate too, or leave it out"
            )
    plan = api.plan(args.spec, args.out, args.shard, args.on_change)
    print_lines(plan_lines(plan, args.shard))
    return EXIT_OK


def estimate(args) -> int:
    """`plan --estimate`: a pilot of the campaign, then what the whole of it costs."""
    from campaign.render.costs import describe_estimate

    pilot, target = PILOT_OPTIONS["--pilot"], PILOT_OPTIONS["--target"]
    pilot = pilot if args.pilot is None else args.pilot
    target = target if args.target is None else args.target
    cores = PILOT_OPTIONS["--job-cores"] if args.job_cores is None else args.job_cores
    found, planned = api.estimate(
        args.spec,
        pilot,
        target,
        cores,
        args.out,
        args.shard,
        say=lambda line: print(line, file=sys.stderr),
        workers=args.workers,
        on_change=args.on_change,
    )
    print_lines(describe_estimate(found, planned, target))
    return EXIT_OK


def cmd_status(args) -> int:
    from campaign.render.state import status_lines, unfinished

    if args.limit < 0:  # a slice from the end would list all but the last and miscount them
        raise CampaignError(f"--limit {args.limit} must be >= 0")
    plan = api.status(args.spec, args.out, args.shard)
    print_lines(status_lines(plan, args.shard, args.limit))
    return EXIT_FAILED_TASKS if unfinished(plan, args.shard) else EXIT_OK


def cmd_models(args) -> int:
    if args.action is not None and args.name is None:
        raise CampaignError("usage: campaign models [show NAME [--markdown]]")
    print(api.models(args.name if args.action else None, markdown=args.markdown))
    return EXIT_OK


def cmd_schema(args) -> int:
    written = api.schema(args.out)
    if args.out is None:
        sys.stdout.write(written)
    else:
        print(f"wrote {written}")
    return EXIT_OK
