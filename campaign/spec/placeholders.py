"""The placeholders of a program's command and templates: what they may name, checked.

A placeholder ``{name}`` names a param, a factor or one of `TASK_PLACEHOLDERS`; ``{{name}}``
is a literal ``{name}``. A template is a configuration file, read whole (at most
`MAX_TEMPLATE_BYTES`). `campaign.execute.program_task` fills them on the worker; a shell line is
filled by `fill_shell_line`, which gives each value as one shell word wherever it stands.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.spec.input_file import InputFile

Fail = Callable[[str], CampaignError]

TASK_PLACEHOLDERS = {
    "seed": "the task's seed (0 to 2**63 - 1: a signed 64-bit integer holds it)",
    "seed31": "a seed of 31 bits (0 to 2**31 - 1) from the task's seed, for a 32-bit parser",
    "replicate": "the task's replicate index",
    "task": "the task's key",
    "dir": "the task's folder (absolute path)",
    "cores": "the task's cores (resources.cores, default 1)",
    "port": "a free TCP port on 127.0.0.1 for this task",
}
# the task placeholders that differ between a cell's replicates: one must reach a program run
# with several replicates (`campaign.spec.command_model.check_seeded`)
SEEDING = frozenset({"seed", "seed31", "replicate", "task"})
PLACEHOLDER = re.compile(r"\{\{([A-Za-z_]\w*)\}\}|\{([A-Za-z_]\w*)\}")
MAX_TEMPLATE_BYTES = 10 * 2**20  # a template is a configuration file, read whole


def check_placeholders(
    argv: tuple[str, ...],
    inputs: tuple[InputFile, ...],
    names: set[str],
    fail: Fail,
    env: tuple[tuple[str, str], ...] = (),
) -> set[str]:
    """Refuse a placeholder that names nothing; the names the command, the templates and the
    environment's values use."""
    allowed = sorted(names) + list(TASK_PLACEHOLDERS)
    used: set[str] = set()
    sources: list[tuple[str, str]] = [("model.command", " ".join(argv))]
    sources.extend((f"model.env.{name}", value) for name, value in env)
    for item in inputs:
        if item.template:
            sources.append((f"model.templates: {item.name}", read_template(item, fail)))
    for where, text in sources:
        for name in placeholders(text):
            if name not in names and name not in TASK_PLACEHOLDERS:
                raise fail(
                    f"{where}: placeholder {{{name}}} names nothing; allowed: "
                    + ", ".join(f"{{{n}}}" for n in allowed)
                    + " (write {{name}} for a literal {name})"
                )
            used.add(name)
    return used


def placeholders(text: str) -> list[str]:
    """The names of the placeholders of a text (``{{name}}`` is a literal ``{name}``)."""
    return [match[1] for match in PLACEHOLDER.findall(text) if match[1]]


def read_template(item: InputFile, fail: Fail) -> str:
    if os.path.getsize(item.path) > MAX_TEMPLATE_BYTES:
        raise fail(f"model.templates: {item.name} is larger than {MAX_TEMPLATE_BYTES:,} bytes")
    try:
        return Path(item.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise fail(f"model.templates: cannot read {item.path} as UTF-8 text: {error}") from None


def fill_shell_line(line: str, values: Mapping[str, str]) -> str:
    """A shell line with each placeholder replaced by its value, shell-quoted once, so that
    ``/bin/sh`` reads exactly the value whatever it holds (spaces, ``;``, quotes, ``$``).

    A placeholder outside quotes becomes one quoted word; inside quotes (``"{x}"``,
    ``'{x}'``, ``"--name={x}.csv"``) the quotes are closed before the value and opened again
    after it, so the word the user quoted holds the value, not the value's own quotes. The
    quoting is followed through backslashes, ``$(...)`` and backquotes (inside which a
    value's backslashes, backquotes and dollars are escaped once more, as they read them)."""
    out: list[str] = []
    stack: list[list] = [["plain", 0]]  # quoting contexts: plain, ', ", $( (with depth), `
    i = 0
    while i < len(line):
        match = PLACEHOLDER.match(line, i)
        kind = stack[-1][0]
        if match:
            if match[1]:
                out.append("{" + match[1] + "}")
            else:
                word = shlex.quote(values[match[2]])
                for _ in range(sum(context[0] == "`" for context in stack)):
                    word = re.sub(r"([\\`$])", r"\\\1", word)  # as backquotes read it
                out.append(f"{kind}{word}{kind}" if kind in ("'", '"') else word)
            i = match.end()
            continue
        char, pair = line[i], line[i : i + 2]
        if char == "\\" and kind != "'" and pair != "\\{":
            step = 2  # an escaped character: no quote, nothing opened or closed
        else:
            _follow_quoting(stack, char, pair)
            step = 2 if pair == "$(" and kind != "'" else 1
        out.append(line[i : i + step])
        i += step
    return "".join(out)


def _follow_quoting(stack: list[list], char: str, pair: str) -> None:
    """Update the quoting contexts for the character ``char`` (``pair``: it and the next)."""
    kind = stack[-1][0]
    if kind == "'":
        if char == "'":
            stack.pop()
    elif pair == "$(":
        stack.append(["$(", 0])
    elif char == "`":
        stack.pop() if kind == "`" else stack.append(["`", 0])
    elif kind == '"':
        if char == '"':
            stack.pop()
    elif char in "'\"":
        stack.append([char, 0])
    elif kind == "$(" and char == "(":
        stack[-1][1] += 1
    elif kind == "$(" and char == ")":
        if stack[-1][1]:
            stack[-1][1] -= 1
        else:
            stack.pop()


def unquoted_placeholder(item: object) -> str | None:
    """The name of ``{name}`` written unquoted in YAML, which reads it as ``{name: None}``."""
    if isinstance(item, dict) and len(item) == 1:
        ((name, value),) = item.items()
        if value is None and isinstance(name, str):
            return name
    return None


def value_text(value: Any) -> str:
    """A param's value as one argument: numbers as Python writes them (shortest round trip),
    true / false, lists and mappings as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, list | tuple | dict):
        return json.dumps(value)
    return str(value)


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace each ``{name}`` by its value (``{{name}}`` stays as ``{name}``)."""

    def value(match: Any) -> str:
        return "{" + match[1] + "}" if match[1] else values[match[2]]

    return PLACEHOLDER.sub(value, template)
