"""The program a command runs: found, so that the plan can digest it.

Without a shell the program is the command's first item; with ``shell: true`` it is the first
word of the line's first command (after ``NAME=value`` assignments and ``exec``), unless
that word is a shell builtin or keyword (nothing of the file system runs then) or shell
syntax (``(``, ``$SIM``: what runs is known only when the line runs). A program written with
a ``/`` is a file (relative to the spec's folder: then it travels with the inputs); without,
it is found on PATH (and, without a shell, first in the spec's folder).

``env:`` sets variables of the program's environment (`parse_env`); the rest of the
environment is the worker's.

The program may also be a placeholder alone (``{sim}``) naming a factor, or a param, whose
levels each name a program: two versions of a simulator side by side. Each is found the same
way and digested on its own, so that a changed version makes only its own tasks stale.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.spec.launchers import launched_programs
from campaign.spec.placeholders import PLACEHOLDER, unquoted_placeholder

Fail = Callable[[str], CampaignError]

# words /bin/sh runs itself, not from the file system
SHELL_WORDS = frozenset(
    "! { } [[ case do done elif else esac fi for function if in select then until while "
    ". : [ alias bg break cd command continue echo eval exit export false fg getopts hash "
    "jobs kill local printf pwd read readonly return set shift test times trap true type "
    "ulimit umask unalias unset wait".split()
)
SHELL_SYNTAX = set("$`*?[]()<>|&;~")
OPERATOR_CHARACTERS = set("();<>|&")  # a token of these ends a shell line's first command
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENGINE_VARIABLES = ("CAMPAIGN_WORKER_TOKEN",)  # the engine's own, set on every worker


@dataclass(frozen=True)
class Program:
    """The program a command runs: ``name`` as written; ``path`` as found here; ``placed``:
    found in the spec's folder, so it travels with the inputs (else each machine finds
    ``name`` on its PATH)."""

    name: str
    path: str
    placed: bool


@dataclass(frozen=True)
class Programs:
    """What a command runs: one ``program`` (None: a shell builtin or syntax), or the
    ``choices`` of the factor or param ``chosen_by`` (value as written -> program); and the
    programs a launcher among them runs (``mpirun -n 4 mysim``)."""

    program: Program | None = None
    chosen_by: str = ""
    choices: tuple[tuple[str, Program], ...] = ()
    launched: tuple[Program, ...] = ()  # what a launcher among them runs, found on PATH


def find_programs(
    argv: tuple[str, ...],
    shell: bool,
    values: Mapping[str, Sequence[Any]],
    base: Path,
    fail: Fail,
    inputs: Collection[str] = (),
) -> Programs:
    """The program(s) of a command, and those a launcher among them runs
    (`campaign.spec.launchers`); ``values``: each param's and factor's values; ``inputs``:
    the names of the inputs."""
    words = program_words(argv, shell, fail)
    if not words:
        return Programs()
    launched = tuple(
        Program(name, path, False)
        for name, path in launched_programs(words, values, set(inputs), fail)
    )
    word = words[0]
    names = [match[2] for match in PLACEHOLDER.finditer(word) if match[2]]
    if not names:
        return Programs(find_program(word, base, fail, shell), launched=launched)
    whole = PLACEHOLDER.fullmatch(word)
    if whole is None or not whole[2] or whole[2] not in values:
        raise fail(
            f"model.command: the program {word!r} cannot hold a placeholder; a placeholder "
            "alone ({sim}) may name a factor or param whose values are programs"
        )
    name = whole[2]
    choices = []
    for value in dict.fromkeys(values[name]):
        if not isinstance(value, str) or not value:
            raise fail(
                f"model.command: {{{name}}} names the program, but {name} has the value "
                f"{value!r}; each of its values must be a program (a file or a name on PATH)"
            )
        choices.append((value, find_program(value, base, fail, shell, f"{name}: ")))
    return Programs(chosen_by=name, choices=tuple(choices), launched=launched)


def program_words(argv: tuple[str, ...], shell: bool, fail: Fail) -> list[str]:
    """The program as written and its arguments: the command, or the words of the first
    command a shell line runs up to its first operator (none when /bin/sh runs it itself or
    it is syntax)."""
    if not shell:
        return list(argv)
    lexer = shlex.shlex(" ".join(argv), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError as error:
        raise fail(f"model.command: the shell line cannot be read: {error}") from None
    for index, word in enumerate(words):
        if word == "exec" or is_assignment(word):
            continue
        if word in SHELL_WORDS or SHELL_SYNTAX & set(PLACEHOLDER.sub("", word)):
            return []
        rest = words[index:]
        end = next((i for i, w in enumerate(rest) if set(w) <= OPERATOR_CHARACTERS), len(rest))
        return rest[:end]
    return []


def is_assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


def find_program(name: str, base: Path, fail: Fail, shell: bool = False, what: str = "") -> Program:
    """The program: a path (relative to the spec), on PATH, or (without a shell, which would
    not look there) a file of the spec's folder."""
    where = f"model.command: {what}"
    candidate = Path(name).expanduser()
    local = candidate if candidate.is_absolute() else base / candidate
    if "/" in name or (local.is_file() and not shell):
        if not local.is_file():
            raise fail(f"{where}program {name!r} not found ({local} is no file)")
        if not os.access(local, os.X_OK):
            raise fail(f"{where}program {local} is not executable (chmod +x it)")
        placed = not candidate.is_absolute() and is_below(local, base)
        if not placed and not candidate.is_absolute():  # relative to what, on a worker?
            raise fail(
                f"{where}program {name!r} is outside the spec's folder {base}: write its "
                f"absolute path ({os.path.abspath(local)}: each worker runs the file at that "
                "path) or put it in the spec's folder (then sent to every worker)"
            )
        return Program(name, os.path.abspath(local), placed)
    found = shutil.which(name)
    if found is None:
        beside = " (a shell finds ./NAME beside the spec, not NAME)" if local.is_file() else ""
        looked = "on PATH" if shell else f"in the spec's folder {base} or on PATH"
        raise fail(f"{where}program {name!r} not found {looked}{beside}")
    return Program(name, os.path.abspath(found), False)


def is_below(path: Path, folder: Path) -> bool:
    return Path(os.path.abspath(path)).is_relative_to(os.path.abspath(folder))


def parse_env(raw: Any, fail: Fail) -> tuple[tuple[str, str], ...]:
    """``{NAME: value}``: variables set for the program (numbers become text)."""
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        raise fail(f"model.env: expected a mapping NAME: value, got {raw!r}")
    env = []
    for name, value in raw.items():
        if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
            raise fail(f"model.env: {name!r} is not a variable name (letters, digits, _)")
        if name in ENGINE_VARIABLES:
            raise fail(f"model.env: {name} is the engine's own; choose another name")
        placeholder = unquoted_placeholder(value)
        if placeholder:
            raise fail(
                f"model.env.{name}: {{{placeholder}}} unquoted is a YAML mapping, not a value: "
                f'write "{{{placeholder}}}"'
            )
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise fail(f"model.env.{name}: {value!r} is not allowed; use text or a number")
        env.append((name, str(value)))
    return tuple(env)
