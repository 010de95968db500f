"""A Python model's input files are digested where the run is planned; a worker that reads
another copy (another machine, another folder its inputs() resolves to) computes nothing from
it: each of its tasks fails in one line, and no result names a digest of other content."""

from __future__ import annotations

import textwrap

import pytest

import campaign
from campaign.store.ledger import Ledger
from tests.conftest import dask_cluster

# reads the platform file of the folder $PLATFORMS names, as a site's models often do
MODEL = """
import os
from pathlib import Path


def platform(params):
    return str(Path(os.environ["PLATFORMS"]) / params["platform"])


def run(params, seed):
    return {"speed": float(Path(platform(params)).read_text())}


run.inputs = lambda params: [platform(params)]
"""

SPEC = """
name: sites
model: site_model:run
params: {platform: cluster.txt}
factors:
  load: [1, 2]
replicates: 2
seed: 3
output: out
"""


@pytest.fixture
def two_copies(tmp_path, monkeypatch):
    """The model, and two folders holding other copies of its platform file: the workers'
    (started with $PLATFORMS naming it) and this machine's."""
    (tmp_path / "site_model.py").write_text(textwrap.dedent(MODEL))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name, speed in (("there", "2.0"), ("here", "1.0")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cluster.txt").write_text(speed)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    return tmp_path


def test_a_worker_reading_another_copy_of_an_input_fails_its_tasks_in_one_line(
    two_copies, monkeypatch
):
    monkeypatch.setenv("PLATFORMS", str(two_copies / "there"))
    with dask_cluster(1) as cluster:  # its worker reads the copy "there"
        monkeypatch.setenv("PLATFORMS", str(two_copies / "here"))
        data = campaign.run(
            two_copies / "spec.yaml", scheduler=cluster.scheduler_address, progress=False
        )
    assert "speed" not in data  # no number computed from the other copy
    records = Ledger(two_copies / "out").load().values()
    assert [r["status"] for r in records] == ["failed"] * 4
    errors = {r["error"] for r in records}
    there = two_copies / "there" / "cluster.txt"
    assert len(errors) == 1
    assert errors.pop().startswith(
        f"model site_model:run: input {there} has other content (digest "
    )
