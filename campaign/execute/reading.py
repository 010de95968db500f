"""Reading a finished batch and checking it may count.

A batch's value is its worker, one result per task, the digest of the model's code the
worker ran and the worker's engine (`campaign.plan.sources.engine_identity`). Results from
other code stop the run; results from a worker running another engine are not used, and that
worker is not used again. The checks and the failures they give are pure functions; `Reading`
applies them to the batches as they land.
"""

from __future__ import annotations

from concurrent.futures import CancelledError
from typing import Any

from campaign.errors import CampaignError
from campaign.execute.recovery import Recovery
from campaign.execute.shell import Shell
from campaign.execute.worker import CHANGED_WHILE_RUNNING
from campaign.plan.sources import identity_differences
from campaign.spec.command_model import CommandSpec
from campaign.spec.named_files import named_files


def batch_failures(error: BaseException, size: int) -> list[dict[str, Any]]:
    """One failure per task of a batch that could not run (e.g. the model not importable
    where it ran): not the model's doing, so each is tried again."""
    message = f"{type(error).__name__}: {error}"
    failure = {"status": "failed", "error": message, "traceback": "", "elapsed": 0.0}
    failure["transient"] = True
    return [dict(failure) for _ in range(size)]


def other_code(
    worker: str, model_name: str, code: str = "", differing: list[str] | tuple = ()
) -> CampaignError:
    """The error a batch run with other code of the model than this machine has stops with
    (``code``: the digest the batch came back with; ``differing``: what differs, as a
    program's worker says it)."""
    if CHANGED_WHILE_RUNNING in code:
        return changed_while_running(worker, model_name, differing)
    if differing:
        shown = "; ".join(differing[:3]) + (f"; {len(differing) - 3} more" * (len(differing) > 3))
        return CampaignError(
            f"the Dask worker {worker} runs other code of model {model_name} than this "
            f"machine has ({shown}): install the same program, libraries and inputs on every "
            "worker and run again; the results it computed were not stored"
        )
    return CampaignError(
        f"the Dask worker {worker} runs other code of model {model_name} than "
        "this machine has (it loaded the model before its code changed, or has "
        "another version): restart the workers (or install the same code on them) and "
        "run again; the results it computed were not stored"
    )


def changed_while_running(worker: str, model: Any, differing: list[str] | tuple) -> CampaignError:
    """The error a batch whose program's files changed as it ran stops the run with, naming
    them (``differing``: as its worker says them). A file the spec names by absolute path
    (`campaign.spec.named_files`) that changed is most often one the program writes (``LOG:
    /scratch/log.txt``): digested as one it reads, it cannot be named so."""
    named = named_files(model) if isinstance(model, CommandSpec) else ()
    written = [path for path in named if any(p.startswith(f"{path} ") for p in differing)]
    if written:
        return CampaignError(
            f"on the Dask worker {worker}, {', '.join(written)} changed while a batch of model "
            f"{model} ran; the results of that batch were not stored: a file model.command, "
            "model.env, a template or an input's text names by absolute path is digested as "
            "one the program reads, so a file the program writes must not be named so: name "
            "it in the task's folder ({dir}/log.txt, or a relative path; keep: brings it back) "
            "and run again"
        )
    shown = f" ({'; '.join(differing[:3])})" if differing else ""
    return CampaignError(
        f"on the Dask worker {worker}, files of model {model} (the program, its libraries or "
        f"its interpreter) changed while a batch of it ran{shown}; the results of that batch "
        "were not stored: once the files are as they should be, run again (`campaign run` "
        "then says which stored results were computed before the change)"
    )


def unloadable(worker: str, why: str, saved: int) -> CampaignError:
    """The error a model that cannot be loaded on a worker stops the run with."""
    return CampaignError(
        f"on Dask worker {worker}: {why}; the {saved} results finished in this "
        "run are saved: make the model importable on every worker (the same "
        "PYTHONPATH or installed package) and run the same command again"
    )


def no_engine_like_this(worker: str, difference: str, saved: int) -> CampaignError:
    """The error a run stops with when every worker runs another engine than this process."""
    return CampaignError(
        f"no Dask worker runs the engine this machine runs (worker {worker}: "
        f"{difference}); the {saved} results finished in this run are saved: "
        "start workers with the same campaign code, Python and versions of numpy, scipy, "
        "pandas and the model's libraries as here and run the same command again"
    )


class Reading:
    """Reads landed batches: their worker and results, or why they cannot count."""

    def __init__(self, shell: Shell, recovery: Recovery):
        self.shell = shell
        self.recovery = recovery

    def collect(
        self, future: Any, value: Any, batch: list[Any]
    ) -> tuple[str, list[dict[str, Any]]]:
        """The batch's worker and results, or one failure per task when it could not run."""
        shell = self.shell
        if future.status == "cancelled" or isinstance(value, CancelledError):
            raise shell.lost(value if isinstance(value, BaseException) else CancelledError())
        if future.status == "error":
            error = value[1] if isinstance(value, tuple) else value
            if isinstance(error, OSError):
                raise shell.lost(error)
            # the batch itself could not run (e.g. model not importable)
            return "", batch_failures(error, len(batch))
        worker, results, code = value[:3]
        if isinstance(results, str):  # the model cannot be loaded there: no task can run
            raise unloadable(worker, results, shell.saved())
        if shell.code is not None and code is not None and code != shell.code:
            raise other_code(worker, shell.model_name, code, value[4] if len(value) > 4 else ())
        return worker, results

    def foreign(self, value: Any) -> bool:
        """Whether a batch's result comes from a worker that runs another engine than this
        process (`engine_identity`); the first such result refuses its worker in one line, and
        the run stops when no worker is left to use."""
        shell = self.shell
        worker = value[0]
        if worker in shell.refused:
            return True
        there = value[3] if len(value) > 3 else None  # an older worker sends none
        differences = identity_differences(shell.engine, there)
        if not differences:
            return False
        shell.refused[worker] = ", ".join(differences)
        shell.say(f"worker {worker}: {shell.refused[worker]} — it is not used")
        flight = shell.flight
        there = [f for f in flight.in_flight if flight.target.get(f.key) == worker]
        for other in [f for f in there if not f.done()]:
            self.recovery.requeue(other)  # its other batches would not count either
        workers = shell.nthreads()
        if workers and set(workers) <= set(shell.refused):
            raise no_engine_like_this(worker, shell.refused[worker], shell.saved())
        return True
