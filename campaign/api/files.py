"""The files made from a results file: `plot` (figures), `report` (one HTML page) and `export`
(a table of every task)."""

from __future__ import annotations

import sys
from pathlib import Path

import campaign.api.checks as check
from campaign.api.checks import checked
from campaign.api.reading import open_failures, open_results
from campaign.errors import ParameterError


@checked(check.PLOT_OPTIONS, say=check.function)
def plot(results, metrics, kind="mean", out=None, figures=False, say=None, **options):
    """A figure of metrics against factors, for a paper.

    A row of panels per metric, a column per level of ``facet``, a series per level of
    ``by``; factors shown nowhere are pooled replicate by replicate and named in the title.
    A sample's metric (``wait`` of the demo) read from a results file is drawn as its CDF
    pooled over replicates, from each task's stored quantiles.

    Parameters
    ----------
    results : xarray.Dataset, str or pathlib.Path
        The results, a results file or its folder.
    metrics : str or list of str
        The metrics, a row of panels each.
    kind : {"mean", "difference", "box", "violin", "ecdf"}
        Means and intervals against ``x``; each level of ``by`` minus ``baseline`` with
        `compare`'s intervals; the replicates as box or violin plots, or their ECDF.
    out : str or pathlib.Path, optional
        An image file to write (its suffix the format; ``.png`` without one).
    figures : bool
        Write ``figures/NAME.png``, ``.pdf`` and ``.svg`` beside results.nc (what
        ``campaign plot`` writes without ``--out``; NAME: the metrics, then the kind); not
        with ``out``.
    say : callable, optional
        Told what the figure's numbers lack: results.nc written before tasks its folder
        holds finished.
    **options
        ``x``, ``by``, ``facet`` (default: a factor averaging could mislead on, if any;
        False: none), ``where``, ``baseline``, ``confidence``, ``log``, ``size`` (``column``,
        ``page`` or ``"WxH"`` inches), ``style`` (``paper`` or ``screen``), ``formula``,
        ``title``: see `campaign.render.figures.plot`.

    Returns
    -------
    matplotlib.figure.Figure, pathlib.Path or list of pathlib.Path
        The figure; with ``out``, the file written; with ``figures``, the files written.
    """
    from campaign.render.figures import figure_name, save_figure, write_figures
    from campaign.results.unreplaced import unreplaced
    from campaign.store.folder import image_path

    if out is not None and figures:
        raise ParameterError(
            "{out} is the one file written, {figures} writes figures/NAME.png, .pdf and .svg "
            "beside results.nc: give one of them",
            "out",
            "figures",
        )
    path = image_path(out) if out is not None else None
    folder = figures_folder(results) if figures else None

    def draw():
        figure = drawn(results, metrics, kind, options)
        lacks = getattr(figure, "campaign_lacks", [])
        if path is not None:
            save_figure(figure, path)
            return path, lacks
        if folder is not None:
            return write_figures(figure, folder, figure_name(metrics, kind)), lacks
        return figure, lacks

    made, lacks = draw() if hasattr(results, "data_vars") else unreplaced(results, draw)
    for note in lacks if say else ():
        say(note)
    return made


def drawn(results, metrics, kind, options):
    """The figure `plot` draws: a stored sample's pooled CDF, or `campaign.render.figures`'s
    figure of the results (a breakdown named in its options one more factor)."""
    from campaign.analysis.breakdown import factor_view, mentioned
    from campaign.render.figures import plot as figure_of
    from campaign.results.netcdf import stored_samples

    if hasattr(results, "data_vars"):
        return figure_of(results, metrics, kind, **options)
    from campaign.render.figures import made_from

    dataset = open_results(results)  # a file that is not results: one line here
    if metrics[0] in stored_samples(results):  # its CDF pooled over replicates
        figure = sample_cdf(results, dataset, metrics[0], options)
        made_from(figure, dataset.attrs)
        return figure
    names = mentioned([options.get("by")], options.get("where"), options.get("x"))
    names.append(options.get("facet") or "")
    return figure_of(factor_view(dataset, results, names), metrics, kind, **options)


def sample_cdf(results, dataset, sample, options):
    """A stored sample's CDF pooled over replicates: a series per level of ``by``, a column of
    panels per level of ``facet`` (its values are the x axis: no ``x``). Those not given are
    chosen as for the ECDF of a metric (``dataset``: the results' root), so that the levels
    of a paired factor (the strategies) are never pooled into one CDF unasked."""
    from campaign.analysis.query import parse_where, select
    from campaign.render.figure_layout import check_layout
    from campaign.render.sample_ecdf import plot_ecdf
    from campaign.results.netcdf import open_samples

    if options.get("x"):
        raise ParameterError(
            "{x}: a sample's CDF has the sample's values on its x axis; use {by} for series "
            "and {facet} for panels",
            "x",
            "by",
            "facet",
        )
    where = options.get("where")
    shown = select(dataset, parse_where(dataset, where or []))  # a level held is no panel
    layout = check_layout(shown, "ecdf", [sample], None, options.get("by"), options.get("facet"))
    return plot_ecdf(open_samples(results), sample, layout.by, where, layout.facet)


