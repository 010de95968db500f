"""Every command prints what its function of the Python API returns, written by the renderer
the API offers (`campaign.table` for tables): the command line only parses, calls the API
and prints. Checked on one small finished campaign that keeps a breakdown (``job_class``), so
that a breakdown named as a factor (``--by job_class``) gives the same from Python: the
small demo docs/python-api.md runs."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

import campaign
from campaign.cli.main import main
from campaign.render.outcomes import verify_lines
from campaign.render.state import plan_lines, status_lines, validate_lines
from campaign.render.task_by_hand import task_lines


@pytest.fixture(scope="module")
def results(python_api_notebook) -> Path:
    """docs/python-api.md's small demo (its sample ``wait``, its breakdown ``job_class``),
    run once for the session by the document's own test."""
    folder, _, _ = python_api_notebook
    return folder / "outputs" / "demo-small"


def printed(*argv) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main([str(word) for word in argv])
    return out.getvalue()


def lines(found: list[str]) -> str:
    return "".join(f"{line}\n" for line in found)


TABLES = {  # command line -> the API's call whose `campaign.table` it prints
    "query": (
        ["query", "{out}"],
        lambda out: campaign.table(campaign.query(out)),
    ),
    "query by a breakdown": (
        ["query", "{out}", "--metric", "mean_wait", "--by", "scheduler,job_class"],
        lambda out: campaign.table(campaign.query(out, "mean_wait", by=["scheduler", "job_class"])),
    ),
    "query where, pivot, markdown": (
        ["query", "{out}", "--metric", "mean_bsld", "--where", "load=2", "--pivot", "scheduler",
         "--format", "markdown"],
        lambda out: campaign.table(
            campaign.query(out, "mean_bsld", where={"load": 2.0}, pivot="scheduler"), "markdown"
        ),
    ),
    "rank": (
        ["query", "{out}", "--rank", "scheduler", "--metric", "mean_wait"],
        lambda out: campaign.table(campaign.rank(out, "scheduler", "mean_wait")),
    ),
    "rank per class, csv": (
        ["query", "{out}", "--rank", "scheduler", "--metric", "mean_wait", "--where",
         "job_class=wide_long", "--format", "csv"],
        lambda out: campaign.table(
            campaign.rank(out, "scheduler", "mean_wait", where={"job_class": "wide_long"}), "csv"
        ),
    ),
    "compare by a breakdown": (
        ["compare", "{out}", "--factor", "scheduler", "--baseline", "fcfs", "--metric",
         "mean_wait", "--by", "job_class", "--format", "json"],
        lambda out: campaign.table(
            campaign.compare(out, "scheduler", "fcfs", "mean_wait", by="job_class"), "json"
        ),
    ),
    "effects": (
        ["effects", "{out}", "--metric", "mean_wait", "--digits", "3", "--format", "latex"],
        lambda out: campaign.table(campaign.effects(out, "mean_wait"), "latex", digits=3),
    ),
    "validate": (["validate", "{out}"], lambda out: lines(validate_lines(campaign.validate(out)))),
    "plan": (["plan", "{out}"], lambda out: lines(plan_lines(campaign.plan(out)))),
    "status of the output folder": (
        ["status", "{out}"],
        lambda out: lines(status_lines(campaign.open(out).status())),
    ),
    "task": (
        ["task", "{out}", "--where", "scheduler=easy", "--where", "load=1.5", "--replicate", "2"],
        lambda out: lines(
            task_lines(campaign.task(out, where={"scheduler": "easy", "load": 1.5}, replicate=2))
        ),
    ),
    "models": (["models"], lambda out: campaign.models() + "\n"),
    "models show": (["models", "show", "jobs"], lambda out: campaign.models("jobs") + "\n"),
    "schema": (["schema"], lambda out: campaign.schema()),
}  # fmt: skip


@pytest.mark.parametrize("name", TABLES)
def test_each_command_prints_what_its_api_call_gives(results, name):
    argv, call = TABLES[name]
    command = printed(*(word.format(out=results) for word in argv))
    assert command == call(results)
    assert command.strip()


def test_files_a_command_writes_are_those_its_api_call_writes(results, tmp_path):
    """A figure per job class and the table of every task, from the command and from Python."""
    argv = ["plot", results, "--metric", "mean_wait", "--x", "load", "--by", "job_class"]
    assert printed(*argv, "--out", tmp_path / "command.png") == f"plot: {tmp_path}/command.png\n"
    written = campaign.plot(results, "mean_wait", x="load", by="job_class", out=tmp_path / "api")
    assert written == tmp_path / "api.png"
    assert (tmp_path / "command.png").read_bytes() == written.read_bytes()
    assert printed("export", results, "-o", tmp_path / "command.csv") == (
        f"wrote {tmp_path}/command.csv\nwrote {tmp_path}/command.units.csv\n"
    )
    assert campaign.export(results, tmp_path / "api.csv") == [
        tmp_path / "api.csv",
        tmp_path / "api.units.csv",
    ]
    for name in ("", ".units"):
        made = (tmp_path / f"command{name}.csv").read_bytes()
        assert made == (tmp_path / f"api{name}.csv").read_bytes()


def test_a_verdict_is_printed_as_the_api_gives_it(results, scheduler_address):
    argv = ["verify", results, "--sample", "1", "--scheduler", scheduler_address]
    verdict = campaign.verify(results, 1, None, scheduler_address)
    assert printed(*argv) == lines(verify_lines(verdict))
    assert verdict.summary() == "verify: 1 of 1 sampled tasks reproduced bit for bit"


def test_a_figure_of_a_stored_sample_is_its_cdf_from_python_too(results):
    figure = campaign.plot(results, "wait", by="scheduler", facet=False)
    (axes,) = figure.axes
    assert axes.get_title().startswith("wait: CDF pooled over replicates and load")
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["fcfs", "easy", "conservative"]


def test_every_command_of_the_parser_has_a_function_of_the_api():
    from campaign.cli.main import BUILTIN_COMMANDS

    named = {"validate", "plan", "run", "verify", "status", "merge", "outputs", "task", "remetric",
             "query", "plot", "report", "compare", "effects", "sensitivity", "select",
             "export", "models", "schema"}  # fmt: skip
    assert set(BUILTIN_COMMANDS) == named
    assert all(callable(getattr(campaign, name)) for name in named)
    assert Path(campaign.__file__).name == "__init__.py"
