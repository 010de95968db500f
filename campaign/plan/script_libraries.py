"""What a program written in Python imports, as the Python that runs it finds it.

A program run by a Python interpreter (``[python3, sim.py]``, or a script whose ``#!`` names
one) computes with the libraries that interpreter imports: another numpy in the venv a
worker's PATH finds, or a package a worker's PYTHONPATH shadows, gives other numbers from
the same ``sim.py`` and the same interpreter binary. So the top-level libraries its Python
inputs import (less the standard library and the inputs' own modules) are listed among what
the program runs, each as `campaign.plan.library_probe` describes it in that interpreter,
with the program's environment: where ``campaign run`` runs, and on each worker, which
compares its answer with the plan's (`campaign.execute.program_task.files_here`).

The answer is asked once per interpreter, libraries and environment, and asked again when
a folder of that interpreter's module path or a library's file changed (an upgrade).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import campaign.plan.library_probe as library_probe
from campaign.plan.model_libraries import imported_libraries
from campaign.plan.runtime import MOST_INTERPRETERS, file_stamp, script_interpreter

MODULE_PREFIX = "module "  # a library among what a program runs: "module numpy"
PYTHON_NAME = re.compile(r"^(python|pypy)[0-9.]*$")
PROBE_SECONDS = 20.0
PROBE_TEXT = Path(library_probe.__file__).read_text()
ENVIRONMENT = ("PATH", "HOME", "VIRTUAL_ENV", "CONDA_PREFIX")  # and every PYTHON* variable
_PROBED: dict[tuple, tuple[dict[str, str], tuple[tuple[str, tuple[int, ...]], ...]]] = {}


def script_modules(command: Any) -> list[str]:
    """The libraries the command's Python inputs import (top-level names), less the standard
    library's and the modules the inputs themselves are."""
    scripts = [Path(item.path) for item in command.inputs if _is_python(item)]
    own = {Path(item.name).parts[0].removesuffix(".py") for item in command.inputs}
    return [name for name in imported_libraries(scripts) if name not in own]


def _is_python(item: Any) -> bool:
    if item.template:
        return False
    if item.name.endswith(".py"):
        return True
    if not os.access(item.path, os.X_OK):  # a data file (of a folder of thousands): unread
        return False
    found = script_interpreter(item.path, os.defpath)
    return found is not None and bool(PYTHON_NAME.match(Path(found[0]).name))


def python_interpreter(path: str, search: str) -> str | None:
    """The Python that runs the program at ``path`` (itself, or the end of its ``#!`` chain),
    as the program starts it (a venv's ``python3`` link, not the file it links to: the link
    decides the venv); None for a program that is no Python one."""
    for _ in range(MOST_INTERPRETERS + 1):
        if PYTHON_NAME.match(Path(os.path.realpath(path)).name):
            return path
        found = script_interpreter(os.path.realpath(path), search)
        if found is None or not found[1]:
            return None
        written = found[0]
        path = written if os.path.isabs(written) else shutil.which(written, path=search) or ""
    return None


def script_libraries(path: str, modules: list[str], env: Mapping[str, str]) -> dict[str, str]:
    """`MODULE_PREFIX` + name -> how the Python running the program at ``path`` with ``env``
    finds each library of ``modules`` ("2.4.6", "code 1a2b...", "not installed"); nothing
    for a program that no Python runs."""
    interpreter = python_interpreter(path, env.get("PATH", os.defpath))
    if interpreter is None or not modules:
        return {}
    kept = sorted((k, v) for k, v in env.items() if k.startswith("PYTHON") or k in ENVIRONMENT)
    key = (interpreter, file_stamp(interpreter), tuple(modules), tuple(kept))
    held = _PROBED.get(key)
    if held is None or any(file_stamp(where) != stamp for where, stamp in held[1]):
        held = _probe(interpreter, modules, env)
        if held[1]:
            _PROBED[key] = held
    return {MODULE_PREFIX + name: described for name, described in held[0].items()}


def _probe(
    interpreter: str, modules: list[str], env: Mapping[str, str]
) -> tuple[dict[str, str], tuple[tuple[str, tuple[int, ...]], ...]]:
    """Ask the interpreter (in an empty folder: no file there shadows a library)."""
    with tempfile.TemporaryDirectory() as empty:
        try:
            done = subprocess.run(
                [interpreter, "-c", PROBE_TEXT, *modules],
                capture_output=True,
                timeout=PROBE_SECONDS,
                stdin=subprocess.DEVNULL,
                env=dict(env),
                cwd=empty,
            )
            answer = json.loads(done.stdout)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return dict.fromkeys(modules, f"not listed by {interpreter}"), ()
    found = {name: str(answer["modules"][name][0]) for name in modules}
    watched = [*answer["path"], *(o for _, o in answer["modules"].values() if o)]
    return found, tuple((where, file_stamp(where)) for where in watched)
