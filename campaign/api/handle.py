"""`Campaign`: one campaign, opened from a spec file, a dict, a `Spec` or an output folder,
with every command as a method (SEM's ``CampaignManager`` is the model).

The spec is read once, placed in its output folder (the spec's own, the one given, the folder
it was opened from, or a shard's inside it), and each method is the API's function of the
same name on it: ``campaign.open("specs/demo.yaml").status()`` is ``campaign.status(...)``.
"""

from __future__ import annotations

import campaign.api.checks as check
from campaign.api.checks import checked


class Campaign:
    """One campaign and its output folder.

    Parameters
    ----------
    spec : Spec
        The campaign's spec, placed in its output folder (`campaign.open` makes one).
    shard : str, optional
        "I/N": the handle works on that shard of the design only.

    Attributes
    ----------
    spec : Spec
        The spec (``spec.output``: the output folder).
    shard : str or None
        The shard, as given.
    """

    def __init__(self, spec, shard=None):
        self.spec = spec
        self.shard = shard

    def __repr__(self) -> str:
        shard = f", shard {self.shard}" if self.shard else ""
        return f"<Campaign {self.spec.name} in {self.output}{shard}>"

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

    def status(self):
        """Where each task stands, from the ledger alone, and which done results were computed
        before the model or an input file changed (`campaign.status`).

        Returns
        -------
        campaign.plan.state.RunState
            Done, failed and missing tasks.
        """
        from campaign.api.running import status

        return status(self.spec, self.output, self.shard)

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

        return plan(self.spec, self.output, self.shard, on_change)

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

        return run(self.spec, output=self.output, shard=self.shard, **options)

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

        return estimate(self.spec, replicates, target_hours, job_cores, self.output, **options)

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
        where : dict or list of str, optional
            Levels: ``{factor: level or [levels]}`` or ``"factor=level"`` texts.

        Returns
        -------
        campaign.pipelines.kept_outputs.KeptOutputs
            ``tasks``; ``show(name)`` and ``extract(folder)``.
        """
        from campaign.api.stored import outputs

        return outputs(self.spec, tasks, where, self.output)

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

    def merge(self, shards=None, confidence=0.95):
        """Join this campaign's shard folders into its output folder (`campaign.merge`).

        Parameters
        ----------
        shards : list of str or pathlib.Path, optional
            The shards' folders (default: the ``shard-I-of-N`` folders in the output folder).
        confidence : float
            The confidence level of the intervals.

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
        return merge(shards if shards is not None else [self.output], self.output, confidence)

    def remetric(self, source=None, confidence=0.95, rerun_unkept=False, say=None):
        """Recompute metrics from the outputs tasks kept (`campaign.remetric`).

        Parameters
        ----------
        source : str or dict, optional
            The parser: ``"stdout"``, ``{"file": NAME}`` or ``{"parse": "module:function"}``;
            default: the spec's own.
        confidence : float
            The confidence level of the results written.
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
        The campaign, each command a method of it.
    """
    from campaign.plan.target import campaign_spec

    return Campaign(campaign_spec(target, output, shard, parameter="target"), shard)
