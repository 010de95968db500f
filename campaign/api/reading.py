"""Reading a results file: its root (a row per task), its samples, a breakdown as a factor
and its failed tasks."""

from __future__ import annotations

import campaign.api.checks as check
from campaign.api.checks import checked


@checked(path=check.required_path)
def open_results(path):
    """Reopen a results file as a Dataset, one row per task.

    Parameters
    ----------
    path : str or pathlib.Path
        A results file, or the output folder holding results.nc.

    Returns
    -------
    xarray.Dataset
        Each metric per factor levels and replicate, ``status`` and ``seed`` per task, the
        per-cell summaries, and the provenance in the attributes.
    """
    from campaign.results.netcdf import open_results as opened

    return opened(path)


@checked(path=check.required_path)
def open_samples(path):
    """Each task's samples' quantiles (group ``samples`` of results.nc).

    Parameters
    ----------
    path : str or pathlib.Path
        A results file, or its folder.

    Returns
    -------
    xarray.Dataset
        Each sample's quantiles per task, with the task's status and sample sizes, as
        `campaign.analysis.distributions.cell_cdfs` pools them.
    """
    from campaign.results.netcdf import open_samples as opened
    from campaign.results.unreplaced import unreplaced

    return unreplaced(path, lambda: opened(path))


@checked(path=check.required_path, dimension=check.required_text)
def open_breakdown(path, dimension):
    """The results with a breakdown's dimension as one more factor.

    Parameters
    ----------
    path : str or pathlib.Path
        A results file, or its folder.
    dimension : str
        The breakdown's dimension (``"job_class"``: group ``breakdowns/job_class``).

    Returns
    -------
    xarray.Dataset
        The results, each metric broken down along ``dimension``, for `query`, `compare`
        and `plot`.
    """
    from campaign.analysis.breakdown import as_factor
    from campaign.results.netcdf import open_breakdown as opened
    from campaign.results.unreplaced import unreplaced

    return unreplaced(path, lambda: as_factor(open_results(path), opened(path, dimension)))


@checked(path=check.required_path)
def open_failures(path):
    """The failed tasks of a results file.

    Parameters
    ----------
    path : str or pathlib.Path
        A results file, or its folder.

    Returns
    -------
    xarray.Dataset
        One row per failed task: its levels, replicate, seed and error.
    """
    from campaign.results.netcdf import open_failures as opened

    return opened(path)


def dataset_of(results):
    """The results as a Dataset: as given, or read from a results file or its folder."""
    return results if hasattr(results, "data_vars") else open_results(results)
