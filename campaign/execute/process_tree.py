"""Programs a worker starts, and making sure none of them outlives its task or its worker.

Each program starts in a session (and process group) of its own, so its whole tree (the
children it forks, a shell's pipeline) ends with one signal to the group: SIGTERM, then
SIGKILL after `GRACE_SECONDS`. A task's group is ended when the program exits (a child it left
behind dies with it), on timeout, when the task is cancelled or another copy won. A child that
left the group (a session of its own: a daemon) ends with the run (`end_run`).

A worker process that dies (ended past ``--task-timeout``, its nanny or cluster gone with a
SIGKILLed driver) cannot clean up after itself. So each worker process starts a watchdog
(`campaign/execute/watchdog.py`, a separate small process) the first time it runs a task: the
worker tells it each process group it starts and ends, through a pipe only the worker holds,
and marks its own environment with a token every process it starts inherits (a Python
model's subprocesses too). When the pipe closes, the worker is gone: the watchdog kills
every group still registered and every process that carries the token, then exits.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

import campaign.execute.memory as memory

GRACE_SECONDS = 2.0  # between SIGTERM and SIGKILL of a task's process group
POLL_SECONDS = 0.05  # how often a running program's task is checked for cancellation
FIRST_SAMPLE_SECONDS = 0.5  # when a program's session's memory is first summed
SAMPLE_SECONDS = 1.0  # and then how often
TOKEN_VARIABLE = "CAMPAIGN_WORKER_TOKEN"
BATCH_VARIABLE = "CAMPAIGN_BATCH"  # in a program's environment: the batch it runs for
WATCHDOG = Path(__file__).with_name("watchdog.py")

_lock = threading.Lock()
_watchdog: subprocess.Popen | None = None
_groups: set[int] = set()  # process groups this worker process started and has not ended


class Cancelled(Exception):
    """The task's program was ended because its task is no longer wanted."""


