"""A program's inputs travel to every worker once, by digest, with no shared file system.

The driver registers Dask worker plugins carrying the program and its inputs (`ship_inputs`);
Dask gives them to every worker there is and every worker that joins later (a remote one, one
a nanny restarted). Each file travels in parts of `PART_BYTES`, one plugin each, read from the
file one part at a time: the driver never holds a whole file (a 300 MB input took 1.9 GB in a
driver that read it whole and pickled it: the bytes, their pickle, the message to the
scheduler, the scheduler's copy, one message per worker), and the scheduler keeps one copy of
the parts for the workers that join later. Each worker writes each part to its cache folder
as it comes and, once it has every part of a file, puts the file together under its digest,
read-only (`store_part`), checking its bytes against the digest the plan took; the part
plugins then hold no bytes. A task's folder links the cached files under their own names.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from campaign.errors import CampaignError
from campaign.execute.input_integrity import InputChanged, check_unchanged, known_whole, taken_out
from campaign.plan.sources import file_digest
from campaign.spec.command_model import CommandSpec
from campaign.spec.input_file import InputFile

CACHE_FOLDER = "campaign-inputs"
PART_BYTES = 4 * 2**20  # bytes of a file per plugin: what the driver holds at once
PLUGIN_PREFIX = "campaign-input-"
OWNER_END = "--"  # ends the client's id in a plugin's name (a client id has single dashes)


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


def store_part(
    folder: Path, digest: str, index: int, parts: int, data: bytes, executable: bool
) -> Path | None:
    """Write part ``index`` of ``parts`` of the file of ``digest`` into the cache; once every
    part is there, the file itself (atomically, read-only, checked against the digest).
    Returns the file once it is whole (None: parts are missing)."""
    target = folder / digest
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    part = part_path(folder, digest, index, parts)
    if not part.exists():
        write_atomically(part, [data])
    paths = [part_path(folder, digest, i, parts) for i in range(parts)]
    if not all(path.exists() for path in paths):
        return None
    return assemble(folder, digest, paths, executable)


def part_path(folder: Path, digest: str, index: int, parts: int) -> Path:
    return folder / f".part-{digest}-{index + 1}-of-{parts}"


def assemble(folder: Path, digest: str, paths: list[Path], executable: bool) -> Path:
    """The file of ``digest`` from its parts, checked, under its digest; the parts removed."""

    def chunks() -> Iterable[bytes]:
        for path in paths:
            with open(path, "rb") as handle:
                yield from iter(lambda: handle.read(2**20), b"")

    try:
        return store_chunks(folder, digest, chunks(), executable)
    finally:
        for path in paths:
            path.unlink(missing_ok=True)


def store_chunks(folder: Path, digest: str, chunks: Iterable[bytes], executable: bool) -> Path:
    """Write a file into the cache under its digest (atomically, read-only), once, refusing
    bytes of another digest."""
    target = folder / digest
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    hasher = hashlib.blake2b(digest_size=32)

    def hashed() -> Iterable[bytes]:
        for chunk in chunks:
            hasher.update(chunk)
            yield chunk

    def check(temporary: str) -> None:
        if hasher.hexdigest() != digest:
            raise ValueError(f"the bytes received do not have digest {digest[:12]}")
        os.chmod(temporary, 0o555 if executable else 0o444)

    write_atomically(target, hashed(), check)
    known_whole(target)
    return target


def write_atomically(target: Path, chunks: Iterable[bytes], check=None) -> None:
    """Write ``chunks`` to ``target`` under a temporary name, renamed into place when whole
    (and ``check(temporary)`` passed)."""
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=".partial-")
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
        if check is not None:
            check(temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class InputPart(WorkerPlugin):
    """A worker plugin carrying part ``index`` of ``parts`` of the file of ``digest``."""

    idempotent = True  # registered again under the same name (the same part): nothing to do
    # (another run's part of the same file has another name: a worker that has the file
    # already writes nothing, `store_part`)

    def __init__(self, digest: str, executable: bool, index: int, parts: int, data: bytes):
        self.digest, self.executable = digest, executable
        self.index, self.parts, self.data = index, parts, data

    def setup(self, worker: Any) -> None:
        folder = Path(worker.local_directory) / CACHE_FOLDER
        store_part(folder, self.digest, self.index, self.parts, self.data, self.executable)
        self.data = b""  # on disk now: the worker keeps no copy in memory


def ship_inputs(client: Any, command: CommandSpec) -> list[str]:
    """Register the plugins that put the program's files on every worker, now and joining
    later (a part at a time); their names. Each run registers its own, so that a run that
    ends and withdraws them leaves those of another run of the same files on the same
    cluster (two specs of one simulator, two shards) for the workers that join it later;
    those of a run whose client is gone (a driver killed before it withdrew them) are
    taken back first."""
    withdraw_orphans(client)
    digests = dict(command.files)
    names: list[str] = []
    # this run's own plugins (another run may withdraw its own), named by its client
    run = f"{client.id}{OWNER_END}{uuid.uuid4().hex[:12]}"
    try:
        for item in command.inputs:
            ship_file(client, item, digests.get(item.name) or file_digest(item.path), names, run)
    except BaseException:
        withdraw_inputs(client, names)
        raise
    return names


def ship_file(client: Any, item: InputFile, digest: str, names: list[str], run: str = "") -> None:
    """Register one file's parts, read one at a time (their names, which ``run`` sets apart
    from another run's plugins of the same file, go to ``names``); refused in one line (its
    last part not sent, so no worker puts it together) when the file is not the one
    digested."""
    size = os.path.getsize(item.path)
    parts = max(1, math.ceil(size / PART_BYTES))
    executable = os.access(item.path, os.X_OK)
    hasher = hashlib.blake2b(digest_size=32)
    with open(item.path, "rb") as handle:
        for index in range(parts):
            data = handle.read(PART_BYTES)
            hasher.update(data)
            last = index == parts - 1
            if last and (handle.read(1) or hasher.hexdigest() != digest):
                raise CampaignError(
                    f"{item.path} changed since the run started; run again to take the change in"
                )
            name = f"{PLUGIN_PREFIX}{run}-{digest[:32]}-{index + 1}-of-{parts}"
            client.register_plugin(InputPart(digest, executable, index, parts, data), name=name)
            names.append(name)


def withdraw_orphans(client: Any) -> None:
    """Take back the plugins of runs whose client has left the scheduler: the scheduler would
    hold their files for good, and give them to every worker that joins."""

    def look(dask_scheduler: Any) -> tuple[list[str], list[str]]:
        return list(dask_scheduler.worker_plugins), list(dask_scheduler.clients)

    plugins, clients = client.run_on_scheduler(look)
    orphans = []
    for name in plugins:
        owner, end, _ = name.removeprefix(PLUGIN_PREFIX).partition(OWNER_END)
        if name.startswith(PLUGIN_PREFIX) and end and owner not in clients:
            orphans.append(name)
    withdraw_inputs(client, orphans)


def withdraw_inputs(client: Any, names: Iterable[str]) -> None:
    """Take the plugins back from the scheduler once the run is done (the workers keep their
    copies, and write nothing again when the same files come back)."""
    for name in names:
        try:
            client.unregister_worker_plugin(name)
        except Exception:  # the scheduler is gone or the plugin was never there
            return


def cached_input(digest: str, name: str, original: str) -> Path:
    """The cached file of this digest, as it arrived (`input_integrity`). On a Dask worker it
    came with the plugins (nothing is read from the spec's folder: no shared file system is
    assumed); called outside Dask, it is taken from ``original`` if that file has this
    digest."""
    folder = cache_folder()
    target = folder / digest
    if target.exists() or taken_out(target):
        try:
            check_unchanged(target, digest, name)
            return target
        except InputChanged:
            if on_dask_worker():  # no original to take it from again: the next run sends it
                raise
    if on_dask_worker():
        raise FileNotFoundError(f"input {name} (digest {digest[:12]}) has not reached this worker")
    try:
        with open(original, "rb") as handle:
            chunks = iter(lambda: handle.read(2**20), b"")
            return store_chunks(folder, digest, chunks, os.access(original, os.X_OK))
    except (OSError, ValueError):
        raise FileNotFoundError(
            f"input {name}: {original} is missing or not the one digested"
        ) from None


def on_dask_worker() -> bool:
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True
