"""`campaign plot`, `report` and `export`: the files made from a results file for a paper or a
page (figures, an HTML page, a table of every task)."""

from __future__ import annotations

from campaign import api
from campaign.cli.arguments import EXIT_OK, RESULTS_HELP, add_where_option, tell


def add_plot(subparsers) -> None:
    p = subparsers.add_parser(
        "plot",
        help="a figure of metrics against factors: means, paired differences, box, violin or "
        "ECDF of the replicates",
        description="A figure for a paper: a row of panels per --metric, a column per level "
        "of --facet, a series per level of --by; factors shown nowhere are averaged replicate "
        "by replicate (as in query) and named in the title. Without --facet, a factor that "
        "averaging could mislead on is shown in panels instead: of those with at most 5 "
        "levels, a numeric one whose levels span a factor of 10 or more, else the one with "
        "the fewest levels. A numeric factor of few levels is ticked at its levels; log axes "
        "read in plain numbers. Labels come from the model's long names and units; every PDF "
        "embeds TrueType (Type 42) fonts.",
    )
    p.add_argument("results", help=RESULTS_HELP)
    p.add_argument("--metric", required=True, action="append", help="metric (repeatable)")
    p.add_argument(
        "--kind",
        default="mean",
        choices=["mean", "difference", "box", "violin", "ecdf"],
        help="mean: mean and interval against --x (default); difference: each level of --by "
        "minus --baseline with the intervals of `campaign compare` (paired when the levels "
        "share seeds); box, violin: the replicates against --x; ecdf: the replicates' "
        "empirical distribution",
    )
    add_axes_options(p)
    p.add_argument(
        "--baseline",
        metavar="LEVEL",
        help="with --kind difference: the level of --by the others are compared with "
        "(default: its first level)",
    )
    add_where_option(p)
    p.add_argument(
        "--confidence",
        type=float,
        default=None,
        help="confidence level of the intervals drawn (default: the results' own); kinds "
        "mean and difference only, the others drawing no interval",
    )
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
        "--size",
        default="page",
        help="column (3.5 in wide), page (7.1 in, default) or WxH in inches, such as 5x3",
    )
    p.add_argument(
        "--style",
        default="paper",
        choices=["paper", "screen"],
        help="paper (default): 8-9 pt fonts and thin lines, readable at the printed width; "
        "screen: matplotlib's own",
    )
    p.add_argument(
        "--formula",
        action="store_true",
        help="the whole long names in the labels, formulas included",
    )
    p.add_argument(
        "--no-title",
        dest="title",
        action="store_false",
        help="no title (the pooled factors and the interval then belong in the caption)",
    )
    p.add_argument(
        "--out",
        help="image file to write, its suffix the format (the folder is made if missing); "
        "default: figures/NAME.png, .pdf and .svg beside results.nc (NAME: the metrics, "
        "then the kind unless mean)",
    )
    p.set_defaults(func=cmd_plot)


def add_axes_options(parser) -> None:
    """--x, --by, --facet and --no-facet: which factor goes where on a figure."""
    parser.add_argument("--x", help="factor on the x axis (default: the one with most levels)")
    parser.add_argument(
        "--by", help="one series per level of this factor (default: a paired factor)"
    )
    parser.add_argument(
        "--facet",
        help="one column of panels per level of this factor (default: chosen as above, "
        "when a factor would otherwise be averaged)",
    )
    parser.add_argument(
        "--no-facet",
        dest="facet",
        action="store_const",
        const=False,
        help="no panels: every factor not on the x axis or the series is averaged",
    )


def add_report(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="one self-contained HTML page: design, figures, summary tables, failures, provenance",
    )
    p.add_argument("results", help=RESULTS_HELP)
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


def add_export(subparsers) -> None:
    p = subparsers.add_parser(
        "export",
        help="the results as one table, a row per task (factors, replicate, seed, status, "
        "metrics, error), units kept",
    )
    p.add_argument("results", help=RESULTS_HELP)
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
        help="file to write (default: results.csv or results.parquet beside results.nc); "
        "-: the CSV to standard output, its units on stderr (parquet goes to a file)",
    )
    p.set_defaults(func=cmd_export, option_names={"out": "-o"})


PARSERS = {"plot": add_plot, "report": add_report, "export": add_export}


def cmd_plot(args) -> int:
    options = dict(x=args.x, by=args.by, facet=args.facet, where=args.where)
    options.update(baseline=args.baseline, confidence=args.confidence, log=args.log)
    options.update(size=args.size, style=args.style, formula=args.formula, title=args.title)
    written = api.plot(
        args.results,
        args.metric,
        args.kind,
        out=args.out,
        figures=not args.out,
        say=tell,
        **options,
    )
    for path in written if isinstance(written, list) else [written]:
        print(f"plot: {path}")
    return EXIT_OK


def cmd_report(args) -> int:
    path = api.report(args.results, args.out, args.metric, args.baseline, tell)
    print(f"report: {path}")
    return EXIT_OK


def cmd_export(args) -> int:
    for path in api.export(args.results, args.out, args.format, tell):
        print(f"wrote {path}")
    return EXIT_OK
