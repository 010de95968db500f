"""campaign: simulation campaigns of scheduling strategies on Dask, results as xarray/netCDF.

Every command is a function here, taking Python values (a spec as a dict, levels as a
mapping, metrics as a list) and returning data (an xarray Dataset, a pandas DataFrame, a
matplotlib Figure) or the files it wrote; errors name the function's parameters::

    import campaign
    results = campaign.run("specs/demo.yaml")          # or a dict, or a Spec
    table = campaign.query(results, by=["scheduler"], where={"load": 1.5})
    print(campaign.table(table, "markdown"))
    figure = campaign.plot(results, "mean_wait", kind="difference", baseline="fcfs")

docs/python-api.md walks through them. In a script that runs a campaign on the embedded
cluster, call `run` under ``if __name__ == "__main__":`` (its worker processes import the
script); reading results needs no guard.
"""

from __future__ import annotations

import sys
from pathlib import Path

from campaign import api_checks as check
from campaign.api_checks import checked
from campaign.errors import CampaignError

__version__ = "0.1.0"


@checked(check.RUN_OPTIONS)
def run(spec, **options):
    """Run what is missing of a campaign and return its results Dataset (also written to
    the output folder's results.nc).

    ``spec``: a spec file's path, a `campaign.spec.load.Spec`, or the spec itself as a dict
    (the keys of a spec file; relative paths are taken from the working folder). Options:
    ``workers``, ``scheduler``, ``cluster``, ``security``, ``retries``, ``task_timeout``,
    ``wait_workers``, ``confidence``, ``new``, ``progress``, ``on_change`` ("rerun" or
    "accept" stored results computed before the model's code or an input file changed; see
    ``campaign.runner.run`` and cluster/README.md), ``output`` (a folder instead of the
    spec's output), ``shard`` ("I/N": only that shard of the design, into its own folder;
    `merge` joins the shards), ``keep_going`` (run on when the first results all failed the
    same way; else the run stops there), ``where`` (as `query`'s: only those levels run)."""
    from campaign.runner import run as _run

    return _run(as_spec(spec), **options)


def validate(spec):
    """Check a spec and every cell's params against its model, before anything runs; returns
    the checked `Spec` (a `campaign.errors.CampaignError` names what is wrong)."""
    from campaign.plan.plan import check_model

    spec = as_spec(spec)
    check_model(spec)
    return spec


@checked()
def plan(spec, output=None, shard=None, on_change="refuse"):
    """What a run would do, from the spec and the stored results alone (nothing runs): a
    `campaign.plan.state.RunState` whose ``done``, ``failed``, ``missing`` and ``to_run``
    say where each task stands. ``output`` and ``shard`` as for `run`."""
    from campaign.plan.plan import make_plan

    return make_plan(_placed(spec, output, shard), on_change=on_change)


@checked()
def status(spec, output=None, shard=None):
    """Where a campaign stands from its ledger alone (done, failed, missing tasks), whatever
    the model's code is now: a `campaign.plan.state.RunState`, as `plan` returns."""
    from campaign.plan.plan import make_plan

    return make_plan(_placed(spec, output, shard), check_identity=False)


@checked(target=check.required_path, sample=check.whole(1, optional=False))
def verify(target, sample=10, workers=None, scheduler=None):
    """Run ``sample`` finished tasks again (spec or output folder ``target``), store nothing,
    and compare every metric bit for bit; the verdict lists each mismatch."""
    from campaign.verify import verify as _verify

    return _verify(target, sample, workers=workers, scheduler=scheduler)


@checked(folders=check.paths, out=check.required_path, confidence=check.CONFIDENCE)
def merge(folders, out, confidence=0.95):
    """Join the shard folders of one campaign into ``out`` and write its results.nc."""
    from campaign.store.merge import merge as _merge

    return _merge(list(folders), out, confidence=confidence)


