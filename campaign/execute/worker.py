"""The worker side: run a batch of tasks, say which task of it is running, skip tasks another
worker took over, and end a worker process stuck in a model.

These functions are sent to Dask workers by reference (this module's path), so the package
must be importable there; the state they share lives in this module, one copy per worker
process.
"""

from __future__ import annotations

import copy
import os
import pickle
import random
import threading
import time
import traceback
from collections.abc import Collection
from functools import lru_cache
from typing import Any

import numpy as np

import campaign.execute.process_tree as process_tree
from campaign.execute.memory import peak_bytes, reset_peak
from campaign.execute.model_inputs import InputDiffers, check_inputs, check_outside_files
from campaign.execute.printed import printed_so_far
from campaign.execute.program_task import (
    CommandFailed,
    command_code,
    differing_files,
    run_command,
)
from campaign.models import describe_error
from campaign.plan.command_declaration import command_declaration
from campaign.plan.model_code import current_model
from campaign.plan.model_libraries import model_libraries, parser_libraries
from campaign.plan.program_sources import expected_files
from campaign.plan.sources import NUMERIC_LIBRARIES, code_digest, combined_digest, engine_identity
from campaign.results.names import metric_values
from campaign.spec.command_model import CommandSpec

STOPPED_EXIT_CODE = 70
# Model errors worth another try: faults of a task's surroundings (a flaky file system or
# network, memory taken by other processes), not of its params and seed. Any other exception,
# and metrics that are not numbers, come back the same from a pure model: they fail at once.
TRANSIENT_ERRORS = (OSError, MemoryError)
CHANGED_WHILE_RUNNING = ", then "  # in a batch's digest: its program's files changed as it ran


_LOADING = threading.Lock()


def _model(name: str | CommandSpec):
    """A model, and the digest of its code as this process loaded it (a long-lived worker may
    hold code that has changed on disk since); for a program, the digest of its files as this
    worker has them now: a program is not loaded into the worker, and its binary, libraries
    and interpreter may be replaced between batches (a rebuilt binary on a long-lived worker's
    PATH, an upgraded library), so each batch digests them as it starts and as it ends (cached
    by each file's identity, `campaign.plan.runtime`: a stat per file). One thread at a time:
    the batches a worker of many threads starts at once would otherwise import and digest the
    model side by side, which Python 3.11's parser does not survive (``ast.parse`` in threads:
    "AST constructor recursion depth mismatch")."""
    with _LOADING:
        if isinstance(name, CommandSpec):
            return _loaded(name), command_code(name)
        return _loaded(name)[:2]


def _engine(name: str | CommandSpec) -> dict[str, str]:
    """`engine_identity`, with the libraries a Python model imports as this process loaded
    them (`campaign.plan.model_libraries`; the model loaded first), or a program's metrics
    parser imports."""
    with _LOADING:
        if isinstance(name, CommandSpec):  # with its metrics parser's libraries
            return {**engine_identity(), **parser_libraries(name)}
        return {**engine_identity(), **_loaded(name)[2]}


@lru_cache(maxsize=16)
def _loaded(name: str | CommandSpec):
    if isinstance(name, CommandSpec):
        return command_declaration(name)
    # kept: the code this process runs, and the libraries it imported with it
    return current_model(name), code_digest(name), model_libraries(name, NUMERIC_LIBRARIES)


# batch key -> (index of the task it is running, time.monotonic() when that task started)
_RUNNING: dict[str, tuple[int, float]] = {}
# task keys another worker took over (tail work stealing): batches here skip them
_SKIP: dict[str, set[str]] = {}  # per running batch, the tasks another worker took
# batch key -> (its model, the results of its tasks finished so far, its code's digest)
_FINISHED: dict[str, tuple[str | CommandSpec, list[dict], str]] = {}


