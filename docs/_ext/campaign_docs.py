"""The Sphinx extension of the site: at the start of every build, write the reference pages'
generated parts (reference/_generated/*.md, included by the reference pages) and the spec's
JSON Schema (_static/campaign-spec.schema.json) from the code.

The results file's part comes from real results files: `example_results.py` runs two small
campaigns in a process of its own (an embedded Dask cluster, about 15 s) and describes them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import reference_pages

HERE = Path(__file__).resolve().parent


def generated_pages() -> dict[str, str]:
    """File name -> Markdown of every generated part."""
    with tempfile.TemporaryDirectory(prefix="campaign-docs-") as folder:
        done = subprocess.run(
            [sys.executable, str(HERE / "example_results.py"), folder],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
    if done.returncode != 0:
        raise RuntimeError(f"the example campaigns of the results reference failed:\n{done.stderr}")
    described = json.loads(done.stdout.replace(str(Path(folder).resolve()), "/home/me/examples"))
    return {
        "commands.md": reference_pages.commands_markdown(),
        "models.md": reference_pages.models_markdown(),
        "spec-keys.md": reference_pages.spec_keys_markdown(),
        "results-file.md": reference_pages.results_markdown(described),
    }


def write_generated(app) -> None:
    reference_pages.write_json_schema(Path(app.srcdir) / "_static")
    folder = Path(app.srcdir) / "reference" / "_generated"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in generated_pages().items():
        path = folder / name
        if not path.exists() or path.read_text() != text:  # unchanged: Sphinx keeps its pages
            path.write_text(text)


OUTPUT_MARKER = re.compile(r"^<!-- output of: (.+?) -->\n(```[^\n]*\n)?", re.MULTILINE)


def show_commands(app, docname, source) -> None:
    """Show the command of every checked output (a `<!-- output of: COMMAND -->` comment,
    which the tests read and a browser hides) as the output's first line, ``$ COMMAND``, so
    that a reader sees what to type; a table's command goes in a block of its own above it."""

    def shown(match: re.Match) -> str:
        marker, command = match.group(0).split("\n", 1)[0], match.group(1)
        if match.group(2):  # a fenced output: the command as its first line
            return f"{marker}\n```console\n$ {command}\n"
        return f"{marker}\n```console\n$ {command}\n```\n\n"

    source[0] = OUTPUT_MARKER.sub(shown, source[0])


def setup(app):
    app.connect("builder-inited", write_generated)
    app.connect("source-read", show_commands)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
