"""`campaign run` and `campaign verify`: the commands that compute on a cluster."""

from __future__ import annotations

import argparse
import logging
import shlex

from campaign import api
from campaign.cli.arguments import (
    EXIT_FAILED_TASKS,
    EXIT_OK,
    add_change_options,
    add_cluster_options,
    add_confidence_option,
    add_place_options,
    add_target_argument,
    print_lines,
)
from campaign.errors import CampaignError


def add_run(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="run the missing tasks of a campaign, then write results.nc"
    )
    p.add_argument("spec", help="spec file (YAML)")
    add_place_options(p)
    add_cluster_options(p, tls=True)
    add_batch_system_options(p)
    add_scheduling_options(p)
    p.add_argument(
        "--retries",
        type=int,
        default=1,
        help="times a task is tried again, with the same seed, after a failure of its "
        "surroundings: its worker process died, or the model raised OSError or MemoryError "
        "(default 1); any other exception or a value that is not a number fails the task at "
        "once, as a pure model would fail the same way again (a rerun of the campaign tries "
        "failed tasks again)",
    )
    add_confidence_option(p, default=None, kept="the precision target, else results.nc")
    p.add_argument(
        "--new",
        action="store_true",
        help="set earlier results of this output folder aside (ledger, campaign.json and "
        "results.nc, into OUTPUT/ledger.old-*) and start afresh",
    )
    add_change_options(p)
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="run every task even when the first results (8 finished tasks, over 2 cells) all "
        "failed with the same error; without it such a run stops, what finished stored",
    )
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FACTOR=LEVEL[,LEVEL]",
        help="run only the tasks of these levels of FACTOR (repeatable; the rest stay as they "
        "are); with --rerun-changed, every changed stored result must be among them",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress display (else a live bar on a terminal, a line every 10 s in a log)",
    )
    p.add_argument(
        "--show-metrics",
        type=int,
        default=None,
        metavar="N",
        help="metrics shown in the final summary table, the model's headline metrics first, "
        "then the others in the results' order, leaving out per-entity ones (a name ending in "
        "an index, such as makespan_job3) while there are others (default: the headline "
        "metrics; for a model that names none, such as a program, its first 4 metrics, or all "
        "of them when it has fewer; 0: no table)",
    )
    p.set_defaults(func=cmd_run)


def add_batch_system_options(parser: argparse.ArgumentParser) -> None:
    """--cluster, --security, --task-timeout, --wait-workers: clusters beyond this machine."""
    parser.add_argument(
        "--cluster",
        default=None,
        metavar="FILE",
        help="start a batch-system cluster (SLURM, PBS, ... via dask-jobqueue) described by "
        "this YAML file (see cluster/README.md)",
    )
    parser.add_argument(
        "--security",
        default=None,
        metavar="FILE",
        help="TLS settings (YAML with ca, cert, key paths) to talk to the cluster; "
        "cluster/make-certs.sh writes one",
    )
    parser.add_argument(
        "--task-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="fail a task that runs longer (not retried); its worker process is restarted "
        "and its batchmates are sent again",
    )
    parser.add_argument(
        "--wait-workers",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long to wait while the cluster has no worker (default 60; no limit with "
        "--cluster; 'inf' for no limit)",
    )


def add_scheduling_options(parser: argparse.ArgumentParser) -> None:
    """--tail-replication, --locality, --batch-size: how tasks reach workers."""
    parser.add_argument(
        "--tail-replication",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="at the end of a campaign, move unstarted tasks of long batches to idle workers "
        "and copy straggling tasks there, first result wins (default: on)",
    )
    parser.add_argument(
        "--locality",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="batch tasks that read the same inputs (traces) together and prefer workers that "
        "already loaded them (default: on)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        metavar="N",
        help="tasks per batch sent to a worker (default: sized from measured task durations "
        "to about 5 s, longer on more than 500 slots); results do not depend on it",
    )


def add_verify(subparsers) -> None:
    p = subparsers.add_parser(
        "verify",
        help="run a sample of finished tasks again and compare their metrics bit for bit",
        description="Run a sample of a campaign's finished tasks again (the same sample every "
        "time: drawn from the campaign's seed), store nothing, and compare every metric with "
        "the stored one, bit for bit. Each mismatch is one line (task key, metric, stored and "
        "new value); exit status 1 when there is one. Every finished task's kept outputs are "
        "checked against their records too: one line per task whose outputs are missing or "
        "damaged; a sampled task's kept outputs must come back byte for byte. A model that "
        "reads a clock, the environment or a generator not seeded from its seed shows up here.",
    )
    add_target_argument(p)
    p.add_argument(
        "--sample",
        type=int,
        default=10,
        metavar="N",
        help="finished tasks to run again (default 10)",
    )
    add_cluster_options(p)
    p.set_defaults(func=cmd_verify)


PARSERS = {"run": add_run, "verify": add_verify}


def say(message: str) -> None:
    from campaign.render.progress import say  # above a live progress bar, if one is drawn

    say(message)


def quiet_dask_logs() -> None:
    """Silence Dask's own log lines: when a scheduler or worker goes away it logs errors with
    tracebacks, which `run` replaces by one line of its own (--debug keeps them)."""
    import distributed  # noqa: F401  - sets up Dask's loggers, quieted below

    # Dask's logging config gives some children their own level (tornado.application: error)
    prefixes = ("distributed", "tornado")
    names = [name for name in logging.root.manager.loggerDict if name.startswith(prefixes)]
    for name in ["distributed", "tornado", "tornado.application", *names]:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def cmd_run(args) -> int:
    from campaign.render.outcomes import run_lines, shard_lines

    if args.show_metrics is not None and args.show_metrics < 0:  # a slice from the end
        raise CampaignError(f"--show-metrics {args.show_metrics} must be >= 0 (0: no table)")
    handle = api.open(args.spec, args.out, args.shard)
    if not args.debug:
        quiet_dask_logs()
    dataset = handle.run(
        workers=args.workers,
        scheduler=args.scheduler,
        retries=args.retries,
        confidence=args.confidence,
        new=args.new,
        progress=not args.quiet,
        say=say,
        cluster=args.cluster,
        security=args.security,
        task_timeout=args.task_timeout,
        wait_workers=args.wait_workers,
        replicate_tail=args.tail_replication,
        locality=args.locality,
        on_change=args.on_change,
        batch_size=args.batch_size,
        keep_going=args.keep_going,
        where=args.where,
    )
    attrs = dataset.attrs
    # the spec as the user named it, with the folder given: `status` lists the failures there
    spec_words = shlex.join([args.spec, *(["--out", args.out] if args.out else [])])
    if args.shard is not None:
        print_lines(shard_lines(dataset, handle.spec, spec_words))
        unfinished = attrs["shard_failed"] or attrs["shard_missing"]
        return EXIT_FAILED_TASKS if unfinished else EXIT_OK
    print_lines(
        run_lines(
            dataset, handle.spec, attrs["confidence"], args.show_metrics, spec_words, args.where
        )
    )
    if attrs["tasks_failed"]:
        return EXIT_FAILED_TASKS
    return EXIT_FAILED_TASKS if attrs["tasks_missing"] and not args.where else EXIT_OK


def cmd_verify(args) -> int:
    from campaign.render.outcomes import verify_lines

    if not args.debug:
        quiet_dask_logs()
    verdict = api.verify(args.target, args.sample, workers=args.workers, scheduler=args.scheduler)
    print_lines(verify_lines(verdict))
    return EXIT_FAILED_TASKS if verdict.mismatches or verdict.outputs else EXIT_OK
