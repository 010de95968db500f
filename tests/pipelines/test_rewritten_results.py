"""results.nc never shows what is no longer the campaign's: a run that sets stored results
aside (``--rerun-changed``) writes it again at once without them, so that a run stopped
before its end leaves no set-aside value on show; and the files made from an earlier
results.nc (report.html, figures/, the exported table) are removed when it is written again
with other results, kept when the results are the same, set aside with ``--new``."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import xarray as xr

from campaign.cli.main import main

REPO = Path(__file__).resolve().parents[2]

MODEL = """
import time

import numpy as np


def run(params, seed):
    time.sleep({pause})
    return {{"value": {shift} + params["level"] + np.random.default_rng(seed).random()}}
"""

SPEC = """
name: edited
model: edited_model:run
factors:
  level: [0, 10]
replicates: 2
seed: 5
output: out
"""


def write_model(folder: Path, shift: float, pause: float = 0.0) -> None:
    (folder / "edited_model.py").write_text(textwrap.dedent(MODEL.format(shift=shift, pause=pause)))


def command(folder: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "campaign", *args]


def environment(folder: Path) -> dict[str, str]:
    paths = [str(folder), str(REPO), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}


@contextmanager
def sigkilled_at_the_end(folder: Path, *args: str) -> Iterator[subprocess.Popen]:
    """`campaign ARGS` started in a session of its own, then SIGKILLed with its cluster at the
    end of the block, as a lost node would end it."""
    run = subprocess.Popen(
        command(folder, *args), cwd=folder, env=environment(folder), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        yield run
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()


@pytest.fixture
def campaign_ok(tmp_path, monkeypatch, capsys):
    """`campaign ARGS` working in the test's folder, as a new process would run it but in this
    one (only the stopped run needs a process of its own): the test model is imported anew by
    each command, here and by the embedded cluster's worker processes; what it printed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", environment(tmp_path)["PYTHONPATH"])
    monkeypatch.delitem(sys.modules, "edited_model", raising=False)

    def run(folder: Path, *args: str, code: int = 0) -> str:
        sys.modules.pop("edited_model", None)  # as a new process: the code as it is now
        importlib.invalidate_caches()
        capsys.readouterr()  # what this command prints alone
        returned = main(list(args))
        out, err = capsys.readouterr()
        assert returned == code, err
        if code == 0:
            return out
        assert out == ""
        return err

    return run


def derived(folder: Path) -> list[str]:
    """What the report, a plot and an export left in the output folder."""
    out = folder / "out"
    figures = sorted(f"figures/{p.name}" for p in (out / "figures").glob("*"))
    return sorted(p.name for p in out.glob("results.*") if p.name != "results.nc") + [
        *(["report.html"] if (out / "report.html").exists() else []),
        *figures,
    ]


def written_again(output: Path) -> bool:
    """Whether results.nc was written again by a run that set stored results aside (it is
    replaced whole: never seen half written)."""
    with xr.open_dataset(output / "results.nc") as results:
        return "incomplete" in results.attrs


def make_derived(folder: Path) -> None:
    """The report, a plot and an export, made in this process (they run no model)."""
    out = str(folder / "out")
    for args in (["report", out], ["plot", out, "--metric", "value"], ["export", out]):
        assert main(args) == 0, args
    (folder / "out" / "figures" / "notes.txt").write_text("mine")  # not the commands': stays


def test_a_stopped_rerun_of_changed_results_leaves_no_set_aside_value_in_results(
    tmp_path, campaign_ok
):
    write_model(tmp_path, 0.0)
    (tmp_path / "spec.yaml").write_text(SPEC)
    campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet")
    make_derived(tmp_path)
    assert len(derived(tmp_path)) == 7  # report, value.png .pdf .svg, notes, results.csv + units
    write_model(tmp_path, 100.0, pause=600)  # the changed model: each task runs long
    args = ("run", "spec.yaml", "--workers", "1", "--quiet", "--rerun-changed")
    with sigkilled_at_the_end(tmp_path, *args) as run:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(tmp_path.glob("out/ledger.changed-*")):
            time.sleep(0.2)
        while time.monotonic() < deadline and not written_again(tmp_path / "out"):
            time.sleep(0.1)  # under way: its tasks sleep for minutes
        assert run.poll() is None, run.communicate()
    with xr.open_dataset(tmp_path / "out" / "results.nc") as results:
        assert (results["status"].values == 0).all()  # missing: none of the earlier values
        assert "value" not in results  # no task holds it (the model declares no metrics)
        assert results.attrs["tasks_missing"] == 4
        incomplete = results.attrs["incomplete"]
    assert incomplete.startswith(
        "written as a run set aside 4 results computed before the code of model "
        "edited_model:run changed (edited_model.py) (in "
    )
    assert incomplete.endswith(
        "to compute them again: their tasks count as missing here until a run finishes (run "
        "the campaign again)"
    )
    assert derived(tmp_path) == ["figures/notes.txt"]  # made from the earlier results: gone
    assert campaign_ok(tmp_path, "query", "out", code=2) == (
        "campaign: error: the results hold no metric: no task finished (0 failed, 4 missing of "
        "4); run the campaign (`campaign status` lists the errors)\n"
    )
    # the run finishes the campaign, and its results.nc says nothing of the stop
    write_model(tmp_path, 100.0)
    out = campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet", "--accept-changed")
    assert "0 already done, 4 to run" in out
    with xr.open_dataset(tmp_path / "out" / "results.nc") as results:
        assert "incomplete" not in results.attrs and (results["status"].values == 1).all()


