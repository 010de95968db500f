"""`campaign plot`, `report` and `export`: files made from a results file (figures, an HTML
page, a table of every task)."""

from __future__ import annotations

from pathlib import Path

from campaign.cli.options import EXIT_OK, RESULTS_HELP, add_where_option


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
        help="confidence level of the intervals drawn (default: the results' own)",
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
        help="file to write (default: results.csv or results.parquet beside results.nc)",
    )
    p.set_defaults(func=cmd_export)


PARSERS = {"plot": add_plot, "report": add_report, "export": add_export}


def cmd_plot(args) -> int:
    from campaign.analysis.breakdown import factor_view, mentioned
    from campaign.analysis.query import check_confidence
    from campaign.errors import ParameterError
    from campaign.render.figures import figure_name, plot, save_figure, write_figures
    from campaign.render.sample_ecdf import plot_ecdf
    from campaign.results.netcdf import open_results, open_samples, results_file, stored_samples
    from campaign.store.folder import FIGURES_FOLDER, check_folder, image_path

    check_confidence(args.confidence)
    if args.out:
        out = image_path(args.out)
    else:
        folder = results_file(args.results).parent / FIGURES_FOLDER
        check_folder(folder, FIGURES_FOLDER)
    dataset = open_results(args.results)  # a file that is not results: one line here
    if args.metric[0] in stored_samples(args.results):  # its CDF pooled over replicates
        if args.x:
            raise ParameterError(
                "{x}: a sample's CDF has the sample's values on its x axis; "
                "use --by for series and --facet for panels",
                "x",
            )
        figure = plot_ecdf(
            open_samples(args.results), args.metric[0], args.by, args.where, args.facet or None
        )
    else:
        names = mentioned([args.by], args.where, args.x, args.facet)
        figure = plot(
            factor_view(dataset, args.results, names),
            args.metric,
            kind=args.kind,
            x=args.x,
            by=args.by,
            facet=args.facet,
            where=args.where,
            baseline=args.baseline,
            confidence=args.confidence,
            log=args.log,
            size=args.size,
            style=args.style,
            formula=args.formula,
            title=args.title,
        )
    if args.out:
        save_figure(figure, out)
        print(f"plot: {out}")
    else:
        for path in write_figures(figure, folder, figure_name(args.metric, args.kind)):
            print(f"plot: {path}")
    return EXIT_OK


def cmd_report(args) -> int:
    from campaign.render.report import write_report
    from campaign.results.netcdf import open_failures, open_results, results_file
    from campaign.results.resource_group import open_resources
    from campaign.store.folder import check_folder

    default = results_file(args.results).parent
    folder = Path(args.out).expanduser() if args.out else default
    check_folder(folder, f"--out {args.out}" if args.out else "report")
    dataset = open_results(args.results)
    failures = open_failures(args.results)
    resources = open_resources(results_file(args.results))
    path = write_report(dataset, folder, args.metric, failures, args.baseline, resources)
    print(f"report: {path}")
    return EXIT_OK


def cmd_export(args) -> int:
    from campaign.render.export import export
    from campaign.results.netcdf import open_failures, open_results, results_file

    fmt = args.format
    if args.out:
        out = Path(args.out).expanduser()
    else:
        out = results_file(args.results).with_suffix(f".{fmt or 'csv'}")
    dataset = open_results(args.results)
    for path in export(dataset, open_failures(args.results), out, fmt):
        print(f"wrote {path}")
    return EXIT_OK
