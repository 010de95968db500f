"""A program's inputs travel to every worker once, by digest, with no shared file system.

The driver registers a Dask worker plugin holding the bytes of the program and its inputs
(`ship_inputs`); Dask gives it to every worker there is and every worker that joins later (a
remote one, one a nanny restarted). Each worker writes each file once into its cache folder,
under its digest and read-only (`cached_input`), checking the bytes against the digest the
plan took. A task's folder then links them under their own names.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from campaign.errors import CampaignError
from campaign.spec.command import CommandSpec

CACHE_FOLDER = "campaign-inputs"


def cache_folder() -> Path:
    """This worker's folder of inputs by digest (its Dask local directory, else a temporary
    folder of this user)."""
    try:
        from distributed import get_worker

        base = Path(get_worker().local_directory)
    except ValueError:
        base = Path(tempfile.gettempdir()) / f"campaign-{os.getuid()}"
    return base / CACHE_FOLDER


def digest_of(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def store(folder: Path, digest: str, data: bytes, executable: bool) -> Path:
    """Write a file into the cache under its digest (atomically, read-only), once."""
    target = folder / digest
    if target.exists():
        return target
    if digest_of(data) != digest:
        raise ValueError(f"the bytes received do not have digest {digest[:12]}")
    folder.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".partial-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(temporary, 0o555 if executable else 0o444)
    os.replace(temporary, target)
    return target


class InputsPlugin(WorkerPlugin):
    """A worker plugin carrying a program's files: (digest, executable, bytes) each."""

    idempotent = True  # registered again under the same name (the same files): nothing to do

    def __init__(self, files: list[tuple[str, bool, bytes]]) -> None:
        self.files = files

    def setup(self, worker: Any) -> None:
        folder = Path(worker.local_directory) / CACHE_FOLDER
        for digest, executable, data in self.files:
            store(folder, digest, data, executable)


def ship_inputs(client: Any, command: CommandSpec) -> str:
    """Register the plugin that puts the program's files on every worker, now and joining
    later (once per set of files); its name."""
    digests = dict(command.files)
    files = []
    for item in command.inputs:
        data = Path(item.path).read_bytes()
        digest = digest_of(data)
        if digests.get(item.name, digest) != digest:
            raise CampaignError(
                f"{item.path} changed since the run started; run again to take the change in"
            )
        files.append((digest, os.access(item.path, os.X_OK), data))
    name = "campaign-inputs-" + digest_of("".join(sorted(d for d, _, _ in files)).encode())[:16]
    client.register_plugin(InputsPlugin(files), name=name)
    return name


def withdraw_inputs(client: Any, name: str) -> None:
    """Take the plugin back from the scheduler once the run is done (the workers keep their
    copies, and write nothing again when the same files come back)."""
    try:
        client.unregister_worker_plugin(name)
    except Exception:  # the scheduler is gone or the plugin was never there: nothing to take
        pass


def cached_input(digest: str, name: str, original: str) -> Path:
    """The cached file of this digest. On a Dask worker it came with the plugin (nothing is
    read from the spec's folder: no shared file system is assumed); called outside Dask, it is
    taken from ``original`` if that file has this digest."""
    folder = cache_folder()
    target = folder / digest
    if target.exists():
        return target
    if on_dask_worker():
        raise FileNotFoundError(f"input {name} (digest {digest[:12]}) has not reached this worker")
    try:
        data = Path(original).read_bytes()
    except OSError:
        data = b""
    if digest_of(data) != digest:
        raise FileNotFoundError(f"input {name}: {original} is missing or not the one digested")
    return store(folder, digest, data, os.access(original, os.X_OK))


def on_dask_worker() -> bool:
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True