def ensure_watchdog() -> None:
    """Start this process's watchdog (once) and mark the environment with its token."""
    global _watchdog
    with _lock:
        if _watchdog is not None and _watchdog.poll() is None:
            return
        token = uuid.uuid4().hex
        os.environ[TOKEN_VARIABLE] = token
        _watchdog = subprocess.Popen(
            [sys.executable, "-I", "-S", str(WATCHDOG), token, str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C of the terminal is not for it
            env={k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE},
        )
        os.set_inheritable(_watchdog.stdin.fileno(), False)


def _tell(line: str) -> None:
    with _lock:
        if _watchdog is None or _watchdog.stdin is None:
            return
        try:
            _watchdog.stdin.write(f"{line}\n".encode())
            _watchdog.stdin.flush()
        except (OSError, ValueError):
            pass


def start(
    argv: Sequence[str],
    cwd: str | os.PathLike[str],
    stdout: IO[bytes],
    stderr: IO[bytes],
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen:
    """Start a program in a session of its own, its group registered with the watchdog."""
    ensure_watchdog()
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        env=dict(env) if env is not None else None,
        start_new_session=True,
    )
    with _lock:
        _groups.add(process.pid)
    _tell(f"+{process.pid}")
    return process


def wait(process: subprocess.Popen, cancelled: Callable[[], bool]) -> int:
    """Wait for a program, ending its group if ``cancelled()`` says so (raises `Cancelled`);
    the group is ended in every case (children left behind die with the task). On Linux the
    wait wakes the moment the program exits (a pidfd), else it polls. What the program's tree
    held at its peak goes to `campaign.execute.memory` (the task's peak memory)."""
    peak = SessionPeak(process.pid)
    try:
        watch = _pidfd(process.pid)
        delay = 0.0005
        try:
            while True:
                if watch is not None:
                    select.select([watch], [], [], POLL_SECONDS)
                else:
                    time.sleep(delay)
                    delay = min(delay * 2, POLL_SECONDS)
                code = _reap(process)
                if code is not None:
                    return code
                if cancelled():
                    raise Cancelled()
                peak.sample()
        finally:
            if watch is not None:
                os.close(watch)
    finally:
        end_group(process)
        memory.note_program_peak(peak.bytes)


class SessionPeak:
    """The most resident memory a program's session held together, sampled while it runs:
    first after `FIRST_SAMPLE_SECONDS` (a short task pays nothing), then every
    `SAMPLE_SECONDS`."""

    def __init__(self, session: int) -> None:
        self.session = session
        self.next = time.monotonic() + FIRST_SAMPLE_SECONDS
        self.bytes = 0.0

    def sample(self) -> None:
        now = time.monotonic()
        if now < self.next:
            return
        self.bytes = max(self.bytes, memory.session_resident_bytes(self.session))
        self.next = now + SAMPLE_SECONDS


def _reap(process: subprocess.Popen) -> int | None:
    """The program's exit code once it has ended (None before), reaped with ``wait4`` so that
    the kernel's peak of the program (and the children it waited for) is noted as the task's
    (`campaign.execute.memory`)."""
    if process.returncode is not None:
        return process.returncode
    try:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
    except ChildProcessError:  # reaped already (by `subprocess`'s own bookkeeping)
        return process.poll()
    if pid == 0:
        return None
    process.returncode = os.waitstatus_to_exitcode(status)
    memory.note_program_peak(usage.ru_maxrss * memory.MAXRSS_UNIT)
    return process.returncode


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux 5.3 or later
        return None


def end_group(process: subprocess.Popen, grace: float = GRACE_SECONDS) -> None:
    """End a program's process group: SIGTERM, then SIGKILL to whatever is left after
    ``grace`` seconds; the program itself is reaped."""
    group = process.pid
    if _signal_group(group, signal.SIGTERM if process.poll() is None else signal.SIGKILL):
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            process.poll()
            if not _group_alive(group):
                break
            time.sleep(0.01)
        else:
            _signal_group(group, signal.SIGKILL)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL ends every process
        pass
    with _lock:
        _groups.discard(group)
    _tell(f"-{group}")


def _signal_group(group: int, sig: int) -> bool:
    """Send a signal to a process group; False when no process of it is left."""
    try:
        os.killpg(group, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # the group id was taken by someone else's processes
        return False


def _group_alive(group: int) -> bool:
    return _signal_group(group, 0)


def kill_everything() -> None:
    """Kill every process group this worker process started and every process it started
    (a Python model's subprocesses), before the worker process ends itself."""
    with _lock:
        groups = list(_groups)
    for group in groups:
        _signal_group(group, signal.SIGKILL)
    kill_marked(os.environ.get(TOKEN_VARIABLE))


def end_run(run: str) -> None:
    """SIGKILL what the programs of run ``run`` left running out of their process groups (a
    child in a session of its own: a daemon), found by the batch named in its environment
    (each batch's key begins with its run's, `campaign.execute.flight`): as the end of an
    embedded cluster's workers ends it, on a worker that outlives the run."""
    for pid in _marked(f"campaign-{run}-", BATCH_VARIABLE, prefix=True):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def kill_marked(token: str | None, skip: tuple[int, ...] = ()) -> None:
    """SIGKILL every process whose environment carries this worker's token (and the
    children of this process), ``skip`` aside."""
    mine = {os.getpid(), *skip}
    if _watchdog is not None:
        mine.add(_watchdog.pid)
    for pid in _children() | (_marked(token) if token else set()):
        if pid not in mine:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _children() -> set[int]:
    try:
        import psutil

        return {child.pid for child in psutil.Process().children(recursive=True)}
    except Exception:  # pragma: no cover - psutil is Dask's dependency
        return set()


def _marked(token: str, variable: str = TOKEN_VARIABLE, prefix: bool = False) -> set[int]:
    """The processes whose environment holds ``variable=token`` (or, with ``prefix``, a value
    that begins with ``token``) (Linux: /proc)."""
    wanted = f"{variable}={token}".encode()
    found = set()
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - not Linux
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        entries = environ.split(b"\0")
        if any(e.startswith(wanted) for e in entries) if prefix else wanted in entries:
            found.add(int(entry.name))
    return found


def signal_name(code: int) -> str:
    """A negative return code's signal, by name (-11: SIGSEGV)."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"