def run_batch(
    model_name: str | CommandSpec,
    items: list[tuple[str, dict[str, Any], int, int]] | bytes,
    batch: str | None = None,
) -> tuple[str, list[dict] | str, str | None, dict[str, str]]:
    """Run a batch of (key, params, seed) on a worker; a model error fails only its task.
    ``items`` may come pickled (the driver sends them so: Dask then need not look into them).

    Returns the worker's address, one result per item, in order (small: the driver knows
    the keys), the digest of the model's code the worker runs, and the engine and libraries
    it runs (`_engine`), and for a program whose files differ from the plan's, what differs
    (`_differing`); or, when the model cannot be loaded on this worker (its module fails
    to import here only, say), the worker's address, that reason in one line, None and the
    engine. An item is (key, params, seed, replicate). While it runs, `running_tasks` tells
    the driver which task of `batch` is running and for how long, so that the driver can
    time out one task rather than a batch.
    """
    worker = _worker_address()
    engine = engine_identity()
    try:
        model, code = _model(model_name)
    except ValueError as error:  # the same for every task: the driver stops the run
        return worker, str(error), None, engine
    except BaseException as error:  # what loading lets through (a CancelledError, say)
        return (
            worker,
            f"model {model_name!r}: loading it failed: {describe_error(error)}",
            None,
            engine,
        )
    engine = _engine(model_name)
    process_tree.ensure_watchdog()  # nothing a task starts outlives this worker process
    if isinstance(items, bytes):
        items = pickle.loads(items)
    results: list[dict] = []
    folders: dict[str, str] = {}  # digests of input folders taken in this batch
    if batch is not None:  # read by `finished_tasks` when the driver stops before it ends
        _FINISHED[batch] = (model_name, results, code)
    try:
        for index, (key, params, seed, *rest) in enumerate(items):
            if key in _SKIP.get(batch, ()):
                results.append({"status": "skipped", "elapsed": 0.0})
                continue
            if batch is not None:
                _RUNNING[batch] = (index, time.monotonic())
            reset_peak()
            start = time.perf_counter()
            result = _run_task(model_name, model, (key, params, seed, *rest), batch, folders)
            result["elapsed"] = time.perf_counter() - start
            result["peak_memory"] = peak_bytes()
            results.append(result)
    finally:
        if batch is not None:
            _RUNNING.pop(batch, None)
            _SKIP.pop(batch, None)
            _FINISHED.pop(batch, None)
    ended = _code_as_it_ended(model_name, code)
    return worker, results, ended, engine, _differing(model_name, ended)


def _run_task(
    model_name: str | CommandSpec, model: Any, task: tuple, batch: str | None, folders: dict
) -> dict[str, Any]:
    """One task's result; a model's failure is data, not a crash of the campaign. A task is
    (key, params, seed[, replicate[, digests of the model's inputs, as the plan took them]])."""
    key, params, seed, *rest = task
    try:
        seed_global_generators(seed)
        if isinstance(model_name, CommandSpec):
            if len(rest) > 1:  # the files its params name by absolute path, as planned
                check_outside_files(model_name, params, rest[1], folders)
            return _run_command(model_name, params, seed, key, rest[0] if rest else 0, batch)
        if len(rest) > 1:  # the files it reads here are those the results will name
            check_inputs(model, params, rest[1], folders)
        raw = model(own_copy(params), seed)
        return {"status": "ok", "metrics": metric_values(raw)}
    except InputDiffers as error:
        return {"status": "failed", "error": str(error), "traceback": ""}
    except BaseException as error:  # even sys.exit or a CancelledError, which Dask would not
        # survive
        result = {
            "status": "failed",
            "error": describe_error(error),
            "traceback": traceback.format_exc(),
        }
        if isinstance(error, TRANSIENT_ERRORS):
            result["transient"] = True  # worth another try (see `TRANSIENT_ERRORS`)
        return result


def _code_as_it_ended(model_name: str | CommandSpec, code: str) -> str:
    """A batch's code digest as it ends: a program's files replaced while the batch ran are
    named in it (no digest says what each task ran: the driver stores none of it)."""
    if isinstance(model_name, CommandSpec):
        ended = _model(model_name)[1]
        if ended != code:
            return f"{code}{CHANGED_WHILE_RUNNING}{ended}"
    return code


def _differing(model_name: str | CommandSpec, code: str) -> list[str]:
    """For a program whose files here are not those the plan digested, or changed while the
    batch ran, what differs (the driver stops the run naming it); nothing otherwise."""
    if not isinstance(model_name, CommandSpec):
        return []
    ended = code.rpartition(CHANGED_WHILE_RUNNING)[2]
    if ended == combined_digest(expected_files(model_name)):
        return []
    return differing_files(model_name)


def finished_tasks(asked: Collection[str], dask_worker: Any = None) -> dict[str, tuple]:
    """On a worker (``Client.run`` passes it as ``dask_worker``): for each batch of ``asked``
    still running there, what `run_batch` would return for the tasks it finished so far (its
    first ones, in order). A driver stopping (Ctrl-C, SIGTERM) stores them rather than lose
    them with the batch, whose result it will not wait for (a task of it may hang)."""
    worker = dask_worker.address if dask_worker is not None else _worker_address()
    found = {}
    for batch in asked:
        held = _FINISHED.get(batch)
        if held is not None and held[1]:
            model_name, results, code = held
            ended = _code_as_it_ended(model_name, code)
            found[batch] = (worker, list(results), ended, _engine(model_name))
    return found


def _run_command(
    command: CommandSpec, params: dict[str, Any], seed: int, key: str, replicate: int, batch
) -> dict[str, Any]:
    """One task of a program: its result, with its outputs to keep."""
    try:
        metrics, outputs, notes = run_command(
            command, params, seed, key, replicate, lambda: _unwanted(batch, key), batch
        )
    except process_tree.Cancelled:
        return {"status": "skipped"}
    except CommandFailed as failure:
        result = {"status": "failed", "error": str(failure), "traceback": ""}
        if failure.outputs:
            result["outputs"] = failure.outputs
        if failure.transient:
            result["transient"] = True
        return result
    result = {"status": "ok", "metrics": metrics, **notes}  # as stored: checked by run_command
    if outputs:
        result["outputs"] = outputs
    return result


