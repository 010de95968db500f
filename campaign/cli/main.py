"""The `campaign` command: validate, plan, run, status, verify, query, plot, report, models,
and the commands models declare (``campaign workloads`` of the jobs model)."""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys
import threading
import traceback
from pathlib import Path

from campaign.errors import CampaignError, ParameterError

EXIT_OK, EXIT_FAILED_TASKS, EXIT_USAGE = 0, 1, 2
RANK_COLUMNS = (  # the columns of `query --rank` (argparse help: %% is a percent sign)
    "rank: 1 = the smallest D_means; D_means (%%): the degradation from the best level, "
    "100 (value / best - 1), on cell means, averaged over the metrics and the instances (cells "
    "of the other factors); D_replicates (%%): the same within each replicate, averaged over "
    "the replicates; ci_low, ci_high (%%): the Student-t interval of D_replicates over the "
    "replicates (paired when the factor's levels share seeds); n: the replicates in it (those "
    "where every level, metric and instance has a value). Warnings follow when the factor is "
    "not paired, when fewer than 5 replicates make the interval, or when a best value near 0 "
    "makes degradations explode; with 3 levels or more and 2 instances or more, a Friedman "
    "test of the levels across instances."
)

OPTIONS = {  # the option each library parameter is given by, for error messages
    "baseline": "--baseline",
    "by": "--by",
    "confidence": "--confidence",
    "factor": "--factor",
    "fmt": "--format",
    "log": "--log",
    "metric": "--metric",
    "metrics": "--metric",
    "path": "-o",
    "where": "--where",
    "x": "--x",
}

WHERE_HELP = (
    "keep only these levels of FACTOR (repeatable). The levels are one CSV line: a level "
    "holding a comma or a double quote goes in double quotes, its quotes doubled, e.g. "
    "--where 'name=\"a,b\",c'; true/false select boolean levels"
)


def _say(message: str) -> None:
    from campaign.render.progress import say  # above a live progress bar, if one is drawn

    say(message)


def describe_spec(spec) -> str:
    lines = [f"campaign {spec.name}: model {spec.model}"]
    if spec.description:
        lines.append(f"  {spec.description.strip()}")
    for name, value in spec.params.items():
        lines.append(f"  param  {name} = {value!r}")
    for factor in spec.factors:
        paired = " (paired)" if factor.name in spec.paired else ""
        if factor.range is not None:
            low, high = factor.range
            lines.append(f"  factor {factor.name}{paired}: range {low:g} to {high:g}")
            continue
        levels = ", ".join(str(label) for label in factor.labels)
        if factor.labels == ("low", "high"):  # a range only in a design of points
            levels += (
                " (labelled levels; a range {low, high} needs design: latin_hypercube or sobol)"
            )
        lines.append(f"  factor {factor.name}{paired}: {len(factor.labels)} levels: {levels}")
    lines.extend(f"  {line}" for line in describe_design(spec))
    if spec.precision is None:
        lines.append(
            f"  design: {spec.cells} cells x {spec.replicates} replicates = {spec.tasks} tasks; "
            f"seed {spec.seed}"
        )
    else:
        from campaign.plan.plan import precision_target

        least = spec.precision.min_replicates
        lines.append(
            f"  design: {spec.cells} cells x {least} to {spec.replicates} replicates = "
            f"{spec.cells * least} to {spec.tasks} tasks; seed {spec.seed}"
        )
        lines.append(f"  {precision_target(spec.precision)}")
    if spec.metrics:
        lines.append(f"  metrics: {', '.join(spec.metrics)}")
    lines.append(f"  output: {spec.output}")
    return "\n".join(lines)


