"""The files a program's model names by absolute path, outside the params: read by the
program where it runs (a file system shared with the workers), so digested with the program
(`campaign.plan.outside_files`) and shown by ``validate`` and ``plan``.

- an argument of the command (``--platform /data/cluster.xml``), or an option's value
  (``--platform=/data/cluster.xml``);
- with ``shell: true``, each word of the line the same way, and a ``NAME=/data/file``
  assignment's value, but not the files the line writes (the target of an output
  redirection, ``> /data/out.txt``; the arguments of ``tee``) nor a word the shell expands
  (``$DATA/x``, ``/data/*.xml``: known only when the line runs);
- a path written literally in a template's text (``platform = /data/cluster.xml``,
  `template_paths`);
- an ``env`` value (``SIMGRID_PLATFORM: /data/cluster.xml``), each of its words and each
  ``:``-separated part of one (``CLASSPATH: /opt/sim.jar:/opt/lib.jar``,
  ``JAVA_TOOL_OPTIONS: -Dconf=/data/sim.conf``): the folders of a search path (``PATH``,
  ``LD_LIBRARY_PATH``) are not files, and are not digested; ``LD_PRELOAD``'s libraries are
  digested as the program's libraries.

Only existing files count: a folder is most often where a program writes, and a path that
names nothing here is no file this machine could digest. A word holding a placeholder is a
param's value, digested per cell with the params. The programs (the command's, those a
launcher runs) are digested as programs, not here.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

from campaign.spec.command_model import CommandSpec
from campaign.spec.placeholders import PLACEHOLDER
from campaign.spec.program import OPERATOR_CHARACTERS, SHELL_SYNTAX, is_assignment
from campaign.spec.program_inputs import option_value

WRITER = "tee"  # a command whose arguments are files it writes
# an absolute path in a template's text: not the end of another path or word, nor after a
# placeholder ({root}/x); up to a space, a quote or a character that separates values
TEMPLATE_PATH = re.compile(r"(?<![\w.~/$}-])/[^\s\"'`<>|;,:=(){}\[\]]+")
SYSTEM = ("/proc/", "/sys/", "/dev/")  # the kernel's files, not the program's inputs
PRELOAD = "LD_PRELOAD"  # its libraries are digested as the program's (campaign.plan.runtime)


def named_files(command: CommandSpec) -> tuple[str, ...]:
    """Every existing file the command names by absolute path (see the module), sorted."""
    programs = {p.name for p in (*command.programs, *command.launched)}
    named = {path for path in _written(command) if path not in programs}
    return tuple(sorted(p for p in named if os.path.isfile(p) and not p.startswith(SYSTEM)))


def _written(command: CommandSpec) -> Iterator[str]:
    """The absolute paths written in the command, as written."""
    words = shell_words(command.argv) if command.shell else list(command.argv[1:])
    for word in words:
        value = word.partition("=")[2] if command.shell and is_assignment(word) else word
        value = option_value(value)
        if os.path.isabs(value) and not PLACEHOLDER.search(value):
            if not command.shell or not SHELL_SYNTAX & set(value):
                yield value
    for item in command.inputs:
        if item.template:
            yield from template_paths(item.path)
    for name, value in command.env:
        if name != PRELOAD and not PLACEHOLDER.search(value):
            words = [option_value(word) for word in value.split()]
            yield from (part for word in words for part in word.split(":") if os.path.isabs(part))


def template_paths(path: str) -> list[str]:
    """The absolute paths a template's text holds literally (``platform = /data/cluster.xml``,
    ``"platform": "/data/cluster.xml"``): a path ends at a space, a quote or a character that
    separates values (``,;:=<>()[]{}``); one a placeholder is part of (``/data/{size}.xml``)
    is a param's value, digested per cell."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:  # refused when the spec was read
        return []
    return [
        match[0].rstrip(".")  # the end of a sentence
        for match in TEMPLATE_PATH.finditer(text)
        if not text.startswith("{", match.end())  # /data/{size}.xml: a param's value
    ]


def shell_words(argv: tuple[str, ...]) -> list[str]:
    """The words of a shell line, less its operators and the files it writes: the targets
    of its output redirections (``>``, ``>>``, ``2>``, ``&>``) and the arguments of ``tee``."""
    lexer = shlex.shlex(" ".join(argv), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # refused when the spec was read
        return []
    words: list[str] = []
    first = ""  # the program of the command a word belongs to
    for index, token in enumerate(tokens):
        if set(token) <= OPERATOR_CHARACTERS:
            if ">" not in token and "<" not in token:  # | ; && ( ): another command
                first = ""
            continue
        before = tokens[index - 1] if index else ""
        if ">" in before and set(before) <= OPERATOR_CHARACTERS:
            continue
        if not first and not is_assignment(token):
            first = token  # a program: digested as one
        elif Path(first).name != WRITER:
            words.append(token)
    return words
