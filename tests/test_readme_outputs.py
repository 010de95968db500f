"""The outputs README.md and the documentation pages (docs/**/*.md) show are what the commands
print today: each block after a `<!-- output of: COMMAND -->` comment equals COMMAND's output.

README's commands, and a page's that writes no file, run in one folder where
`campaign run specs/demo.yaml` ran (the whole demo, once for all of them; and, for the
commands on outputs/demo-select, `campaign run specs/demo-select.yaml` after it). A page
that writes files (a block after `<!-- file: NAME -->`) or runs commands (a bash block after
`<!-- run -->`) works in a folder of its own, its steps in the page's order: the tutorials'
own models and programs are written, compiled and run as a reader would."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from campaign.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- (output of|file|run)(?:: (.+?))? -->$")
DEMO_RUN = "campaign run specs/demo.yaml"
GENERATED = ("docs/_build", "docs/reference/_generated")


@dataclass(frozen=True)
class Step:
    """One marked block of a page: an output to compare, a file to write or commands to run."""

    kind: str  # "output of", "file" or "run"
    argument: str  # the command, the file's name, or "" for run
    block: str


def page_steps(text: str) -> list[Step]:
    """Every marked block of a page, in order: a fenced block (its lines inside the fences)
    or, after `output of`, a Markdown table (its lines up to the next blank line, and the
    note after it)."""
    lines = text.splitlines()
    found = []
    for at, line in enumerate(lines):
        match = MARKER.match(line)
        if not match:
            continue
        rest = lines[at + 1 :]
        if rest[0].strip().startswith("```"):
            end = next(i for i in range(1, len(rest)) if rest[i].strip().startswith("```"))
            block = rest[1:end]
        else:  # a table, a blank line, its note
            assert match.group(1) == "output of", f"a {match.group(1)} marker needs a fenced block"
            table_end = rest.index("")
            note_end = rest.index("", table_end + 1)
            block = rest[:note_end]
        found.append(Step(match.group(1), match.group(2) or "", "\n".join(block)))
    return found


def pages() -> list[Path]:
    """README.md and every page of the site's sources."""
    docs = sorted((ROOT / "docs").rglob("*.md"))
    generated = [ROOT / g for g in GENERATED]
    return [ROOT / "README.md", *(p for p in docs if not any(g in p.parents for g in generated))]


def works_apart(steps: list[Step]) -> bool:
    return any(step.kind != "output of" for step in steps)


STEPS = {page.relative_to(ROOT).as_posix(): page_steps(page.read_text()) for page in pages()}
OUTPUTS = [
    (page, at, step.argument)
    for page, steps in STEPS.items()
    for at, step in enumerate(steps)
    if step.kind == "output of"
]
OUTPUTS_OF_README = [command for page, _, command in OUTPUTS if page == "README.md"]


def printed(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args)
    return code, out.getvalue()


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory, scheduler_address):
    """A folder where `campaign run specs/demo.yaml` ran, as the README says (the whole demo,
    on the shared cluster: results do not depend on it), and what the run printed."""
    folder = tmp_path_factory.mktemp("readme")
    (folder / "specs").mkdir()
    shutil.copy(ROOT / "specs" / "demo.yaml", folder / "specs" / "demo.yaml")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        code, text = printed(["run", "specs/demo.yaml", "--scheduler", scheduler_address])
    assert code == 0, text
    return folder, text


@pytest.fixture(scope="module")
def select_folder(demo_folder, scheduler_address):
    """The demo's folder where `campaign run specs/demo-select.yaml` ran too. The selection
    has the demo's model, params, seed and pairing, so its tasks are the demo's (the same
    keys); its output folder starts from the demo's stored tasks, as a run there would find
    them, and runs only the replicates past the demo's 20 that its stages need: the results
    are those of a run from nothing, bit for bit."""
    folder, _ = demo_folder
    shutil.copy(ROOT / "specs" / "demo-select.yaml", folder / "specs" / "demo-select.yaml")
    demo, select = folder / "outputs" / "demo", folder / "outputs" / "demo-select"
    shutil.copytree(demo / "ledger", select / "ledger")
    shutil.copy(demo / "campaign.json", select / "campaign.json")  # what the records mean
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        code, text = printed(["run", "specs/demo-select.yaml", "--scheduler", scheduler_address])
    assert code == 0, text
    return folder


