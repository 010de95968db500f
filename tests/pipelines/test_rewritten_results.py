"""results.nc never shows what is no longer the campaign's: a run that sets stored results
aside (``--rerun-changed``) writes it again at once without them, so that a run stopped
before its end leaves no set-aside value on show; and the files made from an earlier
results.nc (report.html, figures/, the exported table) are removed when it is written again
with other results, kept when the results are the same, set aside with ``--new``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import xarray as xr

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


def campaign_ok(folder: Path, *args: str) -> str:
    done = subprocess.run(
        command(folder, *args), capture_output=True, text=True, timeout=300, cwd=folder,
        env=environment(folder),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def derived(folder: Path) -> list[str]:
    """What the report, a plot and an export left in the output folder."""
    out = folder / "out"
    figures = sorted(f"figures/{p.name}" for p in (out / "figures").glob("*"))
    return sorted(p.name for p in out.glob("results.*") if p.name != "results.nc") + [
        *(["report.html"] if (out / "report.html").exists() else []),
        *figures,
    ]


def make_derived(folder: Path) -> None:
    """The report, a plot and an export, made in this process (they run no model)."""
    from campaign.cli.main import main

    out = str(folder / "out")
    for args in (["report", out], ["plot", out, "--metric", "value"], ["export", out]):
        assert main(args) == 0, args
    (folder / "out" / "figures" / "notes.txt").write_text("mine")  # not the commands': stays


def test_a_stopped_rerun_of_changed_results_leaves_no_set_aside_value_in_results(tmp_path):
    write_model(tmp_path, 0.0)
    (tmp_path / "spec.yaml").write_text(SPEC)
    campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet")
    make_derived(tmp_path)
    assert len(derived(tmp_path)) == 7  # report, value.png .pdf .svg, notes, results.csv + units
    write_model(tmp_path, 100.0, pause=600)  # the changed model: each task runs long
    run = subprocess.Popen(
        command(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet", "--rerun-changed"),
        cwd=tmp_path, env=environment(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(tmp_path.glob("out/ledger.changed-*")):
            time.sleep(0.2)
        time.sleep(3)  # under way: its tasks sleep for minutes
        assert run.poll() is None, run.communicate()
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # the run and its cluster, as a lost node would
        run.communicate()
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
    queried = subprocess.run(
        command(tmp_path, "query", "out"), capture_output=True, text=True, cwd=tmp_path,
        env=environment(tmp_path),
    )  # fmt: skip
    assert (queried.returncode, queried.stdout) == (2, "")
    assert queried.stderr == (
        "campaign: error: the results hold no metric: no task finished (0 failed, 4 missing of "
        "4); run the campaign (`campaign status` lists the errors)\n"
    )
    # the run finishes the campaign, and its results.nc says nothing of the stop
    write_model(tmp_path, 100.0)
    out = campaign_ok(tmp_path, "run", "spec.yaml", "--workers", "1", "--quiet", "--accept-changed")
    assert "0 already done, 4 to run" in out
    with xr.open_dataset(tmp_path / "out" / "results.nc") as results:
        assert "incomplete" not in results.attrs and (results["status"].values == 1).all()


def test_files_made_from_an_earlier_results_file_go_when_its_results_change(tmp_path):
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
