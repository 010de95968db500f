"""A program's ``version:`` command, run once per plan on this machine; its answer goes into the
provenance (campaign.json, results.nc's ``program_version``).

A version command that fails (an exit code, a signal, nothing printed) is refused in one line
before any work: storing its error message as the version would make results look documented.
One that does not exit within `VERSION_SECONDS` is ended with its whole process group, so a
child left running (a daemon, a grandchild holding stdout) neither blocks the run nor outlives
it: the command runs in a session of its own, its output goes to files rather than pipes, and
the group is killed once it has answered or timed out.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import tempfile
import time

from campaign.errors import CampaignError

VERSION_SECONDS = 10.0  # a version command prints a line and exits
VERSION_CHARACTERS = 1000  # kept of its answer


def program_version(argv: tuple[str, ...] | None, folder: str = "") -> str:
    """What the version command prints (stdout, else stderr; at most `VERSION_CHARACTERS`),
    or "" without one. Run in ``folder`` (the spec's), stdin empty."""
    if argv is None:
        return ""
    shown = shlex.join(argv)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=folder or None,
                start_new_session=True,
            )
        except OSError as error:
            raise CampaignError(f"model.version: {shown} cannot start: {error}") from None
        try:
            exited = wait_unreaped(process.pid, VERSION_SECONDS)
        finally:
            end_group(process)
        code = process.returncode if exited else None
        stdout, stderr = (read_all(handle) for handle in (out, err))
    if code is None:
        raise CampaignError(
            f"model.version: {shown} did not exit within {VERSION_SECONDS:g} s (ended); a "
            "version command must print the version and exit"
        )
    if code != 0:
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        tail = " | ".join(stderr.splitlines()[-3:])[-300:]
        raise CampaignError(
            f"model.version: {shown} {how}"
            + (f"; stderr: {tail}" if tail else "")
            + "; fix the command or remove model.version"
        )
    text = (stdout or stderr).strip()
    if not text:
        raise CampaignError(f"model.version: {shown} printed nothing; it must print the version")
    return text[:VERSION_CHARACTERS]


def wait_unreaped(pid: int, seconds: float) -> bool:
    """Whether the process exited within ``seconds``; it is left a zombie (not reaped), so
    that its process group's number cannot be taken by another before `end_group`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(0.01)
    return False


def end_group(process: subprocess.Popen) -> None:
    """Kill what is left of the command's process group (children it left behind too), then
    reap the command."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def read_all(handle) -> str:
    handle.seek(0)
    return handle.read().decode(errors="replace")
