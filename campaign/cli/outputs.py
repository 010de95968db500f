"""`campaign outputs` and `campaign remetric`: the outputs tasks kept, listed, shown and
extracted; metrics recomputed or added from them without running anything again."""

from __future__ import annotations

import sys

from campaign.cli.options import (
    EXIT_OK,
    add_confidence_option,
    add_place_options,
    add_target_argument,
    add_where_option,
)


def add_outputs(subparsers) -> None:
    p = subparsers.add_parser(
        "outputs",
        help="list, show or extract the outputs tasks kept (stdout, stderr, kept files)",
        description="List the stored tasks that kept outputs: key, status, replicate, levels "
        "and each output with its size. --task and --where choose tasks; --show prints one "
        "output of one task; --extract writes the chosen tasks' outputs under "
        "DIR/TASK_KEY/ (stdout, stderr and the kept files under their own names). Every "
        "output read is checked against the SHA-256 its record holds.",
    )
    add_target_argument(p)
    p.add_argument(
        "--task", action="append", default=[], metavar="KEY", help="this task (repeatable)"
    )
    add_where_option(p)
    add_place_options(p)
    shown = p.add_mutually_exclusive_group()
    shown.add_argument(
        "--show",
        metavar="NAME",
        help="print one output of the one task chosen: stdout, stderr or a kept file's name",
    )
    shown.add_argument(
        "--extract", metavar="DIR", help="write the chosen tasks' outputs under DIR/TASK_KEY/"
    )
    p.set_defaults(func=cmd_outputs)


def add_remetric(subparsers) -> None:
    p = subparsers.add_parser(
        "remetric",
        help="recompute or add metrics from the outputs tasks kept, running nothing again",
        description="Give every finished task's kept outputs to a metrics parser (the one "
        "command models use at run time; by default the spec's own metrics:, after a fix of "
        "its parser, say) and store the metrics it returns: they replace the "
        "stored metrics of the same name and join the others. results.nc is written again "
        "and its attribute metrics_recomputed says when, with what parser and the SHA-256 "
        "of its code. Refused in one line, nothing stored, when a finished task kept no "
        "outputs (unless --rerun-unkept) or its outputs do not parse.",
    )
    add_target_argument(p)
    source = p.add_mutually_exclusive_group()
    source.add_argument(
        "--parse",
        metavar="MODULE:FUNCTION",
        help="a Python function given the folder of a task's kept outputs (stdout, stderr, "
        "the kept files) that returns {metric: number}",
    )
    source.add_argument(
        "--metrics-file",
        metavar="NAME",
        help="a kept file holding the metrics: JSON, a one-row CSV with a header, or "
        "key=value lines",
    )
    source.add_argument(
        "--stdout",
        action="store_true",
        help="the kept stdout holds the metrics: a JSON object or key=value lines",
    )
    p.add_argument(
        "--rerun-unkept",
        action="store_true",
        help="recompute the tasks that kept outputs and set the records of those that kept "
        "none aside (ledger.unkept-*/), so that `campaign run` computes them again",
    )
    add_confidence_option(p, default=0.95)
    p.set_defaults(func=cmd_remetric)


PARSERS = {"outputs": add_outputs, "remetric": add_remetric}


def cmd_outputs(args) -> int:
    from campaign.pipelines.kept_outputs import extract, open_campaign, select, show

    campaign = open_campaign(args.target, args.out, args.shard)
    chosen = select(campaign, args.task, args.where)
    if args.show:
        sys.stdout.flush()
        sys.stdout.buffer.write(show(campaign, chosen, args.show))
        sys.stdout.buffer.flush()
        return EXIT_OK
    if args.extract:
        files, size = extract(campaign, chosen, args.extract)
        written = f"{files} files ({human_size(size)}) of {len(chosen)} tasks"
        print(f"{written} written under {args.extract}")
        return EXIT_OK
    for line in listing(chosen):
        print(line)
    return EXIT_OK


def listing(chosen) -> list[str]:
    """One line per task: key, status, replicate, levels, then each output and its size and
    what its keep: patterns left out; then the counts, and what the patterns left out of how
    many tasks."""
    from campaign.store.outputs import KeepNotes

    lines = []
    for task in chosen:
        levels = " ".join(f"{name}={value}" for name, value in task.levels.items())
        kept = ", ".join(f"{name} {human_size(size)}" for name, size in task.sizes.items())
        line = f"{task.key}  {task.status:6}  r{task.replicate}  {levels}  {kept or 'nothing'}"
        lines.append(line + left_out(task.record))
    kept = [task for task in chosen if task.sizes]
    total = sum(sum(task.sizes.values()) for task in kept)
    lines.append(f"{len(kept)} tasks kept outputs ({human_size(total)} before compression)")
    lines.extend(KeepNotes(task.record for task in chosen).lines())
    return lines


def left_out(record) -> str:
    """What a task's keep: patterns left out, to end its line ("" when nothing)."""
    unmatched = [repr(pattern) for pattern in record.get("keep_unmatched") or ()]
    refused = [name.removeprefix("files/") for name in record.get("keep_refused") or {}]
    parts = [f"{', '.join(unmatched)} matched nothing"] if unmatched else []
    parts += [f"not kept: {', '.join(refused)}"] if refused else []
    return f"  (keep: {'; '.join(parts)})" if parts else ""


def human_size(size: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} GB"


def cmd_remetric(args) -> int:
    from campaign.pipelines.remetric import remetric
    from campaign.spec.command import MetricsSource

    if args.parse:
        source = MetricsSource("parse", args.parse)
    elif args.metrics_file:
        source = MetricsSource("file", args.metrics_file)
    else:
        source = MetricsSource("stdout") if args.stdout else None
    done = remetric(
        args.target, source, confidence=args.confidence, say=print, rerun_unkept=args.rerun_unkept
    )
    print(f"results: {done.results}")
    return EXIT_OK
