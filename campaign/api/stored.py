"""The commands that work on what a campaign stored: `verify` (a sample run again and
compared), `merge` (shard folders joined), `remetric` (metrics recomputed from kept outputs),
`outputs` (the outputs tasks kept) and `task` (one task, to run by hand)."""

from __future__ import annotations

import campaign.api.checks as check
from campaign.api.checks import checked


@checked(target=check.anything, sample=check.whole(1, optional=False))
def verify(target, sample=10, workers=None, scheduler=None):
    """Run a sample of a campaign's finished tasks again, store nothing, and compare every
    metric (and kept output) with the stored one, bit for bit.

    Parameters
    ----------
    target : str, pathlib.Path, dict or Spec
        The campaign: a spec file, an output folder, a dict or a `Spec`.
    sample : int
        Finished tasks to run again (the same ones every time: drawn from the seed).
    workers : int, optional
        Worker processes of the embedded cluster.
    scheduler : str, optional
        The address of an existing Dask scheduler instead.

    Returns
    -------
    campaign.pipelines.verify.Verdict
        ``mismatches`` (one per metric that came back different), ``outputs`` (finished
        tasks whose kept outputs are missing or damaged), ``left_out``, ``summary()``.
    """
    from campaign.pipelines.verify import verify as verify_sample

    spec = check.spec(target, "target")
    return verify_sample(spec, sample, workers=workers, scheduler=scheduler)


@checked(folders=check.paths, out=check.required_path, confidence=check.level)
def merge(folders, out, confidence=None):
    """Join the output folders of one campaign's shards into one and write its results.nc.

    Parameters
    ----------
    folders : list of str or pathlib.Path
        The shards' folders (or folders holding ``shard-I-of-N`` folders).
    out : str or pathlib.Path
        The merged output folder (it may already hold records of the same campaign).
    confidence : float, optional
        The confidence level of the intervals (default: that of a precision target, as a run
        writes; else that of the folders' results.nc, when they agree; else 0.95).

    Returns
    -------
    campaign.pipelines.merge.Merged
        ``dataset`` (the results), ``out``, ``copied`` records, ``notes``, ``missing`` tasks
        per shard and ``failed`` tasks.
    """
    from campaign.pipelines.merge import merge as merge_folders

    return merge_folders(list(folders), out, confidence=confidence)


@checked(
    target=check.anything,
    source=check.anything,
    confidence=check.level,
    rerun_unkept=check.flag,
    say=check.function,
)
def remetric(target, source=None, confidence=None, rerun_unkept=False, say=None):
    """Recompute (or add) metrics of every finished task from the outputs it kept, running
    nothing again; store them and write results.nc again.

    Parameters
    ----------
    target : str, pathlib.Path, dict or Spec
        The campaign: a spec file, an output folder, a dict or a `Spec`.
    source : str or dict, optional
        The metrics parser, as a program's ``metrics:`` takes it: ``"stdout"``,
        ``{"file": NAME}`` or ``{"parse": "module:function"}``; default: the spec's own.
    confidence : float, optional
        The confidence level of the intervals of the results written (default: that of
        results.nc, else 0.95).
    rerun_unkept : bool
        Set the records of tasks that kept no outputs aside for `run` to compute again
        (else such a task refuses the whole remetric).
    say : callable, optional
        Told each line of what was done.

    Returns
    -------
    campaign.pipelines.remetric.Recomputed
        ``dataset`` (the results), ``tasks`` recomputed, ``metrics`` returned, ``results``
        (the file written).
    """
    from campaign.pipelines.remetric import remetric as recompute

    spec = check.spec(target, "target")
    return recompute(spec, metrics_source(source), confidence, say, rerun_unkept)


@checked(target=check.anything, tasks=check.names)
def outputs(target, tasks=None, where=None, output=None, shard=None):
    """The stored tasks that kept outputs, chosen by key or levels, to read or extract.

    Parameters
    ----------
    target : str, pathlib.Path, dict or Spec
        The campaign: a spec file, an output folder, a dict or a `Spec`.
    tasks : str or list of str, optional
        Task keys (every task when neither this nor ``where`` is given).
    where : dict, str or list of str, optional
        Levels: ``{factor: level or [levels]}`` or ``"factor=level[,level]"`` texts.
    output : str or pathlib.Path, optional
        The output folder, instead of the spec's.
    shard : str, optional
        "I/N": that shard's folder.

    Returns
    -------
    campaign.pipelines.kept_outputs.KeptOutputs
        ``tasks`` (each with ``key``, ``levels``, ``replicate``, ``status``, ``sizes``);
        ``show(name)`` gives one output's bytes, ``extract(folder)`` writes them.
    """
    from campaign.pipelines.kept_outputs import kept_outputs
    from campaign.plan.target import campaign_spec

    spec = campaign_spec(target, output, shard, parameter="target")
    return kept_outputs(spec, tasks or (), where)


@checked(target=check.anything, key=check.text, replicate=check.whole(0))
def task(target, key=None, where=None, replicate=None, output=None, shard=None):
    """One task of a campaign, to look at or to run by hand: its levels, replicate, seed,
    params and what is stored for it; ``prepare(folder)`` makes a program's task folder as a
    worker makes it and gives its command line.

    Parameters
    ----------
    target : str, pathlib.Path, dict or Spec
        The campaign: a spec file, an output folder, a dict or a `Spec`.
    key : str, optional
        The task's key (as `status` and `outputs` list them).
    where : dict, str or list of str, optional
        Instead of a key: one level of each factor with several, as
        ``{factor: level}`` or ``"factor=level"`` texts, with ``replicate``.
    replicate : int, optional
        The replicate (from 0) of the cell ``where`` chooses.
    output : str or pathlib.Path, optional
        The output folder, instead of the spec's.
    shard : str, optional
        "I/N": that shard's folder.

    Returns
    -------
    campaign.pipelines.task_by_hand.TaskByHand
        ``key``, ``levels``, ``replicate``, ``seed``, ``params``, ``status``, ``metrics``
        (the stored ones); ``prepare(folder)`` gives a ``PreparedCommand`` (``folder``,
        ``argv``, ``env``, ``shell_line()``).
    """
    from campaign.analysis.levels import clauses
    from campaign.pipelines.task_by_hand import task_by_hand
    from campaign.plan.target import campaign_spec

    spec = campaign_spec(target, output, shard, parameter="target")
    return task_by_hand(spec, key, clauses(where or []), replicate)


def metrics_source(source):
    """A metrics parser's source as a program's ``metrics:`` gives it (None: the spec's)."""
    from campaign.errors import ParameterError
    from campaign.spec.program_metrics import MetricsSource, parse_main_source

    if source is None or isinstance(source, MetricsSource):
        return source

    def refused(message: str) -> ParameterError:  # "model.metrics...: what is wrong"
        return ParameterError("{source}: " + message.partition(": ")[2], "source")

    return parse_main_source(source, refused)
