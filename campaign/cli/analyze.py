"""`campaign query`, `compare`, `effects`, `sensitivity` and `select`: tables of a results file,
its rankings, its comparisons, which sampled factors matter and which system a selection
chose, each the API's function of that name written by `campaign.table`."""

from __future__ import annotations

from campaign import api
from campaign.cli.arguments import (
    EXIT_OK,
    RESULTS_HELP,
    add_confidence_option,
    add_where_option,
    factor_list,
    tell,
)
from campaign.errors import CampaignError, ParameterError

RANK_COLUMNS = (  # the columns of `query --rank` (argparse help: %% is a percent sign)
    "rank: 1 = the smallest D_means; D_means (%%): the degradation from the best level, "
    "100 (value - best) / |best| with best the smallest value among the levels (|best|: values "
    "may be negative), on cell means, averaged over the metrics and the instances (cells "
    "of the other factors); D_replicates (%%): the same within each replicate, averaged over "
    "the replicates; ci_low, ci_high (%%): the Student-t interval of D_replicates over the "
    "replicates (paired when the factor's levels share seeds, or break down one task's result "
    "as job_class does); n: the replicates in it (those "
    "where every level, metric and instance has a value). Warnings follow when the factor is "
    "not paired, when fewer than 5 replicates make the interval, or when a best value near 0 "
    "makes degradations explode; with 3 levels or more and 2 instances or more, a Friedman "
    "test of the levels across instances."
)


def add_query(subparsers) -> None:
    p = subparsers.add_parser(
        "query", help="mean and confidence interval by factor from results.nc"
    )
    p.add_argument("results", help=RESULTS_HELP)
    p.add_argument("--metric", action="append", help="metric to show (repeatable; default all)")
    p.add_argument(
        "--by",
        action="append",
        help="factors to group by (repeatable or comma-separated; default: every "
        "factor); other factors are pooled per replicate",
    )
    add_where_option(p)
    add_format_options(
        p,
        "each metric as mean ± half-width (with --rank: the ranking); csv and json the "
        "numbers alone, their notes on stderr",
    )
    add_pivot_option(p)
    p.add_argument(
        "--rank",
        metavar="FACTOR",
        help="rank the levels of FACTOR (e.g. strategy) by mean degradation from the best, "
        "over --metric (default: the model's headline metrics) and the other factors' cells. "
        "Columns: " + RANK_COLUMNS,
    )
    p.add_argument(
        "--maximize",
        action="append",
        default=[],
        metavar="METRIC",
        help="with --rank: a metric whose largest value is the best (utilization, say; "
        "repeatable); the smallest value of the others is",
    )
    add_confidence_option(p, default=None)
    p.set_defaults(func=cmd_query, option_names={"factor": "--rank", "maximize": "--maximize"})


def add_compare(subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        help="each level of a factor against a baseline level: difference and ratio of the "
        "means with confidence intervals (paired when the levels share seeds or break down one "
        "task's result)",
        description="For every level of --factor other than --baseline, per cell of the other "
        "factors (or per group of --by, pooling the rest replicate by replicate): the means, "
        "their difference (level - baseline) and ratio (level / baseline) with confidence "
        "intervals over replicates. A paired factor (its levels share seeds: common random "
        "numbers) and a breakdown's dimension (job_class: the classes of one task come from "
        "one run) get intervals over the per-replicate differences; any other factor Welch "
        "intervals from each level's replicates. The output says which.",
    )
    p.add_argument("results", help=RESULTS_HELP)
    p.add_argument("--factor", required=True, help="the factor whose levels are compared")
    p.add_argument("--baseline", required=True, metavar="LEVEL", help="the level compared with")
    p.add_argument("--metric", required=True, help="the metric compared")
    p.add_argument(
        "--by",
        action="append",
        help="factors to group by (repeatable or comma-separated; default: every other "
        "factor); the others are pooled replicate by replicate",
    )
    add_where_option(p)
    p.add_argument(
        "--unpaired",
        action="store_true",
        help="Welch intervals even for a paired factor (shows what the pairing gains)",
    )
    add_format_options(p, "each difference and ratio as value ± half-width")
    add_pivot_option(p)
    add_confidence_option(p, default=None)
    p.set_defaults(func=cmd_compare)