def describe_design(spec) -> list[str]:
    """A design other than the full factorial in words: a fraction's generators, defining
    relation and aliases; how Latin hypercube or Sobol points are drawn."""
    design = spec.design
    if design.fraction is not None:
        fraction = design.fraction
        asked = f" (the smallest standard one of resolution >= {design.resolution})"
        lines = [
            f"fractional: {fraction.title}{asked if design.resolution else ''}",
            f"  generators: {fraction.generator_text() or 'none (the full factorial)'}",
            f"  defining relation: {fraction.relation_text()}",
        ]
        aliases = fraction.alias_lines()
        lines.append(
            "  aliases (main effects and two-factor interactions):"
            if aliases
            else "  aliases: no main effect or two-factor interaction is aliased with another"
        )
        lines.extend(f"    {line}" for line in aliases)
        if spec.paired:
            lines.append(f"  {_paired_runs(spec)}")
        return lines
    if design.kind == "full":
        return []
    what = "Latin hypercube" if design.kind == "latin_hypercube" else "Sobol sequence (scrambled)"
    ranges = ", ".join(f.name for f in spec.factors if f.range is not None)
    sizes = " then ".join(map(str, design.sizes))
    crossed = ", ".join(f.name for f in spec.crossed)
    line = f"{design.kind}: {what}, {sizes} points over {ranges}, drawn from seed {spec.seed}"
    points = design.sizes[-1]
    if design.kind == "sobol" and points & (points - 1):
        line += f" (not a power of 2: a Sobol sequence is balanced at 2^m points, not {points})"
    return [line + (f"; crossed with {crossed}" if crossed else "")]


def _paired_runs(spec) -> str:
    """How many runs of a fraction share seeds through its paired factors: runs share a seed
    when they differ in paired factors only, which a fraction may never have."""
    import numpy as np

    runs = spec.design.fraction.runs
    unpaired = [i for i, f in enumerate(spec.factors) if f.name not in spec.paired]
    groups = len(np.unique(runs[:, unpaired], axis=0)) if unpaired else 1
    if groups == len(runs):
        return (
            f"paired: no two runs of the fraction differ in {', '.join(spec.paired)} alone, "
            "so no run shares its seeds with another"
        )
    return f"paired: the {len(runs)} runs share seeds in {groups} groups"


def cmd_validate(args) -> int:
    from campaign.plan.plan import check_model
    from campaign.spec.load import load_spec

    spec = load_spec(args.spec)
    check_model(spec)
    print(describe_spec(spec))
    print("spec is valid")
    return EXIT_OK


def placed_spec(args):
    """The spec of a command, with the output folder its --out and --shard options say."""
    from campaign.design.shards import Shard, placed
    from campaign.spec.load import load_spec

    shard = Shard.parse(args.shard) if args.shard is not None else None
    return placed(load_spec(args.spec), args.out, shard), shard


def cmd_plan(args) -> int:
    from campaign.design.shards import counts, mine
    from campaign.plan.plan import make_plan

    spec, shard = placed_spec(args)
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
    _print_precision(plan)
    return EXIT_OK


def _print_precision(plan) -> None:
    """With a precision target: where the cells stand, and per precision metric how far."""
    from campaign.plan.plan import precision_progress, precision_summary
    from campaign.results.assemble import precision_state

    if plan.rounds is not None:
        state = precision_state(plan.rounds)
        print(precision_summary(state, plan.rounds.target, plan.spec.replicates))
        for line in precision_progress(plan):
            print(line)