def figures_folder(results) -> Path:
    """Where ``figures=True`` writes: figures/ beside results.nc, checked before any work."""
    from campaign.results.netcdf import results_file
    from campaign.store.folder import FIGURES_FOLDER, check_folder

    if hasattr(results, "data_vars"):
        raise check.must("results", "a results file or its folder with figures=True")
    folder = results_file(results).parent / FIGURES_FOLDER
    check_folder(folder, FIGURES_FOLDER)
    return folder


@checked(baseline=check.text, say=check.function)
def report(results, out=None, metrics=None, baseline=None, say=None):
    """Write report.html: design, figures, summary tables, failures, provenance.

    Parameters
    ----------
    results : str or pathlib.Path
        A results file or its folder (the report reads its groups).
    out : str or pathlib.Path, optional
        The folder to write report.html and its figures into (default: that of results.nc).
    metrics : str or list of str, optional
        The metrics to include (default: every one, the headline ones first).
    baseline : str, optional
        ``"FACTOR=LEVEL"``: rank FACTOR's levels and compare each with LEVEL (default: the
        first level of the first paired factor).
    say : callable, optional
        Told what the numbers lack or why they may not be current (results.nc written
        before tasks finished, from a spec file since edited, by a model, program or input
        since changed); the page says it at its top.

    Returns
    -------
    pathlib.Path
        The page written.
    """
    from campaign.analysis.unfinished import written_before
    from campaign.render.report import write_report
    from campaign.results.netcdf import results_file
    from campaign.results.resource_group import open_resources
    from campaign.results.unreplaced import unreplaced
    from campaign.store.folder import check_folder

    if hasattr(results, "data_vars"):
        raise check.must("results", "a results file or its folder (the report reads its groups)")
    default = results_file(results).parent
    folder = Path(out).expanduser() if out is not None else default
    if out is not None and folder.suffix.lower() in (".html", ".htm"):
        raise ParameterError(
            f"{{out}} {out} names a page, but {{out}} is the folder report.html and figures/ "
            f"are written into; give {folder.parent}",
            "out",
        )
    check_folder(folder, f"{{out}} {out}" if out is not None else "report", "out")

    def write():
        dataset = open_results(results)
        failures, resources = open_failures(results), open_resources(results_file(results))
        return write_report(dataset, folder, metrics, failures, baseline, resources), dataset.attrs

    page, attrs = unreplaced(results, write)
    for note in written_before(attrs) if say else ():
        say(note)
    return page


@checked(say=check.function)
def export(results, out=None, fmt=None, say=None):
    """The results as one tidy table, a row per task, units kept.

    Parameters
    ----------
    results : str or pathlib.Path
        A results file or its folder.
    out : str or pathlib.Path, optional
        The file to write (default: results.csv or results.parquet beside results.nc);
        ``"-"``: the CSV to standard output, its units told to ``say`` (Parquet goes to a file).
    fmt : {"csv", "parquet"}, optional
        CSV (units in a sidecar NAME.units.csv) or Parquet (units as column metadata);
        default: from ``out``'s suffix, else CSV.
    say : callable, optional
        Told what the table lacks: results.nc written before tasks its folder holds
        finished (Parquet's metadata says it too, as ``incomplete``).

    Returns
    -------
    list of pathlib.Path
        The files written (none with ``out="-"``).
    """
    from campaign.analysis.unfinished import written_before
    from campaign.render.export import STDOUT, csv_text, units_line
    from campaign.render.export import export as write_table
    from campaign.results.netcdf import results_file
    from campaign.results.unreplaced import unreplaced

    if out is None:
        out = results_file(results).with_suffix(f".{fmt or 'csv'}")
    out = STDOUT if str(out) == STDOUT else Path(out).expanduser()

    def write():  # standard output only once the file read is sure: no rows printed twice
        dataset = open_results(results)
        if out == STDOUT:
            return csv_text(dataset, open_failures(results), fmt), dataset
        return write_table(dataset, open_failures(results), out, fmt), dataset

    written, dataset = unreplaced(results, write)
    if out == STDOUT:
        sys.stdout.write(written)
        written = []
    notes = written_before(dataset.attrs) + [units_line(dataset)] * (out == STDOUT)
    for note in notes if say else ():
        say(note)
    return written
