"""What a program runs besides its own file: its interpreter and its shared libraries, digested.

A simulator's numbers depend on the libraries it is linked with as much as on its own binary:
an ``apt upgrade`` of libsimgrid gives other results from the same ``./sim``. So each program
is digested with

- for a script, its interpreter (``#!/usr/bin/python3``, or the one ``#!/usr/bin/env python3``
  finds on PATH), itself digested the same way: the interpreter's binary and libraries are
  its version (what a Python script imports is listed apart:
  `campaign.plan.script_libraries`);
- for a dynamically linked binary, each shared library as the dynamic loader resolves it on
  this machine, by the name the binary asks for (``libsimgrid.so.3.35``; the loader by its
  path). ``ldd`` asks the loader itself (``LD_TRACE_LOADED_OBJECTS``, without running the
  program), so LD_LIBRARY_PATH, LD_PRELOAD, RUNPATH and the loader's cache count as they will
  when the program runs; it is run on the program's real path (symlinks resolved: ``$ORIGIN`` is
  where the file is). Libraries opened at run time (``dlopen``: a JVM's libjvm.so, Python's
  extension modules) are not listed, nor are libraries among the program's inputs (``$ORIGIN``
  beside a program placed with them), which are digested as inputs. A library of the spec's
  folder that is no input (a SimGrid built in the project, reached through LD_LIBRARY_PATH or
  RUNPATH) is listed as any other, so that its rebuild makes the results stale; for a program
  placed with the inputs, `campaign.plan.program_sources` refuses it first.

The driver digests this where ``campaign run`` runs; each worker digests its own copy the same
way, so a worker linked with another library version is not used. Both are cached per process
by the file's identity (device, inode, size, modification time), so a worker lists a
program's libraries once, and a library upgraded while it runs is digested again; the list is
made again when a folder of LD_LIBRARY_PATH or the loader's cache changed (a library copied
there resolves anew). A program with a library the loader does not find is listed again at
each call: the library may be installed next, and a session that kept "not found" would take
every new worker, which finds it, for one with another version.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Collection, Mapping
from functools import lru_cache
from pathlib import Path

LDD_SECONDS = 20.0
SHEBANG_BYTES = 256
MOST_INTERPRETERS = 4  # a script run by a script run by ... (pyenv shims, wrappers)
INTERPRETER = "#!"  # the name an interpreter is listed under: "#! python3"
LIBRARY_LINE = re.compile(r"^\s*(\S+)(?:\s+=>\s+(.*?))?\s+\(0x[0-9a-fA-F]+\)\s*$")
NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$")
MISSING = "not found"


def runtime_files(
    path: str, env: Mapping[str, str] | None = None, inputs: Collection[str] = ()
) -> dict[str, str]:
    """Name -> digest of what the program at ``path`` runs besides itself: its interpreters
    (``#! NAME``) and every shared library (``MISSING`` for one the loader cannot find).
    ``env``: the program's environment (PATH, LD_LIBRARY_PATH); a library that is one of
    ``inputs`` (real paths of the files digested as the program's inputs) is left out."""
    env = dict(os.environ if env is None else env)
    search = env.get("PATH", os.defpath)
    files: dict[str, str] = {}
    for _ in range(MOST_INTERPRETERS + 1):
        real = os.path.realpath(path)
        interpreter = script_interpreter(real, search)
        if interpreter is None:
            for name, where in binary_libraries(real, env):
                if where and os.path.realpath(where) in inputs:
                    continue
                files[name] = digest(where) if where else MISSING
            return files
        name, found = interpreter
        files[f"{INTERPRETER} {name}"] = digest(found) if found else MISSING
        if not found:
            return files
        path = found
    return files


def binary_libraries(path: str, env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The shared libraries the loader resolves for the binary at ``path`` itself (not for a
    script's interpreter): (name, path or "") each, cached while the binary and the loader's
    search stay as they are; listed again while one is not found (see the module)."""
    real = os.path.realpath(path)
    library_path, preload = env.get("LD_LIBRARY_PATH", ""), env.get("LD_PRELOAD", "")
    key = (real, file_stamp(real), library_path, preload, search_stamp(library_path))
    libraries = _libraries(*key)
    if any(not where for _, where in libraries):
        libraries = _libraries.__wrapped__(*key)
    return libraries


def script_interpreter(path: str, search: str) -> tuple[str, str] | None:
    """A script's interpreter (the name written, its path here or ""), or None for a file
    that is no script. ``#!/usr/bin/env NAME`` names NAME, found on ``search`` (a PATH)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SHEBANG_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        named = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        if named:
            found = shutil.which(named[0], path=search)
            return named[0], os.path.realpath(found) if found else ""
    program = words[0]
    return program, os.path.realpath(program) if os.path.isfile(program) else ""


def digest(path: str) -> str:
    """BLAKE2b-256 of a file, cached by its identity."""
    return _digest(path, file_stamp(path))


def file_stamp(path: str) -> tuple[int, ...]:
    """A file's identity (device, inode, size, modification time; () when it is missing): what
    a cached answer about it is keyed by."""
    try:
        stat = os.stat(path)
    except OSError:
        return ()
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=1024)
def _digest(path: str, stamp: tuple[int, ...]) -> str:
    if not stamp:
        return MISSING
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, lambda: hashlib.blake2b(digest_size=32)).hexdigest()


LOADER_CACHE = "/etc/ld.so.cache"  # where the loader finds installed libraries (ldconfig)


def search_stamp(library_path: str) -> tuple[tuple[int, ...], ...]:
    """The identity of the folders the loader searches first (LD_LIBRARY_PATH's) and of its
    cache: a library copied into one of them, or installed and registered with ldconfig, is
    resolved anew, as the program will load it."""
    folders = [folder for folder in library_path.split(os.pathsep) if folder]
    return tuple(file_stamp(path) for path in [*folders, LOADER_CACHE])


@lru_cache(maxsize=256)
def _libraries(
    path: str,
    stamp: tuple[int, ...],
    library_path: str,
    preload: str = "",
    searched: tuple[tuple[int, ...], ...] = (),
) -> tuple[tuple[str, str], ...]:
    """The shared libraries the loader resolves for a binary: (name, path or "") each; none
    for a file that is not a dynamically linked binary (or without ``ldd``). ``preload``: the
    LD_PRELOAD the program runs with, whose libraries override the binary's own;
    ``searched``: `search_stamp` (only a key of the cache)."""
    if not stamp or not _is_elf(path):
        return ()
    ldd = shutil.which("ldd")
    if ldd is None:
        return ()
    env = {"PATH": os.defpath, "LC_ALL": "C"}
    if library_path:
        env["LD_LIBRARY_PATH"] = library_path
    if preload:
        env["LD_PRELOAD"] = preload
    try:
        done = subprocess.run(
            [ldd, path],
            capture_output=True,
            timeout=LDD_SECONDS,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    found = []
    for line in done.stdout.decode(errors="replace").splitlines():
        missing = NOT_FOUND.match(line)
        if missing:
            found.append((missing[1], ""))
            continue
        match = LIBRARY_LINE.match(line)
        if match is None:
            continue
        name, where = match[1], match[2]
        if where is None and "/" not in name:
            continue  # the kernel's vDSO (linux-vdso.so.1): no file
        found.append((name, where or name))
    return tuple(sorted(found))


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False