def cmd_status(args) -> int:
    from campaign.design.shards import counts
    from campaign.plan.plan import make_plan

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
    _print_precision(plan)
    listed = list(plan.design.tasks(plan.failed[: args.limit]))
    records = plan.ledger.load(only={task.key for task in listed})
    for task in listed:
        record = records[task.key]
        cell = ", ".join(f"{k}={v}" for k, v in plan.design.cell_label(task.cell).items())
        print(
            f"  failed: {cell or '(single cell)'} replicate {task.replicate} "
            f"(seed {task.seed}, {record.get('attempts', 1)} attempts): {record.get('error')}"
        )
    if len(plan.failed) > args.limit:
        print(f"  ... {len(plan.failed) - args.limit} more failed tasks (--limit N shows more)")
    if plan.results_path.exists():
        print(f"results: {plan.results_path}")
    if shard is not None:
        return EXIT_FAILED_TASKS if plan.failed or counts(plan, shard).missing else EXIT_OK
    return EXIT_FAILED_TASKS if plan.failed else EXIT_OK


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
    from campaign.analysis.query import summary_table
    from campaign.design.shards import Shard, placed
    from campaign.plan.plan import RESULTS_FILE, precision_summary
    from campaign.render.summary import render_summary
    from campaign.results.assemble import metrics_of, nan_note
    from campaign.runner import run
    from campaign.spec.load import load_spec

    shard = Shard.parse(args.shard) if args.shard is not None else None
    spec = load_spec(args.spec)
    if not args.debug:
        quiet_dask_logs()
    dataset = run(
        spec,
        shard=shard,
        output=args.out,
        workers=args.workers,
        scheduler=args.scheduler,
        retries=args.retries,
        confidence=args.confidence,
        new=args.new,
        progress=not args.quiet,
        say=_say,
        cluster=args.cluster,
        security=args.security,
        task_timeout=args.task_timeout,
        wait_workers=args.wait_workers,
        replicate_tail=args.tail_replication,
        locality=args.locality,
        on_change=args.on_change,
        batch_size=args.batch_size,
    )
    spec = placed(spec, args.out, shard)
    if shard is not None:
        return _shard_done(dataset, args, spec)
    per_entity = re.compile(r"_[a-z]+\d+(_|$)")  # makespan_job3, satisfaction_user2: not headline
    headline = [m for m in metrics_of(dataset) if not per_entity.search(m)]
    metrics = (headline or metrics_of(dataset))[: args.show_metrics]
    if metrics and dataset.attrs["tasks_ok"]:
        frame = summary_table(dataset, metrics=metrics)
        print()
        print(f"Summary: mean ± half-width of the {args.confidence:.0%} confidence interval")
        print(render_summary(frame, metrics, max_rows=40), end="")
    ok, failed = dataset.attrs["tasks_ok"], dataset.attrs["tasks_failed"]
    missing = dataset.attrs["tasks_missing"]
    print()
    print(f"{ok} tasks ok, {failed} failed, {missing} missing")
    note = nan_note(dataset)
    if note:
        print(note)
    if "precision_state" in dataset:
        state, replicates = dataset["precision_state"], dataset["precision_replicates"]
        print(precision_summary(state.values, replicates.values, spec.replicates))
    print(f"results: {spec.output / RESULTS_FILE}")
    if failed:
        print(f"{failed} tasks failed: `campaign status {args.spec}` lists them")
        return EXIT_FAILED_TASKS
    return EXIT_OK if not missing else EXIT_FAILED_TASKS


def cmd_verify(args) -> int:
    from campaign.verify import verify

    if not args.debug:
        quiet_dask_logs()
    verdict = verify(args.target, args.sample, workers=args.workers, scheduler=args.scheduler)
    for mismatch in verdict.mismatches:
        print(mismatch.line())
    if verdict.left_out:
        print(
            f"verify: {verdict.left_out} stored results computed from other code or inputs "
            "than now were left out"
        )
    print(verdict.summary())
    return EXIT_FAILED_TASKS if verdict.mismatches else EXIT_OK


def _shard_done(dataset, args, spec) -> int:
    """What a shard's run prints: how far the shard stands; its folder holds no results.nc."""
    attrs = dataset.attrs
    print()
    print(
        f"shard {attrs['shard']}: {attrs['shard_ok']} of {attrs['shard_tasks']} of its tasks "
        f"done, {attrs['shard_failed']} failed, {attrs['shard_missing']} missing"
    )
    print(
        f"ledger: {spec.output / 'ledger'} (a shard writes no results.nc: once every shard "
        "is done, `campaign merge SHARD_FOLDERS... -o OUT` writes the campaign's)"
    )
    if attrs["shard_failed"]:
        print(
            f"{attrs['shard_failed']} tasks failed: `campaign status {args.spec} --shard "
            f"{attrs['shard']}` lists them"
        )
    return EXIT_FAILED_TASKS if attrs["shard_failed"] or attrs["shard_missing"] else EXIT_OK


