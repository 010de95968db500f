"""`campaign outputs` and `campaign remetric`: the outputs tasks kept, listed, shown and
extracted; metrics recomputed or added from them without running anything again."""

from __future__ import annotations

import sys

from campaign import api
from campaign.cli.arguments import (
    EXIT_OK,
    add_confidence_option,
    add_place_options,
    add_target_argument,
    add_where_option,
    print_lines,
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
    p.set_defaults(
        func=cmd_outputs,
        option_names={"tasks": "--task", "name": "--show", "folder": "--extract"},
    )


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
        "the kept files) that returns {metric: number}; its module is imported from "
        "PYTHONPATH or the working folder",
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
    add_confidence_option(p, default=None, kept="results.nc")
    p.set_defaults(
        func=cmd_remetric, option_names={"source": "--parse, --metrics-file or --stdout"}
    )


def add_task(subparsers) -> None:
    p = subparsers.add_parser(
        "task",
        help="one task, to run by hand: its levels, seed, params, stored metrics and, with "
        "--prepare, its folder and command line",
        description="Show one task of a campaign, chosen by its key or by one level of each "
        "factor and a replicate: its levels, replicate, seed and params, and what is stored "
        "for it (each metric with every digit). With --prepare DIR, make DIR the task's "
        "folder as a worker makes it (a program's inputs copied there, its templates "
        "filled) and print the line that runs the program there, as the worker ran it: a "
        "number that looks wrong can be checked by hand or in a debugger.",
    )
    add_target_argument(p)
    p.add_argument("--task", metavar="KEY", help="the task's key (as status and outputs list)")
    add_where_option(p)
    p.add_argument("--replicate", type=int, metavar="R", help="with --where: the replicate, from 0")
    add_place_options(p)
    p.add_argument("--prepare", metavar="DIR", help="a new or empty folder to prepare the task in")
    p.set_defaults(
        func=cmd_task,
        option_names={"key": "--task", "replicate": "--replicate", "folder": "--prepare"},
    )


PARSERS = {"outputs": add_outputs, "remetric": add_remetric, "task": add_task}


def cmd_outputs(args) -> int:
    from campaign.render.kept_outputs import extracted_line, listing

    kept = api.outputs(args.target, args.task, args.where, args.out, args.shard)
    if args.show:
        sys.stdout.flush()
        sys.stdout.buffer.write(kept.show(args.show))
        sys.stdout.buffer.flush()
        return EXIT_OK
    if args.extract:
        files, size = kept.extract(args.extract)
        print(extracted_line(files, size, len(kept.tasks), args.extract))
        return EXIT_OK
    print_lines(listing(kept.tasks))
    return EXIT_OK


def cmd_task(args) -> int:
    from campaign.render.task_by_hand import task_lines

    task = api.task(args.target, args.task, args.where, args.replicate, args.out, args.shard)
    prepared = task.prepare(args.prepare) if args.prepare else None
    print_lines(task_lines(task, prepared))
    return EXIT_OK


def cmd_remetric(args) -> int:
    if args.parse:
        source = {"parse": args.parse}
    elif args.metrics_file:
        source = {"file": args.metrics_file}
    else:
        source = "stdout" if args.stdout else None
    done = api.remetric(args.target, source, args.confidence, args.rerun_unkept, say=print)
    print(f"results: {done.results}")
    return EXIT_OK
