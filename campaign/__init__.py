"""campaign: simulation campaigns of scheduling strategies on Dask, results as xarray/netCDF.

From Python::

    import campaign
    results = campaign.run("specs/demo.yaml")          # an xarray.Dataset, also in results.nc
    again = campaign.open_results("outputs/demo/results.nc")
"""

__version__ = "0.1.0"


def run(spec, **options):
    """Run what is missing of a campaign spec and return its results Dataset.

    Options: ``workers``, ``scheduler``, ``cluster``, ``security``, ``retries``,
    ``task_timeout``, ``wait_workers``, ``confidence``, ``new``, ``progress``, ``on_change``
    ("rerun" or "accept" stored results computed before the model's code or an input file
    changed; see ``campaign.runner.run`` and cluster/README.md), ``output`` (a folder instead
    of the spec's output), ``shard`` ("I/N": only that shard of the design, into its own
    folder; ``campaign merge`` joins the shards).
    """
    from campaign.runner import run as _run

    return _run(spec, **options)


def open_results(path):
    """Reopen a results file (or the output folder holding results.nc) as a Dataset."""
    from campaign.results.netcdf import open_results as _open

    return _open(path)


def open_failures(path):
    """The failed tasks of a results file (or its folder), one row each, with their errors."""
    from campaign.results.netcdf import open_failures as _open

    return _open(path)


def compare(results, factor, baseline, metric, **options):
    """Each level of ``factor`` against ``baseline``: difference and ratio of the means of
    ``metric`` with intervals over replicates (paired when the levels share seeds).

    ``results``: a Dataset, a results file or its folder. Options: ``by``, ``where``,
    ``confidence``, ``paired`` (see ``campaign.analysis.comparison.compare``). Returns an
    xarray Dataset.
    """
    from campaign.analysis.comparison import compare as _compare

    if not hasattr(results, "data_vars"):
        results = open_results(results)
    return _compare(results, factor, baseline, metric, **options)


def effects(results, metric, where=None):
    """Which factors matter for ``metric``: main effects and two-factor interactions, each
    with its share of the variance and an F test (an xarray Dataset, one row per term).

    ``results``: a Dataset, a results file or its folder; ``where``: ``factor=level`` clauses.
    """
    from campaign.analysis.anova import effects as _effects

    if not hasattr(results, "data_vars"):
        results = open_results(results)
    return _effects(results, metric, where)


def sensitivity(results, metric, **options):
    """Which factors drawn over ranges drive ``metric``, on a design of points: Sobol indices
    (a Saltelli design), Morris effects, delta, RBD-FAST or standardized regression
    coefficients, with intervals (a `campaign.analysis.sensitivity.Sensitivity`: the table
    in ``.table``).

    ``results``: a Dataset, a results file or its folder. Options: ``method``, ``where``,
    ``confidence``, ``resamples`` (see ``campaign.analysis.sensitivity.sensitivity``).
    """
    from campaign.analysis.sensitivity import sensitivity as _sensitivity

    if not hasattr(results, "data_vars"):
        results = open_results(results)
    return _sensitivity(results, metric, **options)


__all__ = ["run", "open_results", "open_failures", "compare", "effects", "sensitivity"]
__all__ += ["__version__"]