def cmd_merge(args) -> int:
    from campaign.store.merge import describe, merge

    merged = merge(args.folders, args.out, confidence=args.confidence)
    for line in describe(merged):
        print(line)
    print(f"results: {merged.out / 'results.nc'}")
    return EXIT_FAILED_TASKS if merged.failed or merged.missing else EXIT_OK


def cmd_query(args) -> int:
    from campaign.analysis.query import check_confidence, summary_table
    from campaign.render.summary import render_summary
    from campaign.results.assemble import metrics_of, open_results

    check_confidence(args.confidence)
    dataset = open_results(args.results)
    if args.rank:
        return _rank(dataset, args)
    metrics = args.metric or metrics_of(dataset)
    by = None if args.by is None else [b for item in args.by for b in item.split(",") if b]
    frame = summary_table(
        dataset, metrics=metrics, by=by, where=args.where, confidence=args.confidence
    )
    confidence = args.confidence or float(dataset.attrs.get("confidence", 0.95))
    units = {m: dataset.variables[m].attrs.get("units", "") for m in metrics}
    print(render_summary(frame, metrics, args.format, units, confidence), end="")
    return EXIT_OK


def _headline(dataset) -> list[str]:
    """The headline metrics the results name; for a file made before they were recorded,
    those its model declares (when it can still be loaded)."""
    from campaign.models import load_model
    from campaign.results.assemble import headline_metrics

    if "headline_metrics" in dataset.attrs or "model" not in dataset.attrs:
        return headline_metrics(dataset)
    try:
        return list(load_model(str(dataset.attrs["model"])).headline)
    except ValueError:
        return []


def _rank(dataset, args) -> int:
    import textwrap

    from campaign.analysis.comparison import is_paired
    from campaign.analysis.query import parse_where, select
    from campaign.analysis.ranking import LEGEND, degradation, ranking_notes
    from campaign.render.ranking import render_ranking
    from campaign.results.assemble import factors_of, metrics_of

    factors = factors_of(dataset)
    if args.rank not in factors:
        raise CampaignError(f"--rank {args.rank!r} is not a factor; factors: {', '.join(factors)}")
    available = metrics_of(dataset)
    headline = _headline(dataset)
    metrics = args.metric or [m for m in headline if m in available]
    for metric in metrics:
        if metric not in available:
            raise CampaignError(
                f"--metric {metric!r} is not in the results; metrics: {', '.join(available)}"
            )
    if not metrics:
        reason = (
            f"the headline metrics {', '.join(headline)} are not in the results"
            if headline
            else "the results name no headline metrics"
        )
        raise CampaignError(f"--rank needs --metric ({reason}); metrics: {', '.join(available)}")
    selected = select(dataset, parse_where(dataset, args.where))
    confidence = args.confidence
    if confidence is None:
        confidence = float(dataset.attrs.get("confidence", 0.95))
    instances = [f for f in factors if f != args.rank]
    result = degradation(selected, args.rank, metrics, instances, confidence)
    paired = is_paired(dataset, args.rank)
    over = (
        f"paired replicates (the levels of {args.rank} share seeds)"
        if paired
        else f"replicates, not paired (the levels of {args.rank} have seeds of their own)"
    )
    title = (
        f"degradation from the best {args.rank} (%), mean over {', '.join(metrics)} and over "
        f"instances ({', '.join(instances) or 'one'}); {confidence:.0%} interval over {over}"
    )
    notes = [LEGEND]
    left_out = int(result["D_left_out"].sum())
    if left_out:
        notes.append(
            f"{left_out} replicates left out of the interval (some {args.rank}, metric "
            "or instance has no value in them: failed, missing or NaN)"
        )
    notes += ranking_notes(result, paired)
    if args.format != "table":
        print(render_ranking(result, args.format, [title, *notes]), end="")
        return EXIT_OK
    print(title)
    print(render_ranking(result), end="")
    for line in notes:  # the left-out count stays on one line
        left_out_line = left_out and line == notes[1]
        print(line if left_out_line else textwrap.fill(line, 100, subsequent_indent="  "))
    return EXIT_OK


