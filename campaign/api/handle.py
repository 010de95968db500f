"""`Campaign`: one campaign, opened from a spec file, a dict, a `Spec` or an output folder,
with every command as a method (SEM's ``CampaignManager`` is the model).

The spec is placed in its output folder (the spec's own, the one given, the folder it was
opened from, or a shard's inside it), and each method is the API's function of the same name
on it: ``campaign.open("specs/demo.yaml").status()`` is ``campaign.status(...)``. Opened from
a spec file or an output folder, the spec is read again from there as each method is called,
as the function given that path would read it: a spec edited, or a run of another process
that wrote results.nc from another spec, never leaves the handle counting, running and
writing with the spec it first read.
"""

from __future__ import annotations

import campaign.api.checks as check
from campaign.api.checks import checked


class OpenedCampaign:
    """What a `Campaign` was opened from, and its spec as it stands now."""

    def __init__(self, spec, shard=None, source=None):
        self._spec = spec
        self.shard = shard
        self._source = source

    @property
    def spec(self):
        """The spec, read again from the spec file or output folder the campaign was opened
        from (an output folder whose results.nc is away, set aside by a run under way: the
        spec last read)."""
        if self._source is not None:
            from campaign.plan.target import campaign_spec
            from campaign.store.folder import RESULTS_FILE

            path, output = self._source
            if not path.is_dir() or (path / RESULTS_FILE).is_file():
                self._spec = campaign_spec(path, output, self.shard, parameter="target")
        return self._spec

    def __repr__(self) -> str:  # the spec last read: a spec file broken since never hides it
        shard = f", shard {self.shard}" if self.shard else ""
        return f"<Campaign {self._spec.name} in {self._spec.output}{shard}>"

    @property
    def name(self) -> str:
        """The campaign's name."""
        return self.spec.name

    @property
    def output(self):
        """The output folder (a `pathlib.Path`)."""
        return self.spec.output

    @property
    def results_path(self):
        """Where its results.nc is (or will be)."""
        from campaign.store.folder import RESULTS_FILE

        return self.output / RESULTS_FILE


