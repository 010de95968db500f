"""README.md's outputs of the demo are what the commands print today: each block after a
`<!-- output of: COMMAND -->` comment equals COMMAND's output on one run of specs/demo.yaml
(and, for the commands on outputs/demo-select, of specs/demo-select.yaml after it)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import shutil
from pathlib import Path

import pytest

from campaign.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- output of: (.+?) -->$")


def readme_outputs(text: str) -> list[tuple[str, str]]:
    """(command, block) for every marked block: a fenced block (its lines inside the fences)
    or a Markdown table (its lines up to the next blank line, and the note after it)."""
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
            table_end = rest.index("")
            note_end = rest.index("", table_end + 1)
            block = rest[:note_end]
        found.append((match.group(1), "\n".join(block)))
    return found


OUTPUTS = readme_outputs((ROOT / "README.md").read_text())


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
    shutil.copytree(
        folder / "outputs" / "demo" / "ledger", folder / "outputs" / "demo-select" / "ledger"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        code, text = printed(["run", "specs/demo-select.yaml", "--scheduler", scheduler_address])
    assert code == 0, text
    return folder


def summary_of_run(text: str, folder: Path) -> str:
    """What `run` printed from its summary on (the lines before name the cluster), the output
    folder shown as the README shows it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Summary:"))
    return "\n".join(lines[start:]).replace(f"{folder.resolve()}/", "/home/me/")


def test_readme_marks_the_demo_outputs():
    commands = [command for command, _ in OUTPUTS]
    assert len(commands) == len(set(commands)) >= 6
    assert "campaign run specs/demo.yaml" in commands
    assert any("--rank" in command for command in commands)
    assert any(command.startswith("campaign compare") for command in commands)
    assert any(command.startswith("campaign effects") for command in commands)
    assert any(command.startswith("campaign query") for command in commands)


@pytest.mark.parametrize(("command", "block"), OUTPUTS, ids=[c for c, _ in OUTPUTS])
def test_readme_output_is_what_the_command_prints(
    demo_folder, monkeypatch, request, command, block
):
    folder, run_text = demo_folder
    if "demo-select" in command:
        request.getfixturevalue("select_folder")
    if command == "campaign run specs/demo.yaml":
        assert summary_of_run(run_text, folder) == block
        return
    monkeypatch.chdir(folder)
    code, text = printed(shlex.split(command)[1:])
    assert code == 0, text
    assert text.rstrip("\n") == block


def test_readme_prose_numbers_of_compare(demo_folder):
    """The numbers the prose after the compare block quotes: unpaired half-widths against
    EASY, and paired against unpaired intervals against FCFS (easy, load 1.0)."""
    import campaign

    folder, _ = demo_folder
    results = campaign.open_results(folder / "outputs" / "demo")
    readme = " ".join((ROOT / "README.md").read_text().split())

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