def cmd_plot(args) -> int:
    from campaign.analysis.query import check_confidence
    from campaign.render.figures import plot_metric, save_figure, write_figures
    from campaign.results.assemble import open_results, results_file
    from campaign.store.folder import check_folder, image_path

    check_confidence(args.confidence)
    if args.out:
        out = image_path(args.out)
    else:
        folder = results_file(args.results).parent / "figures"
        check_folder(folder, "figures")
    dataset = open_results(args.results)
    figure = plot_metric(
        dataset, args.metric, args.x, args.by, args.where, args.confidence, args.log
    )
    if args.out:
        save_figure(figure, out)
        print(f"plot: {out}")
    else:
        for path in write_figures(figure, folder, args.metric):
            print(f"plot: {path}")
    return EXIT_OK


def cmd_report(args) -> int:
    from campaign.render.report import write_report
    from campaign.results.assemble import open_failures, open_results, results_file
    from campaign.store.folder import check_folder

    default = results_file(args.results).parent
    folder = Path(args.out).expanduser() if args.out else default
    check_folder(folder, f"--out {args.out}" if args.out else "report")
    dataset = open_results(args.results)
    path = write_report(dataset, folder, args.metric, open_failures(args.results), args.baseline)
    print(f"report: {path}")
    return EXIT_OK


def cmd_compare(args) -> int:
    from campaign.analysis.comparison import compare
    from campaign.analysis.query import check_confidence
    from campaign.render.comparison import render_comparison
    from campaign.results.assemble import open_results

    check_confidence(args.confidence)
    dataset = open_results(args.results)
    by = None if args.by is None else [b for item in args.by for b in item.split(",") if b]
    result = compare(
        dataset,
        args.factor,
        args.baseline,
        args.metric,
        by=by,
        where=args.where,
        confidence=args.confidence,
        paired=False if args.unpaired else None,
    )
    print(render_comparison(result, args.format), end="")
    return EXIT_OK


def cmd_effects(args) -> int:
    from campaign.analysis.anova import effects
    from campaign.render.effects import render_effects
    from campaign.results.assemble import open_results

    dataset = open_results(args.results)
    print(render_effects(effects(dataset, args.metric, args.where), args.format), end="")
    return EXIT_OK


def cmd_export(args) -> int:
    from campaign.render.export import export
    from campaign.results.assemble import open_failures, open_results, results_file

    fmt = args.format
    if args.out:
        out = Path(args.out).expanduser()
    else:
        out = results_file(args.results).with_suffix(f".{fmt or 'csv'}")
    dataset = open_results(args.results)
    for path in export(dataset, open_failures(args.results), out, fmt):
        print(f"wrote {path}")
    return EXIT_OK


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