def as_shown(text: str, folder: Path, command: str) -> str:
    """A command's output as the pages show it: the working folder as /home/me, and of
    `campaign run` what it printed from its summary on (the lines before name the cluster)."""
    if " campaign run " in f" {command} ":
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("Summary:"))
        text = "\n".join(lines[start:])
    here = str(folder.resolve())
    return text.rstrip("\n").replace(f"{here}/", "/home/me/").replace(here, "/home/me")


SHELL = re.compile(r"[|<>&;$]")  # a command with these is shell syntax: bash runs it


def shell_environment() -> dict[str, str]:
    """This process's environment with this Python's scripts (`campaign`) first on PATH."""
    scripts = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": scripts + os.pathsep + os.environ.get("PATH", "")}


def in_process(command: str) -> tuple[list[str], dict[str, str]]:
    """How to run a shown command in a process of its own, and its environment: `campaign`
    as this checkout's (with one worker for a run or a verify: every cluster gives the same
    results, and a second worker process only adds its start to a tutorial's few tasks),
    a shell line by bash, with this Python's scripts first on its PATH; ``NAME=VALUE`` words
    before a command go to its environment."""
    environment = shell_environment()
    if SHELL.search(command):
        return ["bash", "-c", command], environment
    words = shlex.split(command)
    while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
        name, _, value = words.pop(0).partition("=")
        environment[name] = value
    if words[0] != "campaign":
        return words, environment
    argv = [sys.executable, "-m", "campaign", *words[1:]]
    if words[1] in ("run", "verify") and not {"--workers", "--scheduler"} & set(words):
        argv += ["--workers", "1"]
    return argv, environment


def run_apart(steps: list[Step], folder: Path) -> dict[int, str]:
    """A page's steps in its own folder, in order: what each `output of` printed."""
    outputs = {}
    for at, step in enumerate(steps):
        if step.kind == "file":
            (folder / step.argument).write_text(step.block + "\n")
            continue
        if step.kind == "output of":  # its output is the check, whatever its exit status
            argv, environment = in_process(step.argument)
        else:
            argv, environment = ["bash", "-euo", "pipefail", "-c", step.block], shell_environment()
        done = subprocess.run(
            argv, cwd=folder, env=environment, capture_output=True, text=True, timeout=600
        )
        if step.kind == "run":
            assert done.returncode == 0, f"{step.block}: exit {done.returncode}\n{done.stderr}"
        outputs[at] = done.stdout
    return outputs


@pytest.fixture(scope="module")
def apart(tmp_path_factory):
    """Page -> what its commands printed, for the pages that work in a folder of their own
    (each run once, at its first test)."""
    done: dict[str, tuple[Path, dict[int, str]]] = {}

    def outputs(page: str) -> tuple[Path, dict[int, str]]:
        if page not in done:
            folder = tmp_path_factory.mktemp(Path(page).stem)
            done[page] = folder, run_apart(STEPS[page], folder)
        return done[page]

    return outputs


def test_readme_marks_the_demo_outputs():
    """README shows what the demo prints and a query of it; the pages show the rest of what
    the demo's results give, each output checked here too."""
    assert DEMO_RUN in OUTPUTS_OF_README
    assert any(command.startswith("campaign query") for command in OUTPUTS_OF_README)
    shown = {page: [c for p, _, c in OUTPUTS if p == page] for page in STEPS}
    for page in ("docs/tutorials/paper.md", "docs/how-to/compare.md"):
        commands = shown[page]
        assert len(commands) == len(set(commands)) >= 3, page
        assert any("--rank" in command for command in commands), page
        assert any(command.startswith("campaign compare") for command in commands), page
        assert any(command.startswith("campaign effects") for command in commands), page
    assert "campaign select outputs/demo-select" in shown["docs/how-to/select.md"]


