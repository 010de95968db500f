"""The files a program's model names by absolute path, outside the params: read by the
program where it runs (a file system shared with the workers), so digested with the program
(`campaign.plan.outside_files`) and shown by ``validate`` and ``plan``.

- an argument of the command (``--platform /data/cluster.xml``), or an option's value
  (``--platform=/data/cluster.xml``);
- with ``shell: true``, each word of the line the same way, and a ``NAME=/data/file``
  assignment's value, but not the files the line writes (the target of an output
  redirection, ``> /data/out.txt``; the arguments of ``tee`` and ``mv``, the destination of
  ``cp``, ``dd``'s ``of=``) nor a word the shell expands
  (``$DATA/x``, ``/data/*.xml``: known only when the line runs);
- a path written literally in a template's text (``platform = /data/cluster.xml``,
  `template_paths`), or in the text of an input that is data, not code (a ``platform.xml``
  whose ``<trace file="/data/jobs.swf"/>`` the program follows, `input_paths`): one of at
  most `SCAN_LIMIT` bytes, neither an executable, a script (``#!``) nor a Python module
  (which may name a file to write as well as one to read), a larger one is not read for it;
- an ``env`` value (``SIMGRID_PLATFORM: /data/cluster.xml``), each of its words and each
  ``:``-separated part of one (``CLASSPATH: /opt/sim.jar:/opt/lib.jar``,
  ``JAVA_TOOL_OPTIONS: -Dconf=/data/sim.conf``): the folders of a search path (``PATH``,
  ``LD_LIBRARY_PATH``) are not files, and are not digested; ``LD_PRELOAD``'s libraries are
  digested as the program's libraries.

A path a placeholder of a param or factor is part of (``/data/{size}.xml``) names a file per
cell, once the cell's params fill it (`filled_paths`): digested per cell, as a param's value
naming a file is; one of a task's placeholder (``{seed}``, ``{dir}``) names no file of the
cell's, and is not digested.

Only existing files count: a folder is most often where a program writes, and a path that
names nothing here is no file this machine could digest. The programs (the command's, those a
launcher runs) are digested as programs, not here.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from campaign.spec.input_file import InputFile
from campaign.spec.placeholders import PLACEHOLDER, TASK_PLACEHOLDERS, fill, value_text
from campaign.spec.program import OPERATOR_CHARACTERS, SHELL_SYNTAX, is_assignment
from campaign.spec.program_inputs import option_value

MOVERS = ("tee", "mv")  # commands whose arguments are files they write (or take away)
COPIER = "cp"  # its last argument is the file it writes
BLOCK_COPIER = "dd"  # its of= names the file it writes
# an absolute path in a template's text: not the end of another path or word, nor after a
# placeholder ({root}/x); up to a space, a quote or a character that separates values, other
# than a placeholder's braces (/data/{size}.xml)
TEMPLATE_PATH = re.compile(r"(?<![\w.~/$}-])/(?:[^\s\"'`<>|;,:=(){}\[\]]|\{[A-Za-z_]\w*\})+")
SCAN_LIMIT = 2**20  # bytes: a larger input (a trace) is not read for the paths it names
CODE_SUFFIXES = (".py",)  # an input that is code, not data the program reads as it is
SYSTEM = ("/proc/", "/sys/", "/dev/")  # the kernel's files, not the program's inputs
PRELOAD = "LD_PRELOAD"  # its libraries are digested as the program's (campaign.plan.runtime)


def named_files(command: Any) -> tuple[str, ...]:
    """Every existing file the command (a `campaign.spec.command_model.CommandSpec`, which
    imports this module) names by absolute path (see the module), sorted."""
    programs = {p.name for p in (*command.programs, *command.launched)}
    named = {p for p in command.named_paths if p not in programs and not PLACEHOLDER.search(p)}
    return tuple(sorted(p for p in named if is_read(p)))


def path_patterns(command: Any) -> tuple[str, ...]:
    """The absolute paths the command names with placeholders of params or factors only
    (``/data/{size}.xml``, not ``/scratch/{task}.out``), each a file per cell once its
    params fill them (`filled_paths`)."""
    return tuple(
        sorted(
            path
            for path in command.named_paths
            if PLACEHOLDER.search(path) and not placeholder_names(path) & set(TASK_PLACEHOLDERS)
        )
    )


def placeholder_names(text: str) -> set[str]:
    return {match[2] for match in PLACEHOLDER.finditer(text) if match[2]}


def filled_paths(command: Any, params: Mapping[str, Any]) -> set[str]:
    """The existing files `path_patterns` name for a cell of ``params``: those whose every
    placeholder is a param's or a factor's (``{seed}``, ``{dir}``, differing per task, are
    no file of the cell's), the program's aside."""
    known = {path for path, _ in command.placed_values}  # the task's copy of an input
    values = {
        name: value_text(value)
        for name, value in params.items()
        if name != command.chosen_by and not (isinstance(value, str) and value in known)
    }
    filled = {
        fill(pattern, values)
        for pattern in path_patterns(command)
        if placeholder_names(pattern) <= set(values)
    }
    return {path for path in filled if is_read(path)}


def is_read(path: str) -> bool:
    """A file a program may read: an existing file, not the kernel's."""
    return os.path.isfile(path) and not path.startswith(SYSTEM)


def paths_in_spec(
    argv: tuple[str, ...],
    shell: bool,
    inputs: tuple[InputFile, ...],
    env: tuple[tuple[str, str], ...],
) -> tuple[str, ...]:
    """The absolute paths the command, its templates and ``env`` name, as the spec and the
    templates spell them (placeholders too), once when the spec is read: a worker has no
    template to read them from (`CommandSpec.named_paths`)."""
    return tuple(sorted(set(_paths_in_spec(argv, shell, inputs, env))))


def _paths_in_spec(
    argv: tuple[str, ...],
    shell: bool,
    inputs: tuple[InputFile, ...],
    env: tuple[tuple[str, str], ...],
) -> Iterator[str]:
    words = shell_words(argv) if shell else list(argv[1:])
    for word in words:
        value = word.partition("=")[2] if shell and is_assignment(word) else word
        value = option_value(value)
        if os.path.isabs(value):
            if not shell or not SHELL_SYNTAX & set(PLACEHOLDER.sub("", value)):
                yield value
    for item in inputs:
        if item.template:
            yield from template_paths(item.path)
        else:
            yield from input_paths(item.path)
    for name, value in env:
        if name != PRELOAD:
            words = [option_value(word) for word in value.split()]
            yield from (part for word in words for part in word.split(":") if os.path.isabs(part))


def template_paths(path: str) -> list[str]:
    """The absolute paths a template's text holds (``platform = /data/cluster.xml``,
    ``"platform": "/data/{size}.xml"``): a path ends at a space, a quote or a character that
    separates values (``,;:=<>()[]{}``) other than a placeholder's braces."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:  # refused when the spec was read
        return []
    return [match[0].rstrip(".") for match in TEMPLATE_PATH.finditer(text)]  # a sentence's end


def input_paths(path: str) -> list[str]:
    """The absolute paths the text of an input that is no template holds, as a template's
    (`template_paths`), those a placeholder would be part of aside (none is filled in it):
    nothing for code (an executable, a script, a Python module), for a file of more than
    `SCAN_LIMIT` bytes, and for one that is not text."""
    if path.endswith(CODE_SUFFIXES) or os.access(path, os.X_OK):
        return []
    try:
        if os.path.getsize(path) > SCAN_LIMIT:
            return []
        data = Path(path).read_bytes()
    except OSError:  # a folder of inputs, or refused when the spec was read
        return []
    if b"\0" in data or data.startswith(b"#!"):
        return []
    text = data.decode("utf-8", errors="replace")
    found = (match[0].rstrip(".") for match in TEMPLATE_PATH.finditer(text))
    return [found_path for found_path in found if not PLACEHOLDER.search(found_path)]


def shell_words(argv: tuple[str, ...]) -> list[str]:
    """The words of a shell line, less its operators and the files it writes: the targets
    of its output redirections (``>``, ``>>``, ``2>``, ``&>``) and those of the writers
    `read_words` knows (``tee``, ``cp``, ``mv``, ``dd of=``)."""
    lexer = shlex.shlex(" ".join(argv), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # refused when the spec was read
        return []
    words: list[str] = []
    first = ""  # the program of the command a word belongs to
    arguments: list[str] = []  # its arguments so far
    for index, token in enumerate(tokens):
        if set(token) <= OPERATOR_CHARACTERS:
            if ">" not in token and "<" not in token:  # | ; && ( ): another command
                words += read_words(first, arguments)
                first, arguments = "", []
            continue
        before = tokens[index - 1] if index else ""
        if ">" in before and set(before) <= OPERATOR_CHARACTERS:
            continue
        if not first and not is_assignment(token):
            first = token  # a program: digested as one
        elif first:
            arguments.append(token)
        else:
            words.append(token)  # an assignment before the program
    return words + read_words(first, arguments)


def read_words(program: str, arguments: list[str]) -> list[str]:
    """The arguments of one command of a shell line less the files it writes, which are no
    input: all of ``tee``'s and ``mv``'s (it takes its sources away), ``cp``'s last (its
    destination, unless ``-t`` names a folder for it), ``dd``'s ``of=``."""
    name = Path(program).name
    if name in MOVERS:
        return []
    if name == COPIER and not any(w.startswith(("-t", "--target-directory")) for w in arguments):
        operands = [word for word in arguments if not word.startswith("-")]
        return [word for word in arguments if not operands or word != operands[-1]]
    if name == BLOCK_COPIER:
        return [word for word in arguments if not word.startswith("of=")]
    return list(arguments)
