"""The how-to guide on figures and tables: the commands it lists make its figures and its
pivoted table (run here on the small demo; the page's own come from the full demo), and the
figures it shows are committed beside it."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from pathlib import Path

from campaign.cli.main import main

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "how-to" / "figures-tables.md"


def section() -> str:
    return PAGE.read_text()


def commands(text: str) -> list[list[str]]:
    """The `campaign ...` command lines quoted in the section, as argument lists."""
    joined = re.sub(r"`\s*\n\s*", "` ", text)  # quotes broken over lines
    quoted = re.findall(r"`(campaign (?:plot|query) outputs/demo[^`]*)`", joined)
    return [shlex.split(" ".join(line.split()))[1:] for line in quoted]


def run(argv: list[str]) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0, argv
    return printed.getvalue()


def test_the_pages_commands_make_its_figures_and_its_table(demo_results, tmp_path):
    text = section()
    found = commands(text)
    plots = [argv for argv in found if argv[0] == "plot"]
    assert len(plots) == 2
    for argv in plots:
        image = argv[argv.index("--out") + 1]
        assert f"]({os.path.relpath(REPO / image, PAGE.parent)})" in text  # shown on the page
        assert (REPO / image).read_bytes()[:4] == b"\x89PNG"  # and committed
        argv = [str(demo_results) if a == "outputs/demo" else a for a in argv]
        argv[argv.index("--out") + 1] = str(tmp_path / Path(image).name)
        assert run(argv) == f"plot: {tmp_path / Path(image).name}\n"
    (query,) = [argv for argv in found if argv[0] == "query" and "--pivot" in argv]
    printed = run([str(demo_results) if a == "outputs/demo" else a for a in query])
    shown = [line for line in text.splitlines() if line.startswith("| load |")]
    assert shown == [printed.splitlines()[0]]  # the same columns; the numbers are the demo's
    *_, note, warning = printed.splitlines()
    assert note in text
    # these results have 4 replicates a cell, the page's demo 20: only here do they warn
    assert warning.startswith("warning: some intervals rest on 4 replicate(s) (fewer than 5)")
