"""The Python API: docs/python-api.md runs as written (its code blocks in order, as in a
notebook), its functions give what the commands print, and errors name Python parameters."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from pathlib import Path

import pytest

import campaign
from campaign.cli.main import main
from tests.conftest import PYTHON_API_DOC

DOC = PYTHON_API_DOC


def code_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


@pytest.fixture(scope="module")
def notebook(python_api_notebook):
    """The document's code run in a fresh folder: the folder, its namespace, what it printed."""
    return python_api_notebook


def cli(*argv) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([str(a) for a in argv]) == 0
    return printed.getvalue()


def test_the_document_runs_and_its_tables_are_the_commands(notebook):
    folder, namespace, printed = notebook
    assert len(code_blocks(DOC.read_text())) == 7
    results = folder / "outputs" / "demo-small"
    assert (results / "results.nc").exists()
    assert dict(namespace["results"]["mean_wait"].sizes) == {
        "scheduler": 3,
        "load": 3,
        "replicate": 4,
    }
    assert "\n36\n" in printed  # the results' frame: one row per task
    per_class = namespace["by_class"]
    assert len(per_class) == 3 * 4  # schedulers x job classes
    assert per_class.equals(namespace["per_class_too"])  # the breakdown named, from the file
    assert "demo-small 36\n0\n" in printed  # the handle: every task done, none to run
    assert namespace["same"].identical(namespace["results"])
    waits, share = namespace["cdfs"][("easy",)]
    assert (
        share[-1] == 1.0
        and waits[-1]
        == namespace["samples"]["wait"].sel(scheduler="easy", load=2.0, quantile=1.0).max()
    )
    # the same tables, word for word, as the commands print them
    metrics = ["--metric", "mean_wait", "--metric", "mean_bsld"]
    pivoted = cli("query", results, *metrics, "--format", "markdown", "--pivot", "scheduler")
    assert pivoted in printed
    assert namespace["latex"] == cli(
        "query", results, "--metric", "mean_wait", "--by", "scheduler", "--where", "load=2",
        "--format", "latex",
    )  # fmt: skip
    compared = cli(
        "compare", results, "--factor", "scheduler", "--baseline", "easy", "--metric",
        "mean_wait", "--by", "load", "--format", "markdown",
    )  # fmt: skip
    assert compared in printed
    ranked = cli("query", results, "--rank", "scheduler", *metrics)
    assert ranked in printed
    assert cli("effects", results, "--metric", "mean_wait", "--format", "markdown") in printed
    # figures: written where asked, a row of panels per metric
    assert namespace["difference"] == Path("figures/difference.pdf")
    fonts = subprocess.run(
        ["pdffonts", str(folder / "figures" / "difference.pdf")], capture_output=True, text=True
    ).stdout
    assert "TrueType" in fonts and "Type 3" not in fonts
    assert (folder / "figures" / "ecdf.png").read_bytes()[:4] == b"\x89PNG"
    assert len(namespace["figure"].axes) == 2
    assert namespace["message"] == (
        "where 'load=3': '3' is not a level of load; levels: 1.0, 1.5, 2.0"
    )


def test_errors_name_python_parameters_never_options(notebook):
    _, namespace, _ = notebook
    results = namespace["results"]
    cases = [
        (lambda: campaign.query(results, by="nope"), "by 'nope' is not a factor; factors: "),
        (lambda: campaign.plot(results, "mean_wait", size="wide"), "size 'wide' is not allowed"),
        (
            lambda: campaign.table(campaign.rank(results, "scheduler"), pivot="load"),
            "pivot is for query and compare tables, not a ranking",
        ),
        (
            lambda: campaign.run(42),
            "spec must be a spec file's path, an output folder, a dict "
            "(a spec file's keys) or a Spec, got int",
        ),
        (
            lambda: campaign.plot(results, "mean_wait", out="x.doc"),
            "out x.doc: '.doc' is not an image format matplotlib writes",
        ),
    ]
    for call, start in cases:
        with pytest.raises(campaign.CampaignError) as caught:
            call()
        assert str(caught.value).startswith(start), str(caught.value)
        assert "--" not in str(caught.value)
    with pytest.raises(campaign.CampaignError, match="missing key 'model'"):
        campaign.run({"name": "no-model"})


def test_every_keyword_of_the_api_is_checked_before_anything_runs(tmp_path):
    """A wrong type is one line naming the parameter, what it got and what is allowed, before
    the spec is read or a cluster started (not a TypeError from deep inside)."""
    spec = tmp_path / "never-read.yaml"  # does not exist: the check comes first
    results = tmp_path / "none"
    cases = [
        (lambda: campaign.run(spec, workers="2"), "workers must be a whole number >= 1 or None, "
         "got str '2'"),
        (lambda: campaign.run(spec, workers=True), "workers must be a whole number >= 1 or None, "
         "got bool True"),
        (lambda: campaign.run(spec, retries=-1), "retries -1 must be >= 0"),
        (lambda: campaign.run(spec, confidence="95%"), "confidence must be a number between 0 "
         "and 1 or None, got str '95%'"),
        (lambda: campaign.run(spec, new="yes"), "new must be True or False, got str 'yes'"),
        (lambda: campaign.run(spec, on_change="redo"), "on_change must be one of 'refuse', "
         "'rerun', 'accept', got str 'redo'"),
        (lambda: campaign.run(spec, worker=2), "worker is not an option of run; its options: "
         "batch_size, cluster, confidence, "),
        (lambda: campaign.query(results, metrics=5), "metrics must be a name or a list of names, "
         "got int 5"),
        (lambda: campaign.query(results, metrics=[]), "metrics must name at least one metric "
         "(None: the default metrics), got list []"),
        (lambda: campaign.rank(results, "x", metrics=()), "metrics must name at least one metric "
         "(None: the default metrics), got tuple ()"),
        (lambda: campaign.query(results, by=[1]), "by must be a name or a list of names "
         "(strings), got list [1]"),
        (lambda: campaign.query(results, where=3), "where must be a dict {factor: level or "
         "[levels]}, 'F=LEVEL' texts or None, got int 3"),
        (lambda: campaign.rank(results, 2), "factor must be a string, got int 2"),
        (lambda: campaign.plot(results, "m", size=(0, 3)), "size must be 'column', 'page', 'WxH'"),
        (lambda: campaign.plot(results, "m", colour="red"), "colour is not an option of plot"),
        (lambda: campaign.verify(spec, sample=0), "sample 0 must be >= 1"),
        (lambda: campaign.merge(str(results), results), "folders must be a list of paths, got "),
        (lambda: campaign.query(), "query: missing a required argument: 'results'; its "
         "parameters: results, metrics, by, where, confidence"),
    ]  # fmt: skip
    for call, start in cases:
        with pytest.raises(campaign.CampaignError) as caught:
            call()
        assert str(caught.value).startswith(start), str(caught.value)
    assert not results.exists() and not (tmp_path / "outputs").exists()
    # a front end names its options instead (the CLI's --batch-size)
    from campaign.cli.main import in_options

    with pytest.raises(campaign.CampaignError) as caught:
        campaign.run(spec, batch_size=0)
    assert in_options(caught.value, {}) == "--batch-size 0 must be >= 1"
