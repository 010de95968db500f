"""`campaign validate`, `plan`, `status` and `models`: what a spec asks, what is done, what
models there are; nothing runs."""

from __future__ import annotations

import sys

from campaign.cli.options import (
    EXIT_FAILED_TASKS,
    EXIT_OK,
    add_change_options,
    add_place_options,
    placed_spec,
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
    p.add_argument(
        "--pilot", type=int, default=2, metavar="N", help="replicates per cell (default 2)"
    )
    p.add_argument(
        "--target", type=float, default=1.0, metavar="HOURS", help="time to finish (default 1)"
    )
    p.add_argument(
        "--job-cores",
        type=int,
        default=16,
        metavar="C",
        help="cores (one-thread workers) per batch job (default 16)",
    )
    p.add_argument(
        "--workers", type=int, default=None, help="pilot: worker processes of the embedded cluster"
    )
    p.set_defaults(func=cmd_plan)


def add_status(subparsers) -> None:
    p = subparsers.add_parser("status", help="done / failed / missing tasks, from the ledger alone")
    p.add_argument("spec", help="spec file (YAML)")
    p.add_argument("--limit", type=int, default=20, help="failed tasks listed (default 20)")
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
        "--markdown", action="store_true", help="print the documentation tables (Markdown)"
    )
    p.set_defaults(func=cmd_models)


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
    from campaign.plan.plan import check_model
    from campaign.spec.describe import describe_spec
    from campaign.spec.load import load_spec

    spec = load_spec(args.spec)
    check_model(spec)
    print(describe_spec(spec))
    print("spec is valid")
    return EXIT_OK


def cmd_plan(args) -> int:
    from campaign.design.shards import counts, mine
    from campaign.plan.plan import make_plan
    from campaign.spec.describe import describe_spec

    spec, shard = placed_spec(args)
    if args.estimate:
        return estimate(spec, args)
    plan = make_plan(spec, on_change=args.on_change)
    print(describe_spec(plan.spec))
    if plan.damaged:
        print(plan.damaged)
    if plan.changed:
        what = "would run again" if plan.rerun_changed else "would be kept as they are"
        print(
            f"{len(plan.changed)} stored results were computed before "
            f"{plan.change.describe(plan.spec.model)}: they {what}"
        )
    changed = f", {len(plan.changed)} to compute again" if plan.rerun_changed else ""
    if shard is None:
        print(
            f"plan: {plan.done} done, {len(plan.failed)} failed (will be retried), "
            f"{len(plan.missing)} missing{changed}; {len(plan.to_run)} tasks would run"
        )
    else:
        would = len(mine(plan.to_run, shard.owns(plan.design)))
        print(f"plan: {counts(plan, shard).describe(shard)}; {would} tasks would run")
    print_precision(plan)
    return EXIT_OK


def estimate(spec, args) -> int:
    """`plan --estimate`: a pilot of the campaign, then what the whole of it costs."""
    from campaign.render.costs import describe_estimate
    from campaign.sizing_pilot import pilot

    if args.target <= 0 or args.job_cores < 1:
        raise CampaignError("--target must be > 0 hours and --job-cores >= 1")
    found, planned = pilot(
        spec,
        args.pilot,
        args.target,
        args.job_cores,
        say=lambda line: print(line, file=sys.stderr),
        workers=args.workers,
        on_change=args.on_change,
    )
    for line in describe_estimate(found, planned, args.target):
        print(line)
    return EXIT_OK


def print_precision(plan) -> None:
    """With a precision target: where the cells stand, and per precision metric how far; with a
    selection, where its systems stand."""
    from campaign.plan.plan import precision_progress, precision_summary
    from campaign.results.assemble import precision_state

    if plan.rounds is not None:
        state = precision_state(plan.rounds)
        print(precision_summary(state, plan.rounds.target, plan.spec.replicates))
        for line in precision_progress(plan):
            print(line)
    if plan.stages is not None:
        from campaign.plan.selection import selection_summary

        print(selection_summary(plan.stages.state, plan.spec.output))


def cmd_status(args) -> int:
    from campaign.design.shards import counts
    from campaign.plan.plan import make_plan
    from campaign.render.costs import describe_costs
    from campaign.results.ledger_table import read_table
    from campaign.results.resource_group import task_costs

    spec, shard = placed_spec(args)
    plan = make_plan(spec, check_identity=False)
    if shard is None:
        print(
            f"{plan.spec.name}: {plan.tasks} tasks: {plan.done} done, {len(plan.failed)} "
            f"failed, {len(plan.missing)} missing  (ledger {plan.ledger.folder})"
        )
    else:
        plan.failed = [i for i in plan.failed if shard.owns(plan.design)[i]]
        where = f"(ledger {plan.ledger.folder})"
        print(f"{plan.spec.name}: {counts(plan, shard).describe(shard)}  {where}")
    print(f"  output: {plan.spec.output}")
    if plan.damaged:
        print(plan.damaged)
    print_precision(plan)
    for line in describe_costs(task_costs(read_table(plan.ledger, plan.design))):
        print(line)
    print_failed(plan, args.limit)
    if plan.results_path.exists():
        print(f"results: {plan.results_path}")
    if shard is not None:
        return EXIT_FAILED_TASKS if plan.failed or counts(plan, shard).missing else EXIT_OK
    return EXIT_FAILED_TASKS if plan.failed else EXIT_OK


def print_failed(plan, limit: int) -> None:
    """The first ``limit`` failed tasks, a line each with its levels, seed and error."""
    listed = list(plan.design.tasks(plan.failed[:limit]))
    records = plan.ledger.load(only={task.key for task in listed})
    for task in listed:
        record = records[task.key]
        cell = ", ".join(f"{k}={v}" for k, v in plan.design.cell_label(task.cell).items())
        print(
            f"  failed: {cell or '(single cell)'} replicate {task.replicate} "
            f"(seed {task.seed}, {record.get('attempts', 1)} attempts): {record.get('error')}"
        )
    if len(plan.failed) > limit:
        print(f"  ... {len(plan.failed) - limit} more failed tasks (--limit N shows more)")


def cmd_models(args) -> int:
    from campaign.models.describe import list_models, show

    if args.action is None:
        print(list_models())
        return EXIT_OK
    if args.action != "show" or args.name is None:
        raise CampaignError("usage: campaign models [show NAME [--markdown]]")
    try:
        print(show(args.name, markdown=args.markdown))
    except ValueError as error:
        raise CampaignError(str(error)) from None
    return EXIT_OK


def cmd_schema(args) -> int:
    import json

    from campaign.spec.json_schema import json_schema

    text = json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
    if args.out is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        with open(args.out, "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise CampaignError(f"schema: cannot write {args.out}: {error.strerror}") from None
    print(f"wrote {args.out}")
    return EXIT_OK