def test_files_made_from_an_earlier_results_file_go_when_its_results_change(tmp_path, campaign_ok):
    write_model(tmp_path, 0.0)
    (tmp_path / "spec.yaml").write_text(SPEC)
    campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet")
    make_derived(tmp_path)
    made = derived(tmp_path)
    # written again with the same results: they stay
    out = campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet")
    assert "removed" not in out and derived(tmp_path) == made
    # more replicates: other results, the files made from the earlier ones are removed
    (tmp_path / "spec.yaml").write_text(SPEC.replace("replicates: 2", "replicates: 3"))
    out = campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet")
    assert (
        f"report.html, results.csv, results.units.csv, figures/ removed from {tmp_path / 'out'}: "
        "made from the earlier results.nc, they would show results that are no longer these "
        "(`campaign report` and `campaign plot` make them again)\n"
    ) in out
    assert derived(tmp_path) == ["figures/notes.txt"]
    # --new sets them aside with the earlier campaign
    make_derived(tmp_path)
    made = derived(tmp_path)
    out = campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet", "--new")
    [aside] = tmp_path.glob("out/ledger.old-*")
    assert derived(tmp_path) == [] and (aside / "report.html").is_file()
    assert sorted(f"figures/{p.name}" for p in (aside / "figures").iterdir()) == [
        name for name in made if name.startswith("figures/")
    ]


SLOW_HIGH_LEVEL = """
import time

import numpy as np


def run(params, seed):
    time.sleep({pause} if params["level"] == 10 else 0)
    return {{"value": params["level"] + np.random.default_rng(seed).random()}}
"""


def test_results_written_before_a_stopped_run_stored_more_say_they_lack_those(
    tmp_path, campaign_ok
):
    """A run that stores tasks and stops before writing results.nc leaves the earlier file:
    its numbers lack those tasks, and every reader says so until a run writes it again."""
    model = tmp_path / "edited_model.py"
    model.write_text(SLOW_HIGH_LEVEL.format(pause=0))
    (tmp_path / "spec.yaml").write_text(SPEC)
    campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet")
    before = campaign_ok(tmp_path, "query", "out")
    assert "lack" not in before
    model.write_text(SLOW_HIGH_LEVEL.format(pause=600))  # level 10's new tasks never end
    (tmp_path / "spec.yaml").write_text(SPEC.replace("replicates: 2", "replicates: 4"))
    results = tmp_path / "out" / "results.nc"
    written = results.stat().st_mtime_ns
    args = ("run", "spec.yaml", "--workers", "1", "--quiet", "--accept-changed")
    with sigkilled_at_the_end(tmp_path, *args) as run:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(
            batch.stat().st_mtime_ns > written
            for batch in (tmp_path / "out/ledger").glob("*.jsonl")
        ):
            time.sleep(0.2)  # level 0's new tasks stored; level 10's run for minutes
        assert run.poll() is None, run.communicate()
    assert results.stat().st_mtime_ns == written  # the earlier file, as it was
    note = (
        "results.nc was written before tasks that the ledger beside it holds finished (a run "
        "stopped, or still runs, before writing it again): these numbers lack them; `campaign "
        "status SPEC` counts them, `campaign run SPEC` writes them in; it was written from "
        f"{tmp_path / 'spec.yaml'} as it was before an edit: these numbers are the earlier "
        "spec's (the one results.nc keeps), not the file's now; `campaign run "
        f"{tmp_path / 'spec.yaml'}` writes the edited spec's"
    )  # replicates: 4 since, which the run that stopped was of
    after = campaign_ok(tmp_path, "query", "out")
    assert after.replace(note + "\n", "") == before and note in after
    report = tmp_path / "out" / "report.html"
    assert main(["report", "out"]) == 0
    assert "these numbers lack them" in report.read_text()
    # a run that ends writes results.nc with them: no word of the stop
    model.write_text(SLOW_HIGH_LEVEL.format(pause=0))
    out = campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet", "--accept-changed")
    assert "lack" not in out and "lack" not in campaign_ok(tmp_path, "query", "out")
    with xr.open_dataset(results) as dataset:
        assert int(dataset["value_n"].sel(level=0)) == 4 and "incomplete" not in dataset.attrs
