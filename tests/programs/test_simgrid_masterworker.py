"""specs/simgrid-masterworker.yaml: a C++ simulator built on SimGrid (Debian's libsimgrid-dev)
with `make`, run as a program on a real Dask cluster: its scalars and its per-task sample
stored as a Python model's, SimGrid's library in the provenance, results checked by hand where
the simulated network costs nothing (every task then takes its size / 1 Gflop/s, back to
back), and a rebuilt simulator making every stored result stale.

The simulator is built once for the module, in a copy of specs/ (no test writes there)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

import campaign
from campaign.cli.main import main
from campaign.plan.runtime import digest
from campaign.results.names import QUANTILE_GRID
from campaign.results.status import STATUS_OK
from campaign.spec.load import read_yaml

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "simgrid-masterworker.yaml"
PAGE = ROOT / "docs" / "how-to" / "simgrid.md"
PROGRAM = "./simgrid/masterworker"


def make(folder: Path) -> float:
    """`make -C folder` as the spec says; the seconds it took."""
    start = time.monotonic()
    built = subprocess.run(["make", "-s", "-C", str(folder)], capture_output=True, text=True)
    assert built.returncode == 0, f"make -C {folder}: {built.stderr}"
    return time.monotonic() - start


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    """The ready spec beside a copy of specs/simgrid/ built there (what a build or a run by
    hand left in specs/simgrid is not copied); the copied spec's path."""
    folder = tmp_path_factory.mktemp("simgrid")
    shutil.copy(SPEC, folder)
    ignore = shutil.ignore_patterns("masterworker", "tasks.csv")
    shutil.copytree(SPEC.parent / "simgrid", folder / "simgrid", ignore=ignore)
    seconds = make(folder / "simgrid")
    print(f"make -C specs/simgrid: {seconds:.1f} s")
    return folder / SPEC.name


def printed(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def shown(text: str, folder: Path) -> str:
    """A command's output as the how-to page shows it: from the run's summary on, the output
    folder as /home/me/campaign/outputs/... (a clone of the repository)"""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Summary:")), 0)
    return "\n".join(lines[start:]).replace(str(folder), "/home/me/campaign")


def test_the_ready_spec_runs_the_simulator_with_its_library_in_the_provenance(
    example, scheduler_address
):
    output = example.parent / "outputs" / "simgrid-masterworker"
    start = time.monotonic()
    code, text = printed(
        "run", str(example), "--scheduler", scheduler_address, "--out", str(output), "--quiet"
    )
    print(f"campaign run specs/simgrid-masterworker.yaml: {time.monotonic() - start:.1f} s")
    assert code == 0, text
    results = campaign.open_results(output)
    samples = campaign.open_samples(output)
    assert (results["status"] == STATUS_OK).all()
    assert int(results["status"].size) == 40  # 8 cells, each within 5% at 5 replicates
    assert (results["precision_met"] == 1).all()
    assert (samples["response_count"] == 200).all()  # one response time per task
    equal = {"spread": 0.0}  # equal tasks: both strategies hand them out alike
    for name in ("makespan", "mean_response", "utilization", "response_p95"):
        by = results[name].sel(**equal)
        assert (by.sel(strategy="round-robin") == by.sel(strategy="first-idle")).all(), name
        assert (by == by.isel(replicate=0)).all(), name  # no randomness in equal tasks
    uneven = results["makespan"].sel(spread=0.8, workers=8).mean("replicate")
    assert float(uneven.sel(strategy="first-idle")) < float(uneven.sel(strategy="round-robin"))
    assert samples["response"].attrs["units"] == "s"

    libraries = json.loads(results.attrs["program_files"])[PROGRAM]
    ldd = subprocess.run(["ldd", str(example.parent / PROGRAM)], capture_output=True, text=True)
    path = re.search(r"libsimgrid\.so\.3\.32 => (\S+)", ldd.stdout).group(1)
    assert libraries["libsimgrid.so.3.32"] == digest(str(Path(path).resolve()))
    description = " ".join(results.attrs["description"].split())
    assert description.startswith("Reproduces no source study")

    page = PAGE.read_text()  # the how-to page shows what these commands print
    assert shown(text, example.parent) in page
    for command in (
        ["compare", "--factor", "strategy", "--baseline", "round-robin", "--metric", "makespan"],
        ["query", "--metric", "response_p50", "--metric", "response_p95", "--where", "spread=0.8"],
    ):
        code, text = printed(command[0], str(output), *command[1:])
        assert code == 0 and shown(text, example.parent) in page, text


def exact_spec(example: Path) -> Path:
    """The ready spec on a network that costs nothing (no bytes, no latency), tasks of
    0.25 s on average, 1 and 4 workers, one replicate: 8 tasks."""
    spec = read_yaml(example.read_text(), str(example))
    spec.pop("precision")
    spec.update(name="simgrid-exact", output="exact", replicates=1)
    spec["params"].update(flops=2.5e8, bytes=0, latency=0)
    spec["factors"]["workers"] = [1, 4]
    path = example.parent / "exact.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def test_a_free_network_gives_the_makespan_by_hand_and_a_rebuild_makes_it_stale(
    example, scheduler_address, tmp_path
):
    """200 equal tasks of 0.25 s: one worker ends task k at 0.25 k (makespan 50, mean
    response 25.125), four end four tasks at each 0.25 k for k = 1..50 (12.5 and 6.375);
    workers never idle. A simulator rebuilt to compute every task twice refuses the stored
    results; --rerun-changed gives the doubled numbers."""
    folder = tmp_path / "example"
    shutil.copytree(example.parent / "simgrid", folder / "simgrid")  # built, times kept
    shutil.copy(example, folder)
    spec = exact_spec(folder / example.name)
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    samples = campaign.open_samples(folder / "exact")
    assert (results["status"] == STATUS_OK).all()
    for strategy in ("round-robin", "first-idle"):
        equal = results.sel(strategy=strategy, spread=0.0, replicate=0)
        assert equal["makespan"].values.tolist() == [50.0, 12.5]
        assert equal["mean_response"].values.tolist() == [25.125, 6.375]
        assert equal["utilization"].values.tolist() == [1.0, 1.0]
        one = samples["response"].sel(strategy=strategy, spread=0.0, replicate=0, workers=1)
        hand = np.quantile(0.25 * np.arange(1, 201), QUANTILE_GRID)
        assert one.values.tolist() == hand.tolist()
        uneven = results.sel(strategy=strategy, spread=0.8, workers=1, replicate=0)
        assert float(uneven["utilization"]) == pytest.approx(1.0, abs=1e-12)
    one = results["makespan"].sel(workers=1)  # one worker: the strategy makes no difference
    assert (one.sel(strategy="round-robin") == one.sel(strategy="first-idle")).all()
    assert (samples["response_count"] == 200).all()

    source = folder / "simgrid" / "masterworker.cpp"
    text = source.read_text()
    assert text.count("execute(task->flops)") == 1
    source.write_text(text.replace("execute(task->flops)", "execute(2 * task->flops)"))
    print(f"make after an edit: {make(folder / 'simgrid'):.1f} s")
    with pytest.raises(campaign.CampaignError, match=r"8 stored results were computed before"):
        campaign.run(spec, scheduler=scheduler_address, progress=False)
    again = campaign.run(spec, scheduler=scheduler_address, progress=False, on_change="rerun")
    doubled = again.sel(spread=0.0, replicate=0)
    assert doubled["makespan"].values.tolist() == [[100.0, 25.0]] * 2
    assert doubled["mean_response"].values.tolist() == [[50.25, 12.75]] * 2
