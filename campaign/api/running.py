"""The commands that read a spec and run it: `validate`, `plan`, `status`, `run` and
`estimate` (`campaign plan --estimate`)."""

from __future__ import annotations

from typing import Any

import campaign.api.checks as check
from campaign.api.checks import checked
from campaign.errors import ParameterError


@checked(check.RUN_OPTIONS)
def run(spec, **options):
    """Run what is missing of a campaign and return its results.

    Finished tasks are stored as they complete, so an interrupted run loses nothing: running
    it again runs only the rest.

    Parameters
    ----------
    spec : str, pathlib.Path, dict or Spec
        A spec file, an output folder (the spec its results.nc keeps), the spec itself as a
        dict (the keys of a spec file; relative paths are taken from the working folder) or a
        `campaign.spec.load.Spec`.
    **options
        ``workers``, ``scheduler``, ``cluster``, ``security``, ``retries``,
        ``task_timeout``, ``wait_workers``, ``confidence``, ``new``, ``progress``, ``say``,
        ``on_change`` ("refuse", "rerun" or "accept" stored results computed before the
        model's code or an input file changed), ``output`` (a folder instead of the spec's
        output), ``shard`` ("I/N": only that shard of the design, into its own folder;
        `merge` joins the shards), ``keep_going`` (run on when the first results all failed
        the same way), ``where`` (as `query`'s: only those levels run), ``batch_size``,
        ``replicate_tail``, ``locality``: see `campaign.pipelines.run.run`.

    Returns
    -------
    xarray.Dataset
        The results, also written to the output folder's results.nc (a shard's: in memory
        only, with how far the shard stands in its ``shard*`` attributes).
    """
    from campaign.pipelines.run import run as run_campaign

    level = options.get("confidence")
    if level is not None and options.get("shard") is not None:
        raise ParameterError(
            f"{{confidence}} {level:g} with {{shard}}: a shard writes no results.nc, so no "
            "interval of its own; give {confidence} to the merge, which writes the campaign's",
            "confidence",
            "shard",
        )
    return run_campaign(check.spec(spec, "spec"), **options)


def validate(spec):
    """Check a spec and every cell's params against its model, before anything runs.

    Parameters
    ----------
    spec : str, pathlib.Path, dict or Spec
        The campaign, as `run` takes it.

    Returns
    -------
    Spec
        The checked spec (a `campaign.errors.CampaignError` names what is wrong).
    """
    from campaign.plan.plan import check_model
    from campaign.store.folder import check_output

    spec = check.spec(spec, "spec")
    check_model(spec)
    check_output(spec)  # a file where the output folder would be: `run` would refuse it
    return spec


@checked()
def plan(spec, output=None, shard=None, on_change="refuse"):
    """What a run would do, from the spec and the stored results alone (nothing runs).

    Parameters
    ----------
    spec : str, pathlib.Path, dict or Spec
        The campaign, as `run` takes it.
    output : str or pathlib.Path, optional
        Its output folder, instead of the spec's.
    shard : str, optional
        "I/N": that shard's folder, as ``run(spec, shard=...)`` places it.
    on_change : {"refuse", "rerun", "accept"}
        What to do with stored results computed before the model's code or an input file
        changed: refuse them (one error line), count them as to run, or as done.

    Returns
    -------
    campaign.plan.state.RunState
        Where each task stands: ``done``, ``failed``, ``missing``, ``to_run``.
    """
    from campaign.plan.plan import make_plan
    from campaign.store.folder import check_output

    placed = _placed(spec, output, shard)
    check_output(placed, given=output is not None)  # as `run` would, before counting
    return make_plan(placed, on_change=on_change)


@checked()
def status(spec, output=None, shard=None):
    """Where a campaign stands from its ledger: it refuses nothing, and names the done tasks
    computed before the model's code or an input file changed (``changed``), which `run`
    would refuse. Tasks count as results.nc counts them: a stored success whose metrics
    clash with other tasks' (a number where others give a sample) is failed.

    Parameters
    ----------
    spec : str, pathlib.Path, dict or Spec
        The campaign, as `run` takes it.
    output : str or pathlib.Path, optional
        Its output folder, instead of the spec's.
    shard : str, optional
        "I/N": that shard's folder.

    Returns
    -------
    campaign.plan.state.RunState
        Done, failed and missing tasks, as `plan` returns them.
    """
    from campaign.plan.plan import make_plan

    placed = _placed(spec, output, shard)
    # the records read whole, once: tasks count as results.nc counts them, and the costs
    return make_plan(
        placed, check_identity=False, on_change="accept", compare_sources=True, whole=True
    )


@checked(check.ESTIMATE_OPTIONS)
def estimate(
    spec, replicates=2, target_hours=1.0, job_cores=16, output=None, shard=None, **options
):
    """Size a campaign: run a pilot, then estimate what the whole campaign costs.

    The pilot runs the first ``replicates`` replicates of every cell, stored as results of
    the campaign itself (a later `run` does only the rest).

    Parameters
    ----------
    spec : str, pathlib.Path, dict or Spec
        The campaign, as `run` takes it.
    replicates : int
        The pilot's replicates per cell.
    target_hours : float
        The time the whole campaign should take.
    job_cores : int
        Cores (one-thread workers) per batch job.
    output : str or pathlib.Path, optional
        Its output folder, instead of the spec's.
    shard : str, optional
        "I/N": that shard's folder.
    **options
        The pilot run's ``workers``, ``scheduler``, ``on_change`` and ``say``, as `run`'s.

    Returns
    -------
    costs : campaign.results.resources.Costs
        What the finished tasks cost (core-seconds, peak memory, per cell).
    estimate : campaign.analysis.sizing.Estimate
        The whole campaign: tasks, core-hours, and the batch jobs that finish it in
        ``target_hours``.
    """
    from campaign.pipelines.sizing_pilot import pilot

    return pilot(_placed(spec, output, shard), replicates, target_hours, job_cores, **options)


def as_spec(spec) -> Any:
    """The `Spec` of a campaign given as `run` takes it.

    Parameters
    ----------
    spec : str, pathlib.Path, dict or Spec
        A spec file, an output folder, a dict (a spec file's keys) or a `Spec`.

    Returns
    -------
    Spec
        The spec, placed in the output folder when an output folder was given.
    """
    return check.spec(spec, "spec")


def _placed(spec, output, shard):
    from campaign.plan.target import campaign_spec

    return campaign_spec(spec, output, shard)