@checked(path=check.required_path)
def open_results(path):
    """Reopen a results file (or the output folder holding results.nc) as a Dataset."""
    from campaign.results.netcdf import open_results as _open

    return _open(path)


@checked(path=check.required_path)
def open_samples(path):
    """Each task's samples' quantiles (group ``samples``) with its status and sample sizes,
    as `campaign.analysis.distributions.cell_cdfs` pools them."""
    from campaign.results.netcdf import open_samples as _open

    return _open(path)


@checked(path=check.required_path, dimension=check.required_text)
def open_breakdown(path, dimension):
    """The results with a breakdown's ``dimension`` (``"job_class"``: group
    ``breakdowns/job_class``) as one more factor, for `query`, `compare` and `plot`."""
    from campaign.analysis.breakdown import as_factor
    from campaign.results.netcdf import open_breakdown as _open

    return as_factor(open_results(path), _open(path, dimension))


@checked(path=check.required_path)
def open_failures(path):
    """The failed tasks of a results file (or its folder), one row each, with their errors."""
    from campaign.results.netcdf import open_failures as _open

    return _open(path)


@checked()
def query(results, metrics=None, by=None, where=None, confidence=None, pivot=None):
    """Mean and confidence interval of ``metrics`` (default: all) per group of ``by``
    (default: every cell); the other factors pooled replicate by replicate.

    ``results``: a Dataset, a results file or its folder; ``metrics`` and ``by``: a name or
    a list; ``where``: ``{factor: level or [levels]}``; ``confidence``: default the
    results' own; ``pivot``: a factor grouped by too (named in ``by`` or not), whose levels
    `table` puts across. Returns a DataFrame (columns ``<metric>_mean``, ``_half_width``,
    ``_ci_low``, ``_ci_high``, ``_n``, ``_nan``, ``_left_out``) that `table` writes.
    """
    from campaign.analysis.query import summary_table

    dataset = _dataset(results)
    frame = summary_table(dataset, metrics, by, where, confidence, pivot)
    shown = metrics or _metrics_of(dataset)
    frame.attrs.update(
        metrics=shown,
        units={m: str(dataset[m].attrs.get("units", "")) for m in shown},
        confidence=confidence or float(dataset.attrs.get("confidence", 0.95)),
        pivot=pivot,
    )
    return frame


@checked()
def rank(results, factor, metrics=None, where=None, confidence=None):
    """Rank the levels of ``factor`` by mean degradation from the best over ``metrics``
    (default: the model's headline metrics) and the cells of the other factors. Returns a
    `campaign.analysis.ranking_text.Ranking`: ``result`` (a Dataset), ``title``, ``notes``."""
    from campaign.analysis.ranking_text import rank_levels

    return rank_levels(_dataset(results), factor, metrics, where or (), confidence)


@checked(check.COMPARE_OPTIONS)
def compare(results, factor, baseline, metric, **options):
    """Each level of ``factor`` against ``baseline``: difference and ratio of the means of
    ``metric`` with intervals over replicates (paired when the levels share seeds).

    ``results``: a Dataset, a results file or its folder. Options: ``by`` (a list),
    ``where`` (``{factor: level}``), ``confidence``, ``paired``, ``pivot`` (a factor grouped
    by too, whose levels `table` puts across; see ``campaign.analysis.comparison.compare``).
    Returns an xarray Dataset.
    """
    from campaign.analysis.comparison import compare as _compare
    from campaign.analysis.query import grouping

    dataset = _dataset(results)
    pivot = options.pop("pivot", None)
    options["by"] = grouping(dataset, options.get("by"), pivot, factor)
    result = _compare(dataset, factor, baseline, metric, **options)
    if pivot is not None:
        result.attrs["pivot"] = pivot
    return result


