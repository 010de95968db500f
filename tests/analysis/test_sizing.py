"""What tasks cost: each task's wall time and peak memory stored with its result, summed up
per cell by `status` and results.nc, and a pilot that sizes the whole campaign."""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr

from campaign.analysis.sizing import estimate
from campaign.cli.main import main
from campaign.render.costs import describe_estimate
from campaign.results.resources import costs

MODEL = '''
import time
import numpy as np

def run(params, seed):
    """Holds ``megabytes`` of memory for ``sleep`` seconds."""
    block = np.ones(int(params["megabytes"]) * 131072)  # 8 bytes each
    time.sleep(float(params["sleep"]))
    return {"value": float(block[0]) + np.random.default_rng(seed).random()}
'''

SPEC = """
name: costly
model: costly:run
params: {sleep: 0.05}
factors:
  megabytes: [1, 300]
replicates: 5
seed: 4
output: out
"""


@pytest.fixture
def campaign_command(tmp_path, monkeypatch, capsys):
    """`campaign ARGS` working in the test's folder, as a new process would run it but in this
    one: the test model ``costly`` is imported anew by each command, here and by the embedded
    cluster's worker processes (whose memory the tasks measure); the code and what it printed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    paths = [str(tmp_path), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, paths)))
    monkeypatch.delitem(sys.modules, "costly", raising=False)

    def command(folder, *args: str) -> SimpleNamespace:
        sys.modules.pop("costly", None)  # as a new process: the code as it is now
        importlib.invalidate_caches()
        capsys.readouterr()  # what this command prints alone
        code = main(list(args))
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return command


def record(cell: dict, elapsed: float, memory: float, status: str = "ok") -> dict:
    return {"cell": cell, "status": status, "elapsed": elapsed, "peak_memory": memory}


def test_costs_per_cell_and_in_all():
    records = {
        "a1": record({"s": "a"}, 1.0, 100e6),
        "a2": record({"s": "a"}, 3.0, 150e6, "failed"),
        "b1": record({"s": "b"}, 10.0, 50e6),
        "b2": {"cell": {"s": "b"}, "status": "ok", "elapsed": 20.0},  # stored before memory
        "c1": {"cell": {"s": "c"}, "status": "skipped"},  # not a finished task
    }
    found = costs(records)
    assert [(c.cell, c.tasks, c.mean_seconds, c.max_seconds) for c in found.cells] == [
        ("s=b", 2, 15.0, 20.0),
        ("s=a", 2, 2.0, 3.0),
    ]
    assert found.cells[0].peak_memory == 50e6 and found.cells[1].peak_memory == 150e6
    assert (found.tasks, found.seconds, found.peak_memory) == (4, 34.0, 150e6)


def test_the_estimate_scales_each_cells_mean_to_its_tasks():
    found = costs({"a": record({"s": "a"}, 36.0, 1e9), "b": record({"s": "b"}, 72.0, 2e9)})
    # 100 tasks of a (36 s), 100 of b (72 s), 100 of an unmeasured c (the mean, 54 s): 4.5 h
    planned = estimate(found, {"s=a": 100, "s=b": 100, "s=c": 100}, 0.5, 4)
    assert planned.core_hours == pytest.approx(4.5)
    assert (planned.workers, planned.jobs, planned.job_cores) == (9, 3, 4)
    assert planned.walltime_seconds == 0.5 * 3600 * 1.25
    assert planned.job_memory == 4 * 2e9 * 1.5
    lines = describe_estimate(found, planned, 0.5)
    assert lines[-2] == (
        "  to finish in 0.5 h: 9 workers, as 3 jobs x walltime 00:37:30 x memory 12GB "
        "(4 workers a job)"
    )
    assert lines[-1] == (
        '  in a cluster file: cores: 4, processes: 4, memory: 12GB, walltime: "00:37:30"; '
        "scale: {jobs: 3}"
    )
    with pytest.raises(ValueError, match="no finished task"):
        estimate(costs({}), {"s=a": 1}, 1.0, 1)


def test_tasks_record_their_own_time_and_peak_memory_and_a_pilot_sizes_the_campaign(
    tmp_path, campaign_command
):
    (tmp_path / "costly.py").write_text(textwrap.dedent(MODEL))
    (tmp_path / "spec.yaml").write_text(SPEC)
    piloted = campaign_command(
        tmp_path, "plan", "spec.yaml", "--estimate", "--pilot", "2", "--workers", "1"
    )
    assert piloted.returncode == 0, piloted.stderr
    out = piloted.stdout.splitlines()
    assert out[0].startswith("estimate from 4 finished tasks of 2 cells (mean ")
    assert out[1] == "  the campaign: 10 tasks, about " + out[1].split("about ")[1]
    assert out[-3].startswith("  largest peak memory: ") and "(megabytes=300)" in out[-3]
    # the pilot's tasks are the campaign's: a run does only the rest
    ran = campaign_command(tmp_path, "run", "spec.yaml", "--workers", "1")
    assert ran.returncode == 0, ran.stderr
    assert "4 already done, 6 to run" in ran.stdout
    cost = xr.load_dataset(tmp_path / "out" / "results.nc", group="resources")
    assert cost.sizes["task"] == 10 and (cost["task_ok"] == 1).all()
    assert (cost["elapsed"] >= 0.05).all()
    levels = cost["cell_levels"].values[cost["task_cell"].values]  # each task's cell's levels
    big = np.array(["300" in cell for cell in levels])
    peaks = cost["peak_memory"].values
    # each task's own peak: the process's high-water mark is reset between tasks, so the small
    # tasks run after the big ones on the one worker do not inherit their 300 MB
    assert (peaks[big] >= 300e6).all() and (peaks[~big] < peaks[big].min() - 200e6).all()
    results = xr.load_dataset(tmp_path / "out" / "results.nc")
    assert "elapsed" not in results and "peak_memory" not in results  # not in the root group
    status = campaign_command(tmp_path, "status", "spec.yaml")
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    cost_line = next(line for line in lines if line.startswith("  cost: "))
    assert cost_line.startswith("  cost: 10 finished tasks took ")
    assert lines[lines.index(cost_line) + 1].startswith("    megabytes=")
    reported = campaign_command(tmp_path, "report", "out")
    assert reported.returncode == 0, reported.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    section = page[page.index('<h2 id="cost">') :]
    assert "<p>10 finished tasks took " in section
    rows = section[section.index("<tbody>") : section.index("</tbody>")].split("<tr>")[1:]
    assert [row.split("</td>")[0].removeprefix("<td>") for row in rows] == [
        "megabytes=300",
        "megabytes=1",
    ] or [row.split("</td>")[0].removeprefix("<td>") for row in rows] == [
        "megabytes=1",
        "megabytes=300",
    ]
    assert all("<td>5</td>" in row for row in rows)


def test_a_pilot_whose_every_task_failed_is_refused_with_its_error(tmp_path, campaign_command):
    (tmp_path / "costly.py").write_text(
        textwrap.dedent(MODEL) + "\n\ndef broken(params, seed):\n    raise KeyError('trace')\n"
    )
    (tmp_path / "spec.yaml").write_text(SPEC.replace("costly:run", "costly:broken"))
    piloted = campaign_command(
        tmp_path, "plan", "spec.yaml", "--estimate", "--pilot", "1", "--workers", "1"
    )
    assert piloted.returncode == 2
    assert piloted.stdout == ""
    assert piloted.stderr.splitlines(keepends=True)[-1] == (
        "campaign: error: costly: every one of the pilot's 2 tasks failed, nothing to size the "
        "campaign from (2 with: KeyError: 'trace'); fix that and size it again (`campaign "
        "status` lists the errors)\n"
    )


def test_a_pilot_of_a_precision_target_gives_the_most_tasks_as_a_bound(tmp_path, campaign_command):
    """With a precision target the rounds stop when it is met: the 2 cells x 40 replicates of
    max_replicates are the most the campaign runs, not what it will."""
    (tmp_path / "costly.py").write_text(textwrap.dedent(MODEL))
    precise = (
        "precision: {metrics: [value], half_width: 0.5, min_replicates: 3, max_replicates: 40}"
    )
    (tmp_path / "spec.yaml").write_text(SPEC.replace("replicates: 5", precise))
    piloted = campaign_command(tmp_path, "plan", "spec.yaml", "--estimate", "--workers", "1")
    assert piloted.returncode == 0, piloted.stderr
    line = piloted.stdout.splitlines()[1]
    assert line.startswith(
        "  the campaign: at most 80 tasks (precision.max_replicates: 40 replicates a cell), about "
    )
    assert line.endswith(" core-hours at most")


def test_a_pilot_sizes_the_campaign_from_its_own_tasks_not_from_levels_taken_out(
    tmp_path, campaign_command
):
    (tmp_path / "costly.py").write_text(textwrap.dedent(MODEL))
    (tmp_path / "spec.yaml").write_text(SPEC.replace("replicates: 5", "replicates: 2"))
    ran = campaign_command(tmp_path, "run", "spec.yaml", "--workers", "1")
    assert ran.returncode == 0, ran.stderr
    # the 300 MB level taken out: its tasks stay in the ledger, but are not the campaign's
    (tmp_path / "spec.yaml").write_text(SPEC.replace("[1, 300]", "[1]"))
    piloted = campaign_command(
        tmp_path, "plan", "spec.yaml", "--estimate", "--pilot", "2", "--workers", "1"
    )
    assert piloted.returncode == 0, piloted.stderr
    out = piloted.stdout.splitlines()
    assert out[0].startswith("estimate from 2 finished tasks of 1 cells (mean ")
    assert out[1] == "  the campaign: 5 tasks, about " + out[1].split("about ")[1]
    assert [line.split(":")[1] for line in out if line.startswith("  slow cell: ")] == [
        " megabytes=1"
    ]
    peak = out[-3].removeprefix("  largest peak memory: ")
    assert peak.endswith(" MB (megabytes=1)") and float(peak.split()[0]) < 300
