"""The placeholders of a program's command and templates: what they may name, checked.

A placeholder ``{name}`` names a param, a factor or one of `TASK_PLACEHOLDERS`; ``{{name}}``
is a literal ``{name}``. A template is a configuration file, read whole (at most
`MAX_TEMPLATE_BYTES`). `campaign.execute.command` fills them on the worker.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from campaign.spec.command import Fail, InputFile

TASK_PLACEHOLDERS = {
    "seed": "the task's seed",
    "replicate": "the task's replicate index",
    "task": "the task's key",
    "dir": "the task's folder (absolute path)",
    "cores": "the task's cores (resources.cores, default 1)",
    "port": "a free TCP port on 127.0.0.1 for this task",
}
PLACEHOLDER = re.compile(r"\{\{([A-Za-z_]\w*)\}\}|\{([A-Za-z_]\w*)\}")
MAX_TEMPLATE_BYTES = 10 * 2**20  # a template is a configuration file, read whole


def check_placeholders(
    argv: tuple[str, ...], inputs: tuple[InputFile, ...], names: set[str], fail: Fail
) -> set[str]:
    """Refuse a placeholder that names nothing; the names the command and templates use."""
    allowed = sorted(names) + list(TASK_PLACEHOLDERS)
    used: set[str] = set()
    sources: list[tuple[str, str]] = [("model.command", " ".join(argv))]
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
