"""The programs a launcher runs: ``mpirun -n 4 mysim``, ``timeout 600 mysim``, ``env X=1 mysim``.

A command's first word is what starts, but the numbers are those of the program it launches,
so that program is found here and digested as the command's own (its file, its libraries, its
interpreter). Launchers understood:

- `EXACT` (their options known, so the program's word is known): env, timeout, nice, ionice,
  nohup, setsid, stdbuf, taskset, numactl, chrt, time, strace, valgrind; one may launch
  another (``timeout 600 env X=1 mysim``);
- `PARALLEL` (mpirun, mpiexec, orterun, prterun, srun, aprun, jsrun, ibrun, charmrun), whose
  options are too many to know: every word after the launcher, options aside, that names a
  program (an executable file by an absolute path, or a name found on PATH here).

A word written with a relative path (``./sim``) is a file of the spec's folder, which must be
among the inputs and is digested with them. The word a launcher runs may be a placeholder
alone naming a param or factor whose values are programs: each is digested, for every task.
Anything else that cannot be found is refused: its changes could hide behind stored results.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.spec.placeholders import PLACEHOLDER

Fail = Callable[[str], CampaignError]
TASK_FOLDER = "{dir}/"  # the placeholder of the task's folder, where the inputs are placed


@dataclass(frozen=True)
class Launcher:
    """How a launcher's words lead to its program: the options whose value is the next word,
    the words before the program that are no option (timeout's duration, taskset's mask), and
    whether ``NAME=value`` words come first (env)."""

    valued: frozenset[str] = frozenset()
    positional: int = 0
    assignments: bool = False


EXACT = {
    "env": Launcher(frozenset({"-u", "--unset", "-C", "--chdir"}), assignments=True),
    "timeout": Launcher(frozenset({"-s", "--signal", "-k", "--kill-after"}), positional=1),
    "nice": Launcher(frozenset({"-n", "--adjustment"})),
    "ionice": Launcher(frozenset({"-c", "--class", "-n", "--classdata"})),
    "nohup": Launcher(),
    "setsid": Launcher(),
    "stdbuf": Launcher(frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})),
    "taskset": Launcher(positional=1),  # taskset [-c] MASK-OR-LIST PROGRAM
    "numactl": Launcher(
        frozenset({"-C", "-N", "-m", "-i", "-p", "--physcpubind", "--cpunodebind"})
        | frozenset({"--membind", "--interleave", "--preferred"})
    ),
    "chrt": Launcher(positional=1),  # chrt [-f] PRIORITY PROGRAM
    "time": Launcher(frozenset({"-o", "--output", "-f", "--format"})),
    "strace": Launcher(frozenset({"-o", "-e", "-s", "-E", "-u", "-P"})),
    "valgrind": Launcher(),  # its options are --name=value
}
PARALLEL = frozenset(
    "mpirun mpiexec mpiexec.hydra orterun prterun srun aprun jsrun ibrun charmrun".split()
)


def launched_words(words: Sequence[str]) -> tuple[list[str], bool]:
    """The words naming what the launcher ``words[0]`` runs (none for a command that is no
    launcher), and whether they are candidates only (a `PARALLEL` launcher: every word that
    is no option; those naming programs are its programs)."""
    found: list[str] = []
    while words and Path(words[0]).name in EXACT:
        index = program_index(words, EXACT[Path(words[0]).name])
        if index is None:
            return found, False
        found.append(words[index])
        words = words[index:]
    if words and Path(words[0]).name in PARALLEL:
        found.extend(w for w in words[1:] if not w.startswith("-") or w == "-")
        return found, True
    return found, False


def program_index(words: Sequence[str], launcher: Launcher) -> int | None:
    """The index of the word naming the launcher's program (None: there is none)."""
    index, positional = 1, launcher.positional
    while index < len(words):
        word = words[index]
        if word == "--":
            index += 1
            break
        if word in launcher.valued:
            index += 2
        elif word.startswith("-") and word != "-":
            index += 1
        elif word == "-" or (launcher.assignments and _assignment(word)):
            index += 1
        elif positional:
            positional -= 1
            index += 1
        else:
            break
    return index if index < len(words) else None


def launched_programs(
    words: Sequence[str], values: Mapping[str, Sequence[Any]], inputs: set[str], fail: Fail
) -> tuple[tuple[str, str], ...]:
    """(name as written, path here) of each program the launcher ``words[0]`` runs that is
    not a file of the spec's folder (``inputs``: their names, digested with the inputs);
    ``values``: each param's and factor's values. One that cannot be found is refused."""
    found, candidates = launched_words(words)
    launcher = Path(words[0]).name if words else ""
    programs: dict[str, str] = {}

    def placed(name: str) -> bool:
        return ("/" in name and not os.path.isabs(name)) or os.path.normpath(name) in inputs

    for word in found:
        for name in _named(word, values, candidates, launcher, fail):
            if placed(name):
                continue  # a file of the spec's folder: an input, digested with the inputs
            path = _where(name)
            if path:
                programs.setdefault(name, path)
            elif not candidates:
                raise fail(
                    f"model.command: {name!r}, the program {launcher} runs, is not found on "
                    "PATH here; its changes would go unseen: install it, or write its path"
                )
    if candidates and not programs and not any(placed(word) for word in found):
        raise fail(
            f"model.command: no word after {launcher} names a program found here (on PATH, "
            "by an absolute path, or a file among the inputs), so what it runs cannot be "
            "digested; write the program's path"
        )
    return tuple(programs.items())


def _named(
    word: str, values: Mapping[str, Sequence[Any]], candidates: bool, launcher: str, fail: Fail
) -> list[str]:
    """The programs a word may name: itself, or each value of the param or factor a
    placeholder alone names."""
    if word.startswith(TASK_FOLDER):  # a file of the task's folder: an input's copy
        word = "./" + word.removeprefix(TASK_FOLDER)
    if not PLACEHOLDER.search(word) or ("/" in word and not word.startswith(("/", "{"))):
        return [word]  # a relative path: a file of the task's folder (an input)
    whole = PLACEHOLDER.fullmatch(word)
    if whole is not None and whole[2] in values:
        texts = [v for v in values[whole[2]] if isinstance(v, str) and v]
        return [v for v in texts if _where(v) or "/" in v] if candidates else texts
    if candidates:
        return []  # an option's value, most likely (-n {ranks})
    raise fail(
        f"model.command: the program {launcher} runs, {word!r}, cannot hold a placeholder; a "
        "placeholder alone ({sim}) may name a factor or param whose values are programs"
    )


def _where(name: str) -> str:
    """The executable file a name gives here: an absolute path, or found on PATH."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else ""
    found = shutil.which(name)
    return os.path.abspath(found) if found else ""


def _assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()
