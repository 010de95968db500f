"""The analyses of a results file: `query`, `rank`, `compare`, `effects`, `sensitivity` and
`select`. Each takes the results as a Dataset, a results file or its folder; given a file, a
breakdown's dimension (``job_class``) named in ``by``, ``where``, ``factor`` or ``pivot`` is
one more factor (`campaign.analysis.breakdown.factor_view`), as on the command line."""

from __future__ import annotations

import campaign.api.checks as check
from campaign.api.checks import checked
from campaign.api.reading import open_results


@checked()
def query(results, metrics=None, by=None, where=None, confidence=None, pivot=None):
    """Mean and confidence interval of metrics per group of factors, the other factors pooled
    replicate by replicate.

    Parameters
    ----------
    results : xarray.Dataset, str or pathlib.Path
        The results, a results file or its folder.
    metrics : str or list of str, optional
        The metrics (default: every one).
    by : str or list of str, optional
        The factors to group by (default: every cell).
    where : dict, str or list of str, optional
        The levels kept: ``{factor: level or [levels]}`` or ``"factor=level"`` texts.
    confidence : float, optional
        The confidence level (default: the results' own).
    pivot : str, optional
        A factor grouped by too (named in ``by`` or not), whose levels `table` puts across.

    Returns
    -------
    pandas.DataFrame
        A row per group; per metric the columns ``<metric>_mean``, ``_half_width``,
        ``_ci_low``, ``_ci_high``, ``_n``, ``_nan`` and ``_left_out``, and ``_absent`` for a
        metric some finished task did not return; `table` writes it.
    """
    from campaign.analysis.breakdown import mentioned
    from campaign.analysis.metrics import choose_metrics
    from campaign.analysis.query import summary_table

    dataset = viewed(results, mentioned(by, where, pivot))
    shown = choose_metrics(dataset, "query", metrics)
    frame = summary_table(dataset, shown, by, where, confidence, pivot)
    frame.attrs.update(
        metrics=shown,
        units={m: str(dataset.variables[m].attrs.get("units", "")) for m in shown},
        confidence=confidence or float(dataset.attrs.get("confidence", 0.95)),
        pivot=pivot,
    )
    return frame


@checked(maximize=check.names)
def rank(results, factor, metrics=None, where=None, confidence=None, maximize=None):
    """Rank the levels of a factor by their mean degradation from the best.

    Parameters
    ----------
    results : xarray.Dataset, str or pathlib.Path
        The results, a results file or its folder.
    factor : str
        The factor whose levels are ranked (a strategy, say).
    metrics : str or list of str, optional
        The metrics averaged over (default: the model's headline metrics).
    where : dict, str or list of str, optional
        The levels kept, as `query` takes them.
    confidence : float, optional
        The confidence level (default: the results' own).
    maximize : str or list of str, optional
        The metrics among ``metrics`` whose largest value is the best (utilization, say);
        the smallest value of the others is.

    Returns
    -------
    campaign.analysis.ranking_text.Ranking
        ``result`` (a Dataset, a row per level), ``title`` and ``notes``; `table` writes it
        as ``campaign query --rank`` prints it.
    """
    from campaign.analysis.breakdown import mentioned
    from campaign.analysis.metrics import NoMetrics
    from campaign.analysis.ranking_text import rank_levels
    from campaign.errors import ParameterError

    dataset = viewed(results, mentioned(None, where, factor))
    try:
        return rank_levels(dataset, factor, metrics, where or (), confidence, maximize or ())
    except NoMetrics as error:
        raise ParameterError(
            f"{{factor}} needs {{metrics}} ({error.reason}); metrics: {', '.join(error.available)}",
            "factor",
            "metrics",
        ) from None


@checked(check.COMPARE_OPTIONS)
def compare(results, factor, baseline, metric, **options):
    """Each level of a factor against a baseline level: the difference and ratio of the means
    of a metric, with intervals over replicates (paired when the levels share seeds, or
    break down one task's result as a breakdown's ``job_class`` does).

    Parameters
    ----------
    results : xarray.Dataset, str or pathlib.Path
        The results, a results file or its folder.
    factor : str
        The factor whose levels are compared.
    baseline : str or number
        The level compared with.
    metric : str
        The metric compared.
    **options
        ``by`` (factors to group by; default every other), ``where`` (as `query`'s),
        ``confidence``, ``paired`` (False: Welch intervals even for a paired factor),
        ``pivot`` (a factor grouped by too, whose levels `table` puts across).

    Returns
    -------
    xarray.Dataset
        Per level and group: the means, their difference and ratio with their intervals.
    """
    from campaign.analysis.breakdown import mentioned
    from campaign.analysis.comparison import compare as compare_levels
    from campaign.analysis.query import grouping

    pivot = options.pop("pivot", None)
    dataset = viewed(results, mentioned(options.get("by"), options.get("where"), factor, pivot))
    options["by"] = grouping(dataset, options.get("by"), pivot, factor)
    result = compare_levels(dataset, factor, baseline, metric, **options)
    if pivot is not None:
        result.attrs["pivot"] = pivot
    return result