def model_command(argv: list[str]):
    """The model-declared command ``argv`` calls (``campaign workloads list``), or None."""
    from campaign.models import find_command

    if not argv or argv[0].startswith("-") or argv[0] in BUILTIN_COMMANDS:
        return None
    found = find_command(argv[0])
    return None if found is None else found[1]


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line like every other error: what is wrong, and where the allowed
    options are listed (argparse would print the whole usage first)."""

    def error(self, message: str):
        self.exit(
            EXIT_USAGE, f"{self.prog}: error: {message}; `{self.prog} --help` lists the options\n"
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


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="campaign",
        description="Run simulation campaigns of scheduling strategies on Dask; results as "
        "netCDF with confidence intervals.",
        epilog="Models add commands of their own (such as `campaign workloads`): "
        "`campaign models` lists them.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks on errors (anywhere on the line)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="check a spec and print its design")
    p.add_argument("spec", help="spec file (YAML)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("plan", help="show what would run and what is already done")
    p.add_argument("spec")
    add_place_options(p)
    add_change_options(p, plan=True)
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("run", help="run the missing tasks of a campaign, then write results.nc")
    p.add_argument("spec")
    add_place_options(p)
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes of the embedded cluster (default: one per core)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="use an existing Dask scheduler instead of the embedded cluster "
        "(tls://HOST:PORT with --security)",
    )
    p.add_argument(
        "--cluster",
        default=None,
        metavar="FILE",
        help="start a batch-system cluster (SLURM, PBS, ... via dask-jobqueue) described by "
        "this YAML file (see cluster/README.md)",
    )
    p.add_argument(
        "--security",
        default=None,
        metavar="FILE",
        help="TLS settings (YAML with ca, cert, key paths) to talk to the cluster; "
        "cluster/make-certs.sh writes one",
    )
    p.add_argument(
        "--task-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="fail a task that runs longer (not retried); its worker process is restarted "
        "and its batchmates are sent again",
    )
    p.add_argument(
        "--wait-workers",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long to wait while the cluster has no worker (default 60; no limit with "
        "--cluster; 'inf' for no limit)",
    )
    p.add_argument(
        "--tail-replication",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="at the end of a campaign, move unstarted tasks of long batches to idle workers "
        "and copy straggling tasks there, first result wins (default: on)",
    )
    p.add_argument(
        "--locality",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="batch tasks that read the same inputs (traces) together and prefer workers that "
        "already loaded them (default: on)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=None,
        metavar="N",
        help="tasks per batch sent to a worker (default: sized from measured task durations "
        "to about half a second); results do not depend on it",
    )
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
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence level of the intervals (default 0.95)",
    )
    p.add_argument(
        "--new",
        action="store_true",
        help="set earlier results of this output folder aside (ledger, campaign.json and "
        "results.nc, into OUTPUT/ledger.old-*) and start afresh",
    )
    add_change_options(p)
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress display (else a live bar on a terminal, a line every 10 s in a log)",
    )
    p.add_argument(
        "--show-metrics",
        type=int,
        default=4,
        metavar="N",
        help="metrics shown in the final summary table (default 4)",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "verify",
        help="run a sample of finished tasks again and compare their metrics bit for bit",
        description="Run a sample of a campaign's finished tasks again (the same sample every "
        "time: drawn from the campaign's seed), store nothing, and compare every metric with "
        "the stored one, bit for bit. Each mismatch is one line (task key, metric, stored and "
        "new value); exit status 1 when there is one. A model that reads a clock, the "
        "environment or a generator not seeded from its seed shows up here.",
    )
    p.add_argument(
        "target",
        metavar="SPEC_OR_OUTPUT",
        help="spec file, or output folder (its results.nc keeps the spec; relative paths in "
        "it are then taken from the working folder)",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=10,
        metavar="N",
        help="finished tasks to run again (default 10)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes of the embedded cluster (default: one per core)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="use an existing Dask scheduler instead of the embedded cluster",
    )
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("status", help="done / failed / missing tasks, from the ledger alone")
    p.add_argument("spec")
    p.add_argument("--limit", type=int, default=20, help="failed tasks listed (default 20)")
    add_place_options(p)
    p.set_defaults(func=cmd_status)

    p = sub.add_parser(
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
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence level of the intervals (default 0.95)",
    )
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("query", help="mean and confidence interval by factor from results.nc")
    p.add_argument("results", help="results.nc (or its folder)")
    p.add_argument("--metric", action="append", help="metric to show (repeatable; default all)")
    p.add_argument(
        "--by",
        action="append",
        help="factors to group by (repeatable or comma-separated; default: every "
        "factor); other factors are pooled per replicate",
    )
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FACTOR=LEVEL[,LEVEL]",
        help=WHERE_HELP,
    )
    p.add_argument(
        "--format",
        default="table",
        choices=["table", "csv", "json", "markdown", "latex", "html"],
        help="table (text), csv, json, or for a paper or a page: markdown, latex (booktabs), "
        "html; each metric as mean ± half-width and its interval (with --rank: the ranking, "
        "csv and json as plain numbers without the notes)",
    )
    p.add_argument(
        "--rank",
        metavar="FACTOR",
        help="rank the levels of FACTOR (e.g. strategy) by mean degradation from the best, "
        "over --metric (default: the model's headline metrics) and the other factors' cells. "
        "Columns: " + RANK_COLUMNS,
    )
    p.add_argument(
        "--confidence",
        type=float,
        default=None,
        help="confidence level (default: the one the results were made with)",
    )
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("plot", help="plot a metric's mean and interval against a factor")
    p.add_argument("results", help="results.nc (or its folder)")
    p.add_argument("--metric", required=True)
    p.add_argument("--x", help="factor on the x axis (default: the one with most levels)")
    p.add_argument("--by", help="one series per level of this factor (default: a paired factor)")
    p.add_argument(
        "--where", action="append", default=[], metavar="FACTOR=LEVEL[,LEVEL]", help=WHERE_HELP
    )
    p.add_argument("--confidence", type=float, default=None)
    p.add_argument(
        "--log",
        nargs="?",
        const="y",
        default="auto",
        choices=["auto", "x", "y", "xy", "none"],
        help="logarithmic axes: --log alone is y; default auto: an axis whose positive values "
        "span a factor of 10 or more; none: linear",
    )
    p.add_argument(
        "--out",
        help="image file to write, its suffix the format (the folder is made if missing); "
        "default: figures/METRIC.png, .pdf and .svg beside results.nc",
    )
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser(
        "report",
        help="one self-contained HTML page: design, figures, summary tables, failures, provenance",
    )
    p.add_argument("results", help="results.nc (or its folder)")
    p.add_argument("--metric", action="append", help="metrics to include (default all)")
    p.add_argument(
        "--out",
        help="folder to write report.html and figures/ into (default: the folder of results.nc)",
    )
    p.add_argument(
        "--baseline",
        metavar="FACTOR=LEVEL",
        help="rank FACTOR's levels and compare each with LEVEL, for the headline metrics "
        "(default: the first level of the first paired factor)",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "compare",
        help="each level of a factor against a baseline level: difference and ratio of the "
        "means with confidence intervals (paired when the levels share seeds)",
        description="For every level of --factor other than --baseline, per cell of the other "
        "factors (or per group of --by, pooling the rest replicate by replicate): the means, "
        "their difference (level - baseline) and ratio (level / baseline) with confidence "
        "intervals over replicates. A paired factor (its levels share seeds: common random "
        "numbers) gets intervals over the per-replicate differences; any other factor Welch "
        "intervals from each level's replicates. The output says which.",
    )
    p.add_argument("results", help="results.nc (or its folder)")
    p.add_argument("--factor", required=True, help="the factor whose levels are compared")
    p.add_argument("--baseline", required=True, metavar="LEVEL", help="the level compared with")
    p.add_argument("--metric", required=True, help="the metric compared")
    p.add_argument(
        "--by",
        action="append",
        help="factors to group by (repeatable or comma-separated; default: every other "
        "factor); the others are pooled replicate by replicate",
    )
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FACTOR=LEVEL[,LEVEL]",
        help=WHERE_HELP,
    )
    p.add_argument(
        "--unpaired",
        action="store_true",
        help="Welch intervals even for a paired factor (shows what the pairing gains)",
    )
    p.add_argument("--format", default="table", choices=["table", "csv", "json"])
    p.add_argument(
        "--confidence",
        type=float,
        default=None,
        help="confidence level (default: the one the results were made with)",
    )
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "effects",
        help="which factors matter: main effects and two-factor interactions, their share of "
        "the variance and an F test, ranked",
        description="An analysis of variance of one metric over the replicates: every main "
        "effect and two-factor interaction with its degrees of freedom, its share of the total "
        "sum of squares (type II, so unequal replicate counts are fine), an F test and its "
        "rank; then each factor's level means against the mean of all cells. With paired "
        "factors, tasks that share a seed form blocks (a split-plot analysis).",
    )
    p.add_argument("results", help="results.nc (or its folder)")
    p.add_argument("--metric", required=True, help="the metric analysed")
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FACTOR=LEVEL[,LEVEL]",
        help=WHERE_HELP,
    )
    p.add_argument("--format", default="table", choices=["table", "csv", "json"])
    p.set_defaults(func=cmd_effects)

    p = sub.add_parser(
        "export",
        help="the results as one table, a row per task (factors, replicate, seed, status, "
        "metrics, error), units kept",
    )
    p.add_argument("results", help="results.nc (or its folder)")
    p.add_argument(
        "--format",
        choices=["csv", "parquet"],
        default=None,
        help="csv (units in a sidecar NAME.units.csv) or parquet (units as column metadata); "
        "default: from the suffix of -o, else csv",
    )
    p.add_argument(
        "-o",
        "--out",
        metavar="FILE",
        help="file to write (default: results.csv or results.parquet beside results.nc)",
    )
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "models",
        help="list the models; `models show NAME`: its params, metrics with units, defaults",
    )
    p.add_argument("action", nargs="?", choices=["show"], help="show one model")
    p.add_argument("name", nargs="?", help="the model to show")
    p.add_argument(
        "--markdown", action="store_true", help="print the documentation tables (Markdown)"
    )
    p.set_defaults(func=cmd_models)
    return parser


BUILTIN_COMMANDS = (
    "validate",
    "plan",
    "run",
    "status",
    "verify",
    "merge",
    "query",
    "plot",
    "report",
    "compare",
    "effects",
    "export",
    "models",
)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # --debug is the one option of every command: taken wherever it stands on the line
    debug = "--debug" in argv
    argv = [word for word in argv if word != "--debug"]
    command = model_command(argv)
    if command is not None:  # a model's own command takes the rest of the line as it is
        rest = argv[argv.index(command.name) + 1 :]
        return _guarded(lambda: command.main(rest), debug)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.debug = debug
    return _guarded(lambda: args.func(args), debug)


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, a batch system's time limit): a stop like Ctrl-C, finished results
    kept and the cluster closed, rather than an end with nothing cleaned up."""


def _terminated(signum, frame) -> None:
    raise Terminated()


def _guarded(call, debug: bool) -> int:
    """Run a command: a CampaignError is one line (a traceback too with --debug); SIGTERM
    and Ctrl-C stop it cleanly."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    earlier = signal.signal(signal.SIGTERM, _terminated) if in_main_thread else None
    try:
        return call()
    except CampaignError as error:
        if debug:
            traceback.print_exc()
        message = error.named(OPTIONS) if isinstance(error, ParameterError) else error
        print(f"campaign: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, Terminated)
        print(
            f"campaign: {'stopped by SIGTERM' if terminated else 'interrupted'}; finished "
            "results are saved, run the same command again to finish the rest",
            file=sys.stderr,
        )
        return 143 if terminated else 130
    finally:
        if in_main_thread and earlier is not None:
            signal.signal(signal.SIGTERM, earlier)


if __name__ == "__main__":
    sys.exit(main())
