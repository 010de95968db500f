"""Shared test fixtures: the tests' workloads folder, spec files, a Dask cluster shared by the
session (a real scheduler and two worker processes, started when a test first asks for it)."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
"""Slices of real archive traces, under the traces' own names (scripts/make_test_slices.py)."""


@pytest.fixture
def workloads(monkeypatch) -> Path:
    """The workloads folder of a test: tests/data, whatever CAMPAIGN_WORKLOADS says outside, so
    the numbers a test expects are those of the slices it ships with."""
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(DATA))
    return DATA


@pytest.fixture
def write_spec(tmp_path):
    """Write a spec (dedented) into the test's folder and return its path."""

    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture(scope="session")
def scheduler_address():
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
    )
    yield cluster.scheduler_address
    cluster.close()


PAPER_SPEC = """
name: paper
model: mm1
params: {customers: 500, fail_above: 40.0}
factors:
  arrival_rate: [0.05, 0.3, 0.9]
  service_rate: {fast: 2.0, slow: 1.0}
paired: [service_rate]
replicates: 6
seed: 8
output: out
"""


@pytest.fixture(scope="session")
def paper_results(tmp_path_factory, scheduler_address):
    """The output folder of an M/M/1 campaign whose waits span decades (arrival rates 0.05 to
    0.9) and where this seed makes 4 tasks fail (a first interarrival time above 40 s)."""
    import campaign

    folder = tmp_path_factory.mktemp("paper")
    spec = folder / "spec.yaml"
    spec.write_text(PAPER_SPEC)
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    return folder / "out"


@pytest.fixture(scope="session")
def demo_results(tmp_path_factory, scheduler_address):
    """The README's demo (specs/demo.yaml) made small, 400 jobs and 4 replicates, run by
    `campaign run`: its output folder, and what the command printed (``run-output.txt``
    beside it)."""
    import contextlib
    import io

    import yaml

    from campaign.cli.main import main

    folder = tmp_path_factory.mktemp("demo")
    spec = yaml.safe_load((Path(__file__).resolve().parents[1] / "specs" / "demo.yaml").read_text())
    spec["params"]["jobs"] = 400
    spec.update(replicates=4, output="out")
    path = folder / "demo.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["run", str(path), "--scheduler", scheduler_address, "--quiet"])
    assert code == 0, printed.getvalue()
    (folder / "run-output.txt").write_text(printed.getvalue())
    return folder / "out"