def add_effects(subparsers) -> None:
    p = subparsers.add_parser(
        "effects",
        help="which factors matter: main effects and two-factor interactions, their share of "
        "the variance and an F test, ranked",
        description="An analysis of variance of one metric over the replicates: every main "
        "effect and two-factor interaction with its degrees of freedom, its share of the total "
        "sum of squares (type II, so unequal replicate counts are fine), an F test and its "
        "rank; then each factor's level means against the mean of all cells. With paired "
        "factors, tasks that share a seed form blocks (a split-plot analysis); a breakdown's "
        "dimension (job_class) is paired, each task's classes lying in its block.",
    )
    p.add_argument("results", help=RESULTS_HELP)
    p.add_argument("--metric", required=True, help="the metric analysed")
    add_where_option(p)
    add_format_options(p, "the table and the main effects under it")
    p.set_defaults(func=cmd_effects)


def add_sensitivity(subparsers) -> None:
    p = subparsers.add_parser(
        "sensitivity",
        help="which factors drawn over ranges drive a metric: Sobol indices, Morris effects, "
        "delta, RBD-FAST or standardized regression coefficients, with intervals",
        description="Sensitivity of each --metric to the factors drawn over ranges by a design "
        "of points. Each point's output is the mean of its replicates that have a value (the "
        "noise averaged out; the share of noise left is stated). Methods: sobol (a saltelli "
        "design: S1, ST and with --second-order S2), morris (a morris design: mu, mu*, sigma), "
        "delta and rbd_fast (any design of points), regression (standardized coefficients, "
        "Student-t intervals, R^2). sobol and morris refuse results with failed points (their "
        "estimators pair points); the others leave them out and say so.",
    )
    p.add_argument("results", help=RESULTS_HELP)
    p.add_argument("--metric", action="append", required=True, help="metric (repeatable)")
    p.add_argument(
        "--method",
        choices=["sobol", "morris", "delta", "rbd_fast", "regression"],
        help="default: sobol on a saltelli design, morris on a morris design, else regression",
    )
    p.add_argument(
        "--second-order",
        action="store_true",
        help="the pairs' second-order Sobol indices (a saltelli design with second_order: true)",
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=None,
        help="bootstrap resamples of sobol, morris, delta and rbd_fast, 10 or more (default "
        "1000); not for regression, whose intervals are Student t",
    )
    p.add_argument(
        "--transform",
        choices=["log"],
        help="analyse log(metric): each replicate's log, then their mean per point (a metric "
        "spanning decades); values <= 0 are refused",
    )
    add_where_option(p)
    p.add_argument(
        "--format",
        default="table",
        choices=["table", "csv", "json", "markdown", "latex", "html"],
        help="csv and json: one row per factor (a metric column first with several metrics), "
        "ending with r_squared (regression), noise_share (the replicate noise left in the "
        "point means), ci_level and ci_method (the *_conf intervals' level and method); the "
        "notes on stderr",
    )
    add_confidence_option(p, default=None)
    p.set_defaults(func=cmd_sensitivity)


def add_select(subparsers) -> None:
    p = subparsers.add_parser(
        "select",
        help="which system a selection campaign (select: in the spec) chose in each group, "
        "with its guarantee and the tasks it spent",
        description="Per group: the system selected and how (every other eliminated, a final "
        "stage, a spent budget, or max_replicates reached), the stages and tasks it took and "
        "the tasks Rinott's two-stage procedure (no elimination) needs for the same guarantee; "
        "per system: selected, eliminated (with its stage and replicates) or still in "
        "contention, and its mean. The stages are replayed from the results as the run decided "
        "them.",
    )
    p.add_argument("results", help=RESULTS_HELP)
    add_format_options(p, "the group and system tables (csv and json: a row per system)")
    p.set_defaults(func=cmd_select)


PARSERS = {
    "query": add_query,
    "compare": add_compare,
    "effects": add_effects,
    "sensitivity": add_sensitivity,
    "select": add_select,
}


def add_format_options(parser, paper: str) -> None:
    """--format and --digits: one renderer writes every table in every format."""
    parser.add_argument(
        "--format",
        default="table",
        choices=["table", "csv", "json", "markdown", "latex", "html"],
        help="table (text), csv, json (every number at full precision; a table with intervals "
        "ends each row with ci_level, their confidence level, and ci_method, how they were "
        f"made), or for a paper or a page: markdown, latex (booktabs), html: {paper}, to the "
        "digits the interval supports",
    )
    parser.add_argument(
        "--digits",
        type=int,
        default=None,
        metavar="N",
        help="significant digits of the numbers (default: from each interval, whose "
        "half-width gets 2); not with csv or json, which carry full precision",
    )