@checked()
def effects(results, metric, where=None):
    """Which factors matter for a metric: an analysis of variance of its replicates.

    Parameters
    ----------
    results : xarray.Dataset, str or pathlib.Path
        The results, a results file or its folder.
    metric : str
        The metric analysed.
    where : dict, str or list of str, optional
        The levels kept, as `query` takes them.

    Returns
    -------
    xarray.Dataset
        A row per main effect and two-factor interaction: its share of the variance, an F
        test and its rank; each factor's level means in the attributes.
    """
    from campaign.analysis.anova import effects as analysed
    from campaign.analysis.breakdown import mentioned

    return analysed(viewed(results, mentioned(None, where)), metric, where)


@checked(check.SENSITIVITY_OPTIONS)
def sensitivity(results, metric, **options):
    """Which factors drawn over ranges drive a metric, on a design of points.

    Parameters
    ----------
    results : xarray.Dataset, str or pathlib.Path
        The results, a results file or its folder.
    metric : str
        The metric analysed.
    **options
        ``method`` (``sobol``, ``morris``, ``delta``, ``rbd_fast`` or ``regression``;
        default: from the design), ``where``, ``confidence``, ``resamples`` (bootstrap
        resamples of sobol, morris, delta and rbd_fast intervals, 10 or more; default 1000;
        refused with the regression, whose intervals are Student t),
        ``transform="log"`` (see `campaign.analysis.sensitivity.sensitivity`).

    Returns
    -------
    campaign.analysis.sensitivity.Sensitivity
        The indices with intervals in ``.table`` (``.second_order`` for Sobol pairs), and
        ``.warnings``: too few points, and the like.
    """
    from campaign.analysis.sensitivity import sensitivity as indices
    from campaign.analysis.unfinished import written_before

    dataset = viewed(results, ())
    result = indices(dataset, metric, **options)
    result.warnings[:0] = written_before(dataset.attrs)  # results.nc behind its ledger
    return result


@checked(check.SENSITIVITY_OPTIONS)
def sensitivity_options(**options):
    """``options`` of `sensitivity`, checked as it checks them: for a caller that reads the
    results once for several metrics, so that a bad option is refused before the read."""
    return options


def check_metrics(dataset, metrics) -> None:
    """Refuse a metric ``dataset`` lacks, as `sensitivity` does, before the indices of the
    metrics named before it are computed."""
    from campaign.analysis.sensitivity_checks import check_metric

    for metric in metrics:
        check_metric(dataset, metric)


def check_second_order(results, method=None) -> None:
    """Refuse second-order Sobol indices of ``results`` (a Dataset, a results file or its
    folder) analysed by ``method`` (None: the design's default) in one line, from two of
    its attributes alone, before any indices are computed."""
    import xarray as xr

    from campaign.analysis.second_order import ATTRIBUTES, second_order_refusal
    from campaign.errors import CampaignError
    from campaign.results.netcdf import results_file
    from campaign.store.results_attributes import results_attributes

    if isinstance(results, xr.Dataset):
        attrs = dict(results.attrs)
    else:
        try:
            attrs = results_attributes(results_file(results), ATTRIBUTES)
        except OSError:  # not a netCDF file: reading the results says so
            return
    refusal = second_order_refusal(attrs, method)
    if refusal:
        raise CampaignError(refusal)


@checked()
def select(results):
    """What a selection campaign (a spec with ``select:``) decided, replayed from its results
    as the run decided it.

    Parameters
    ----------
    results : xarray.Dataset, str or pathlib.Path
        The results, a results file or its folder.

    Returns
    -------
    campaign.analysis.selection_report.SelectionReport
        ``groups`` (a row per group: the system selected, how the selection ended, its
        stages and tasks, and the tasks Rinott's procedure needs for the same guarantee),
        ``systems`` (a row per system), ``guarantee`` and ``notes``; `table` writes it.
    """
    from campaign.analysis.selection_report import selection_report

    return selection_report(viewed(results, ()))


def viewed(results, names):
    """The results as a Dataset: as given, or read from a file, a breakdown's dimension among
    ``names`` made a factor."""
    if hasattr(results, "data_vars"):
        return results
    from campaign.analysis.breakdown import factor_view
    from campaign.results.unreplaced import unreplaced

    return unreplaced(results, lambda: factor_view(open_results(results), results, names))