@checked()
def effects(results, metric, where=None):
    """Which factors matter for ``metric``: main effects and two-factor interactions, each
    with its share of the variance and an F test (an xarray Dataset, one row per term).

    ``results``: a Dataset, a results file or its folder; ``where``: ``{factor: level}``.
    """
    from campaign.analysis.anova import effects as _effects

    return _effects(_dataset(results), metric, where)


@checked(check.SENSITIVITY_OPTIONS)
def sensitivity(results, metric, **options):
    """Which factors drawn over ranges drive ``metric``, on a design of points: Sobol indices
    (a Saltelli design), Morris effects, delta, RBD-FAST or standardized regression
    coefficients, with intervals (a `campaign.analysis.sensitivity.Sensitivity`: the table
    in ``.table``).

    ``results``: a Dataset, a results file or its folder. Options: ``method``, ``where``,
    ``confidence``, ``resamples``, ``transform="log"`` (see
    ``campaign.analysis.sensitivity.sensitivity``); ``.warnings``: too few points, ...
    """
    from campaign.analysis.sensitivity import sensitivity as _sensitivity

    return _sensitivity(_dataset(results), metric, **options)


@checked()
def select(results):
    """What a selection campaign (a spec with ``select:``) decided, replayed from its results
    as the run decided it: a `campaign.analysis.selection_report.SelectionReport` with
    ``groups`` (a row per group: the system selected, how the selection ended, its stages and
    tasks, and the tasks Rinott's two-stage procedure needs for the same guarantee) and
    ``systems`` (a row per system: selected, eliminated or not, the stage that decided it,
    its replicates and mean), ``guarantee`` and ``notes``; `table` writes it.

    ``results``: a Dataset, a results file or its folder.
    """
    from campaign.analysis.selection_report import selection_report

    return selection_report(_dataset(results))


@checked(fmt=check.required_text)
def table(result, fmt="text", digits=None, pivot=None):
    """Any result of `query`, `rank`, `compare`, `effects` or `select` as text in ``fmt``: ``text``,
    ``csv``, ``json``, ``markdown``, ``latex`` (booktabs) or ``html``, through the one
    renderer the commands use. ``digits``: significant digits (default: from each
    interval); ``pivot``: a factor whose levels go across (`query` and `compare` tables;
    default: the ``pivot`` they were given), one of the table's rows."""
    from campaign.analysis.ranking_text import Ranking
    from campaign.errors import ParameterError

    if digits is not None and not (isinstance(digits, int) and 1 <= digits <= 15):
        raise ParameterError(f"{{digits}} {digits!r}: give a whole number from 1 to 15", "digits")
    if type(result).__name__ == "SelectionReport":
        from campaign.render.selection import render_selection

        check.no_pivot(pivot, "a selection")
        return render_selection(result, fmt, digits)
    if isinstance(result, Ranking):
        from campaign.render.ranking import render_ranking, render_ranking_text

        check.no_pivot(pivot, "a ranking")
        if fmt in ("text", "table") and digits is None:  # as `query --rank` prints it
            return render_ranking_text(result) + "\n"
        return render_ranking(result.result, fmt, [result.title, *result.notes], digits)
    if hasattr(result, "attrs") and "baseline" in getattr(result, "attrs", {}):
        from campaign.render.comparison import render_comparison

        return render_comparison(result, fmt, digits, _pivot_of(result, pivot))
    if hasattr(result, "data_vars") and "metric" in result.attrs:
        from campaign.render.effects import render_effects

        check.no_pivot(pivot, "an analysis of effects")
        return render_effects(result, fmt, digits)
    if hasattr(result, "columns") and "metrics" in result.attrs:
        from campaign.render.summary import render_summary

        attrs = result.attrs
        across = _pivot_of(result, pivot)
        return render_summary(
            result, attrs["metrics"], fmt, attrs["units"], attrs["confidence"], 0, digits, across
        )
    raise ParameterError(
        "{result} must be what query, rank, compare, effects or select returned, got "
        f"{type(result).__name__}",
        "result",
    )