class Campaign(OpenedCampaign):
    """One campaign and its output folder.

    Parameters
    ----------
    spec : Spec
        The campaign's spec, placed in its output folder (`campaign.open` makes one).
    shard : str, optional
        "I/N": the handle works on that shard of the design only.
    source : tuple, optional
        ``(path, output)``: the spec file or output folder the spec was read from, and the
        output folder given; the spec is read from there again at each use.

    Attributes
    ----------
    shard : str or None
        The shard, as given.

    The property ``spec`` is the spec as it stands now (``spec.output``: the output folder).
    """

    def status(self):
        """Where each task stands, from the ledger alone, and which done results were computed
        before the model or an input file changed (`campaign.status`).

        Returns
        -------
        campaign.plan.state.RunState
            Done, failed and missing tasks.
        """
        from campaign.api.running import status

        spec = self.spec
        return status(spec, spec.output, self.shard)

    def plan(self, on_change="refuse"):
        """What a run would do (`campaign.plan`).

        Parameters
        ----------
        on_change : {"refuse", "rerun", "accept"}
            What to do with stored results computed before the model's code or an input
            file changed.

        Returns
        -------
        campaign.plan.state.RunState
            Where each task stands: ``done``, ``failed``, ``missing``, ``to_run``.
        """
        from campaign.api.running import plan

        spec = self.spec
        return plan(spec, spec.output, self.shard, on_change)

    def run(self, **options):
        """Run what is missing (`campaign.run`), of the shard the campaign was opened with.

        Parameters
        ----------
        **options
            `campaign.run`'s options but ``output`` and ``shard`` (the campaign's own).

        Returns
        -------
        xarray.Dataset
            The results, also written to results.nc (a shard's: in memory only).
        """
        from campaign.api.running import run
        from campaign.store.folder import check_output

        spec = self.spec
        if self._source is not None and self._source[1] is not None:
            check_output(spec, given=True)  # a file in the way is blamed on ``output``
        return run(spec, output=spec.output, shard=self.shard, **options)

    def estimate(self, replicates=2, target_hours=1.0, job_cores=16, **options):
        """Run a pilot and size the whole campaign (`campaign.estimate`).

        Parameters
        ----------
        replicates : int
            The pilot's replicates per cell.
        target_hours : float
            The time the whole campaign should take.
        job_cores : int
            Cores per batch job.
        **options
            The pilot run's ``workers``, ``scheduler``, ``on_change`` and ``say``.

        Returns
        -------
        costs : campaign.results.resources.Costs
            What the finished tasks cost.
        estimate : campaign.analysis.sizing.Estimate
            What the whole campaign costs, and the batch jobs that finish it in time.
        """
        from campaign.api.running import estimate

        spec = self.spec
        return estimate(spec, replicates, target_hours, job_cores, spec.output, **options)

    def results(self):
        """The results that results.nc holds (`campaign.open_results`).

        Returns
        -------
        xarray.Dataset
            One row per task, the per-cell summaries, the provenance in the attributes.
        """
        from campaign.api.reading import open_results

        return open_results(self.results_path)

    def outputs(self, tasks=None, where=None):
        """The stored tasks that kept outputs (`campaign.outputs`).

        Parameters
        ----------
        tasks : str or list of str, optional
            Task keys (every task when neither this nor ``where`` is given).
        where : dict, str or list of str, optional
            Levels: ``{factor: level or [levels]}`` or ``"factor=level"`` texts.

        Returns
        -------
        campaign.pipelines.kept_outputs.KeptOutputs
            ``tasks``; ``show(name)`` and ``extract(folder)``.
        """
        from campaign.api.stored import outputs

        spec = self.spec
        return outputs(spec, tasks, where, spec.output)

    def task(self, key=None, where=None, replicate=None):
        """One task, to look at or to run by hand (`campaign.task`).

        Parameters
        ----------
        key : str, optional
            The task's key.
        where : dict, str or list of str, optional
            Instead of a key: one level of each factor with several, with ``replicate``.
        replicate : int, optional
            The replicate (from 0) of the cell ``where`` chooses.

        Returns
        -------
        campaign.pipelines.task_by_hand.TaskByHand
            Its levels, seed, params and stored metrics; ``prepare(folder)``.
        """
        from campaign.api.stored import task

        spec = self.spec
        return task(spec, key, where, replicate, spec.output)

    def verify(self, sample=10, workers=None, scheduler=None):
        """Run a sample of finished tasks again and compare them bit for bit
        (`campaign.verify`).

        Parameters
        ----------
        sample : int
            Finished tasks to run again.
        workers : int, optional
            Worker processes of the embedded cluster.
        scheduler : str, optional
            The address of an existing Dask scheduler instead.

        Returns
        -------
        campaign.pipelines.verify.Verdict
            Each mismatch, damaged kept outputs, ``summary()``.
        """
        from campaign.api.stored import verify

        return verify(self.spec, sample, workers, scheduler)

    def merge(self, shards=None, confidence=None):
        """Join this campaign's shard folders into its output folder (`campaign.merge`).

        Parameters
        ----------
        shards : list of str or pathlib.Path, optional
            The shards' folders (default: the ``shard-I-of-N`` folders in the output folder).
        confidence : float, optional
            The confidence level of the intervals (default: that of a precision target, else
            that of the results already written, as `campaign.merge` keeps it; else 0.95).

        Returns
        -------
        campaign.pipelines.merge.Merged
            What `campaign.merge` returns.
        """
        from campaign.api.stored import merge
        from campaign.errors import ParameterError

        if self.shard is not None:
            raise ParameterError(
                "{shard}: merge joins a campaign's shards into its output folder; open the "
                "campaign without shard",
                "shard",
            )
        output = self.output
        return merge(shards if shards is not None else [output], output, confidence)

    def remetric(self, source=None, confidence=None, rerun_unkept=False, say=None):
        """Recompute metrics from the outputs tasks kept (`campaign.remetric`).

        Parameters
        ----------
        source : str or dict, optional
            The parser: ``"stdout"``, ``{"file": NAME}`` or ``{"parse": "module:function"}``;
            default: the spec's own.
        confidence : float, optional
            The confidence level of the results written (default: that of results.nc, as
            `campaign.remetric` keeps it; else 0.95).
        rerun_unkept : bool
            Set tasks that kept no outputs aside for `run` to compute again.
        say : callable, optional
            Told each line of what was done.

        Returns
        -------
        campaign.pipelines.remetric.Recomputed
            The results, the tasks recomputed and the metrics returned.
        """
        from campaign.api.stored import remetric

        return remetric(self.spec, source, confidence, rerun_unkept, say)


@checked(target=check.anything)
def open(target, output=None, shard=None):
    """Open a campaign: its spec, placed in its output folder.

    Parameters
    ----------
    target : str, pathlib.Path, dict or Spec
        A spec file, an output folder (the spec its results.nc keeps, writing to that
        folder), a dict (a spec file's keys; relative paths from the working folder) or a
        `Spec`.
    output : str or pathlib.Path, optional
        The output folder, instead of the spec's.
    shard : str, optional
        "I/N": only that shard of the design, in its own folder (``OUTPUT/shard-I-of-N``,
        or ``output``).

    Returns
    -------
    Campaign
        The campaign, each command a method of it. Opened from a spec file or an output
        folder, it reads the spec from there again at each call, as the functions do.
    """
    import os
    from pathlib import Path

    from campaign.plan.target import campaign_spec

    source = None
    if isinstance(target, str | os.PathLike):  # read again at each use, wherever the work is
        target = Path(target).expanduser().absolute()
        output = Path(output).expanduser().absolute() if output is not None else None
        source = (target, output)
    return Campaign(campaign_spec(target, output, shard, parameter="target"), shard, source)