def test_readme_fits_in_a_few_screens():
    """README is the way in (what it is, the two commands, the demo's output, a simulator
    program's few lines, links into the site); the rest lives on the site's pages."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && campaign run " \
        "specs/demo.yaml" in readme  # fmt: skip
    assert "bash scripts/test.sh" in readme
    simulator = readme.split("## You have a simulator program", 1)[1].split("\n## ", 1)[0]
    assert len(simulator.strip().splitlines()) <= 25
    assert readme.index("## You have a simulator program") < readme.index(
        f"<!-- output of: {DEMO_RUN}"
    )
    for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        assert (ROOT / link).is_file(), link


def test_the_tutorials_show_checked_outputs():
    """Each tutorial shows the output of a command the tests run; the ones with a model or
    a program of their own write and run it."""
    tutorials = [
        page for page in STEPS if page.startswith("docs/tutorials/") and "index" not in page
    ]
    assert len(tutorials) >= 4
    for page in tutorials:
        assert any(step.kind == "output of" for step in STEPS[page]), page
    assert works_apart(STEPS["docs/tutorials/python-model.md"])
    assert works_apart(STEPS["docs/tutorials/program-model.md"])


@pytest.mark.parametrize(
    ("page", "at", "command"), OUTPUTS, ids=[f"{p}: {c}" for p, _, c in OUTPUTS]
)
def test_output_is_what_the_command_prints(request, apart, monkeypatch, page, at, command):
    block = STEPS[page][at].block
    if works_apart(STEPS[page]):
        folder, outputs = apart(page)
        assert as_shown(outputs[at], folder, command) == block
        return
    folder, run_text = request.getfixturevalue("demo_folder")
    if "demo-select" in command:
        request.getfixturevalue("select_folder")
    if command == DEMO_RUN:
        assert as_shown(run_text, folder, command) == block
        return
    monkeypatch.chdir(folder)
    code, text = printed(shlex.split(command)[1:])
    assert code == 0, text
    assert as_shown(text, folder, command) == block


def test_prose_numbers_of_compare(demo_folder):
    """The numbers the prose after the compare block of the how-to guide quotes: unpaired
    half-widths against EASY, and paired against unpaired intervals against FCFS (easy, load
    1.0)."""
    import campaign

    folder, _ = demo_folder
    results = campaign.open_results(folder / "outputs" / "demo")
    readme = " ".join((ROOT / "docs" / "how-to" / "compare.md").read_text().split())

    def against(baseline, paired, **where):
        chosen = campaign.compare(results, "scheduler", baseline, "mean_wait", paired=paired)
        return chosen.sel(**where) if where else chosen

    easy = against("easy", False).sel(scheduler="conservative")
    widths = [f"{float(f'{w:.3g}'):.0f}" for w in easy["difference_half_width"].values.ravel()]
    assert f"half-widths of {widths[0]}, {widths[1]} and {widths[2]} s" in readme

    paired = against("fcfs", True, scheduler="easy", load=1.0)
    unpaired = against("fcfs", False, scheduler="easy", load=1.0)
    thousands = [f"{float(c['difference_half_width']) / 1000:.1f}" for c in (paired, unpaired)]
    assert f"({thousands[0]} against {thousands[1]} thousand seconds at load 1.0)" in readme
    bounds = [
        f"[{float(c['ratio_low']):.3f}, {float(c['ratio_high']):.3f}]" for c in (paired, unpaired)
    ]
    assert f"({bounds[0]} against {bounds[1]})" in readme