def add_pivot_option(parser) -> None:
    parser.add_argument(
        "--pivot",
        metavar="FACTOR",
        help="the levels of FACTOR across, as groups of columns (e.g. loads as rows, "
        "schedulers as columns: --pivot scheduler); the rows are grouped by FACTOR too, "
        "whether --by names it or not",
    )


def check_digits(args) -> None:
    """--digits out of range, or with csv or json (which carry full precision), refused
    before any work, as `campaign.table` refuses them after it."""
    from campaign.api.tables import check_digits as refuse_digits

    refuse_digits(args.digits, args.format, "the table, markdown, latex and html formats")


def cmd_query(args) -> int:
    check_digits(args)
    if args.rank:
        if args.by:
            raise CampaignError(
                "--by is for query's table, not a ranking: --rank ranks the levels over every "
                "cell of the other factors; leave --by out, or give --where to rank within some "
                "levels"
            )
        if args.pivot:  # refused before the ranking is computed, as campaign.table refuses it
            raise CampaignError("--pivot is for query and compare tables, not a ranking")
        result = api.rank(
            args.results, args.rank, args.metric, args.where, args.confidence, args.maximize
        )
    else:
        if args.maximize:
            raise ParameterError(
                "{maximize} says which value of a metric ranks best: give it with {factor}",
                "maximize",
                "factor",
            )
        by = factor_list(args.by)
        result = api.query(args.results, args.metric, by, args.where, args.confidence, args.pivot)
    print_table(result, args.format, args.digits, args.pivot)
    return EXIT_OK


def cmd_compare(args) -> int:
    check_digits(args)
    result = api.compare(
        args.results,
        args.factor,
        args.baseline,
        args.metric,
        by=factor_list(args.by),
        where=args.where,
        confidence=args.confidence,
        paired=False if args.unpaired else None,
        pivot=args.pivot,
    )
    print_table(result, args.format, args.digits)
    return EXIT_OK


def cmd_effects(args) -> int:
    check_digits(args)
    result = api.effects(args.results, args.metric, args.where)
    print_table(result, args.format, args.digits)
    return EXIT_OK


def print_table(result, fmt: str, digits: int | None, pivot: str | None = None) -> None:
    """The table on stdout; with CSV or JSON, what its numbers lack on stderr (the data
    alone on stdout, as sensitivity's warnings)."""
    from campaign.render.data_notes import data_notes

    print(api.table(result, fmt, digits, pivot), end="")
    if fmt in ("csv", "json"):
        for note in data_notes(result):
            tell(note)


def cmd_sensitivity(args) -> int:
    from campaign.render.data_notes import data_notes

    if args.second_order and args.method not in (None, "sobol"):  # refused before any work
        raise CampaignError(
            f"--second-order is for --method sobol (the Sobol indices of pairs of factors, on a "
            f"saltelli design drawn with second_order: true); --method {args.method} gives "
            "none: leave --second-order out"
        )
    if args.second_order:  # a design with no pairs' indices: refused before any work too
        from campaign.api.analyses import check_second_order

        check_second_order(args.results, args.method)
    from campaign.api.analyses import check_metrics, sensitivity_options, viewed

    options = dict(method=args.method, where=args.where, confidence=args.confidence)
    options.update(resamples=args.resamples, transform=args.transform)
    sensitivity_options(**options)  # refused before the results are read
    dataset = viewed(args.results, ())  # read once: every metric's indices from one file
    metrics = list(dict.fromkeys(args.metric))
    check_metrics(dataset, metrics)  # a metric it lacks refused before any indices
    results = [api.sensitivity(dataset, m, **options) for m in metrics]
    print(api.table(results, args.format, second_order=args.second_order), end="")
    if args.format in ("csv", "json"):  # the numbers alone: the notes go to stderr
        for result in results:
            for note in data_notes(result):
                tell(note)
    return EXIT_OK


def cmd_select(args) -> int:
    check_digits(args)
    print_table(api.select(args.results), args.format, args.digits)
    return EXIT_OK
