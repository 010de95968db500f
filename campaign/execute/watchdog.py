"""A worker process's watchdog: when the worker is gone, nothing it started keeps running.

Run as a separate small process (``python -I -S watchdog.py TOKEN WORKER_PID``, importing
nothing of the engine) by `campaign.execute.process_tree`. It reads ``+GROUP`` / ``-GROUP``
lines from the worker's pipe (process groups started and ended). When the pipe closes, or the
worker process is gone, it SIGKILLs every group still registered and every process whose
environment carries the worker's token, and exits.
"""

import os
import select
import signal
import sys

CHECK_SECONDS = 1.0  # how often the worker process is looked for while the pipe stays open


def marked(token):
    wanted = f"CAMPAIGN_WORKER_TOKEN={token}".encode()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if wanted in environ.split(b"\0"):
            found.append(int(name))
    return found


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(token, worker):
    groups = set()
    pending = b""
    stdin = sys.stdin.buffer.raw if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer
    while True:
        ready, _, _ = select.select([stdin], [], [], CHECK_SECONDS)
        if not ready:
            if not alive(worker):
                break
            continue
        chunk = os.read(stdin.fileno(), 65536)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line[:1] == b"+":
                groups.add(int(line[1:]))
            elif line[:1] == b"-":
                groups.discard(int(line[1:]))
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    for pid in marked(token):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    main(sys.argv[1], int(sys.argv[2]))