def _unwanted(batch: str | None, key: str) -> bool:
    """Whether a running task is no longer wanted: another worker took it or finished it
    (`skip_tasks`), or its batch was cancelled (the driver stopped, gave up on it, or another
    copy of every task of it won)."""
    if key in _SKIP.get(batch, ()):
        return True
    if batch is None:
        return False
    try:
        from distributed import get_worker

        task = get_worker().state.tasks.get(batch)
    except (ImportError, ValueError, AttributeError):
        return False
    return task is None or task.state in ("cancelled", "released", "forgotten")


_PLAIN = (int, float, str, bool, bytes, type(None))


def own_copy(params: dict[str, Any]) -> dict[str, Any]:
    """A task's own copy of its params: batchmates of one cell arrive sharing one params
    object, which a model may change. A dict of plain values (the usual case) needs no
    deep copy."""
    if all(type(value) in _PLAIN for value in params.values()):
        return dict(params)
    return copy.deepcopy(params)


def seed_global_generators(seed: int) -> None:
    """Seed numpy's legacy global generator and Python's `random` from the task's seed, so that
    a model drawing from them (``np.random.random()``, ``random.random()``) is reproducible.

    A worker process runs one task at a time (one thread, as every cluster this tool starts);
    tasks running at once in threads of one process would share these generators.
    """
    seed = int(seed)
    np.random.seed([seed & 0xFFFFFFFF, seed >> 32])  # all 64 bits, as two 32-bit words
    random.seed(seed)


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except ValueError:  # not on a Dask worker (a direct call)
        return ""


def skip_tasks(batch: str, keys: list[str], dask_worker: Any = None) -> None:
    """On a worker (``Client.run`` passes it as ``dask_worker``): skip these tasks in this
    batch if it runs there, waits to run there or is on its way there (another worker has
    them).

    Scoped to the batch, so a request arriving after the batch ended leaves nothing behind
    that would skip a later batch's task of the same key (a rerun, another campaign).
    """
    if batch in _RUNNING or _to_run_here(batch, dask_worker):
        _SKIP.setdefault(batch, set()).update(keys)
    for other in [b for b in _SKIP if b not in _RUNNING and not _to_run_here(b, dask_worker)]:
        del _SKIP[other]  # batches that ended, or were cancelled before they ran


WAITING_STATES = ("waiting", "ready", "constrained", "executing")  # a Dask task's, not run yet


def _task_state(batch: str, worker: Any) -> str | None:
    """The state of ``batch``'s Dask task on ``worker``: "" when the task is not there (on
    its way, or gone), None when there is no worker (a direct call)."""
    if worker is None:
        return None
    task = worker.state.tasks.get(batch)
    return "" if task is None else task.state


def _to_run_here(batch: str, worker: Any) -> bool:
    """Whether ``batch`` waits to run on ``worker`` or has not reached it yet (a batch the
    driver asks about is one it has sent and not yet seen finish)."""
    return _task_state(batch, worker) in ("", *WAITING_STATES)


def running_tasks(
    asked: Collection[str] = (), dask_worker: Any = None
) -> dict[str, tuple[int, float]]:
    """On a worker (``Client.run`` passes it as ``dask_worker``): for each batch running
    there, its current task's index and seconds run; and (-1, 0.0) for each batch of
    ``asked`` that waits there to run or has not reached it yet (a loaded scheduler forwards
    it late): none of its tasks has started. A batch of ``asked`` it does not name has
    finished there, its result not yet fetched."""
    now = time.monotonic()
    running = {batch: (index, now - started) for batch, (index, started) in dict(_RUNNING).items()}
    for batch in asked:
        if batch not in running and _to_run_here(batch, dask_worker):
            running[batch] = (-1, 0.0)
    return running


def printed_by_stuck_tasks(
    asked: Collection[str], dask_worker: Any = None
) -> dict[str, tuple[str, str, dict[str, bytes]]]:
    """On a worker (``Client.run`` passes it as ``dask_worker``): for each batch of ``asked``
    whose program runs there, its task's key and what it printed so far (`printed_so_far`):
    what the failure of a task past the timeout keeps, before its worker process ends."""
    found = {}
    for batch in asked:
        printed = printed_so_far(batch)
        if printed is not None:
            found[batch] = printed
    return found


def end_run(run: str, dask_worker: Any = None) -> None:
    """On a worker (``Client.run`` passes it as ``dask_worker``): end what the programs of
    run ``run`` left running (`process_tree.end_run`)."""
    process_tree.end_run(run)


def end_worker_process() -> None:
    """On a worker: exit at once.

    A thread stuck in a model cannot be interrupted, so its whole process is ended, with every
    process it started (a program's process group, a Python model's subprocesses); the
    worker's nanny (the default for `dask worker` and every cluster this tool starts) starts
    a fresh one, which joins the scheduler as a new worker.
    """
    process_tree.kill_everything()
    os._exit(STOPPED_EXIT_CODE)