@checked(check.PLOT_OPTIONS)
def plot(results, metrics, kind="mean", out=None, **options):
    """A figure of ``metrics`` (a name or a list: a row of panels each). ``kind``: ``mean``,
    ``difference`` (against ``baseline``, with `compare`'s intervals), ``box``, ``violin``
    or ``ecdf`` of the replicates. Options: ``x``, ``by``, ``facet`` (a column of panels per
    level; default: a factor averaging could mislead on, if any; False: none), ``where``,
    ``baseline``, ``confidence``, ``log``, ``size`` (``column``, ``page`` or ``"WxH"``
    inches), ``style`` (``paper`` or ``screen``), ``formula``, ``title`` (see
    `campaign.render.figures.plot`).

    Returns the matplotlib Figure; with ``out`` (a file, its suffix the format: png, pdf,
    svg) writes it there, closes it and returns the path.
    """
    from campaign.render.figures import plot as _plot
    from campaign.render.figures import save_figure

    path = Path(out).expanduser() if out is not None else None
    figure = _plot(_dataset(results), metrics, kind, **options)
    if path is None:
        return figure
    save_figure(figure, path)
    return path


@checked(baseline=check.text)
def report(results, out=None, metrics=None, baseline=None):
    """Write report.html (and its figures) into ``out`` (default: the folder of
    results.nc); ``baseline``: ``"FACTOR=LEVEL"``. Returns the page's path."""
    from campaign.render.report import write_report
    from campaign.results.netcdf import results_file
    from campaign.results.resource_group import open_resources

    if hasattr(results, "data_vars"):
        raise check.must("results", "a results file or its folder (the report reads its groups)")
    folder = Path(out).expanduser() if out is not None else results_file(results).parent
    return write_report(
        open_results(results),
        folder,
        metrics,
        open_failures(results),
        baseline,
        open_resources(results_file(results)),
    )


@checked()
def export(results, out=None, fmt=None):
    """The results as one tidy table, a row per task, units kept: CSV (units in a sidecar)
    or Parquet, from ``fmt`` or ``out``'s suffix. Returns the files written."""
    from campaign.render.export import export as _export
    from campaign.results.netcdf import results_file

    if out is None:
        out = results_file(results).with_suffix(f".{fmt or 'csv'}")
    return _export(open_results(results), open_failures(results), out, fmt)


@checked()
def models(name=None):
    """The models (names, what each simulates), or one model's declaration: params, metrics
    with units and long names, headline metrics (as `campaign models show NAME` prints)."""
    from campaign.models.describe import list_models, show

    return list_models() if name is None else show(name)


def as_spec(spec):
    """A `Spec` from a path, a dict (a spec file's keys) or a `Spec`."""
    return check.spec(spec, "spec")


def _placed(spec, output, shard):
    from campaign.design.shards import Shard, placed

    shard = Shard.parse(shard) if isinstance(shard, str) else shard
    return placed(as_spec(spec), output, shard)


def _dataset(results):
    return results if hasattr(results, "data_vars") else open_results(results)


def _metrics_of(dataset) -> list[str]:
    from campaign.results.assemble import metrics_of

    return metrics_of(dataset)


def _pivot_of(result, pivot: str | None) -> str | None:
    """The factor a table puts across: the one asked, else the one its query was given."""
    return pivot if pivot is not None else result.attrs.get("pivot")


__all__ = [
    "run",
    "validate",
    "plan",
    "status",
    "verify",
    "merge",
    "open_results",
    "open_failures",
    "open_samples",
    "open_breakdown",
    "query",
    "rank",
    "compare",
    "effects",
    "sensitivity",
    "select",
    "table",
    "plot",
    "report",
    "export",
    "models",
    "as_spec",
    "CampaignError",
    "__version__",
]

sys.modules[__name__].__class__ = check.KeepsItsFunctions  # campaign.plan stays `plan`
