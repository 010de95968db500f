"""The fault-injection suite: campaigns of the `faulty` model run by `campaign run` in a fresh
process, on the embedded cluster, as a user runs them, beside an undisturbed reference run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from tests.conftest import dask_cluster

FOLDER = Path(__file__).resolve().parent
REPO = FOLDER.parents[1]
# the campaign and its worker processes import this checkout's `campaign` and the models here
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(REPO), str(FOLDER), os.environ.get("PYTHONPATH", "")]),
}


def spec_text(name: str, factor: str = "level", levels=(1, 2), **fields) -> str:
    """A spec of the faulty model (``fields`` override params and the other keys)."""
    params = {"fault": "none", "above": 1.0, "duration_ms": 2}
    params.update({key: fields.pop(key) for key in list(fields) if key in params})
    params.pop(factor, None)
    spec = {
        "name": name,
        "model": "faulty:run",
        "params": params,
        "factors": {factor: list(levels)},
        "paired": [factor],  # every level sees the same seeds
        "replicates": 10,
        "seed": 11,
        "output": name,
        **fields,
    }
    return yaml.safe_dump(spec, sort_keys=False)


class Runner:
    """Writes specs into the test's folder and runs `campaign run` on them in a new process."""

    def __init__(self, folder: Path):
        self.folder = folder

    def spec(self, name: str, **fields) -> Path:
        path = self.folder / f"{name}.yaml"
        path.write_text(spec_text(name, **fields))
        return path

    def run(self, spec: Path, *options: str, env: dict | None = None, timeout: float = 300):
        command = [sys.executable, "-m", "campaign", "run", str(spec), "--quiet", *options]
        return subprocess.run(
            command, env={**ENV, **(env or {})}, capture_output=True, text=True, timeout=timeout
        )

    def start(self, spec: Path, *options: str) -> subprocess.Popen:
        """`campaign run` in a new process, left running."""
        command = [sys.executable, "-m", "campaign.cli", "run", str(spec), "--quiet", *options]
        return subprocess.Popen(
            command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def records(self, spec: Path) -> int:
        """How many task records a campaign's ledger holds so far."""
        ledger = self.folder / spec.stem / "ledger"
        return sum(len(path.read_text().splitlines()) for path in ledger.glob("*.jsonl"))

    def command(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """Another `campaign` command (plan, status, query) in a new process."""
        command = [sys.executable, "-m", "campaign", *args]
        return subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=timeout)

    def results(self, spec: Path) -> xr.Dataset:
        return xr.load_dataset(self.folder / spec.stem / "results.nc")

    def failures(self, spec: Path) -> xr.Dataset:
        """The failed tasks of the results, one row each (the file's group ``failures``)."""
        return xr.load_dataset(self.folder / spec.stem / "results.nc", group="failures")

    @staticmethod
    def draws(dataset: xr.Dataset) -> np.ndarray:
        """Every task's seeded draw: what the faulty model returns when it does not fault."""
        seeds = dataset["seed"].values
        return np.vectorize(lambda seed: np.random.default_rng(int(seed)).random())(seeds)


@pytest.fixture
def runner(tmp_path) -> Runner:
    return Runner(tmp_path)


@pytest.fixture(scope="session")
def undisturbed(tmp_path_factory):
    """The results of a spec's undisturbed run: no fault (``above`` 1.0), same design and seeds;
    each design is run once per session."""
    done: dict[str, xr.Dataset] = {}

    def results(**fields) -> xr.Dataset:
        fields = {**fields, "fault": "none", "above": 1.0}
        key = spec_text("undisturbed", **fields)
        if key not in done:
            runner = Runner(tmp_path_factory.mktemp("undisturbed"))
            spec = runner.spec("undisturbed", **fields)
            ran = runner.run(spec, "--workers", "2")
            assert ran.returncode == 0, ran.stderr
            done[key] = runner.results(spec)
        return done[key]

    return results


def assert_same_results(left: xr.Dataset, right: xr.Dataset) -> None:
    """Every variable and coordinate of two results equal, value for value, with NaN where
    the other has NaN: what "bit for bit" means for a campaign's results."""
    assert sorted(left.variables) == sorted(right.variables)
    for name in left.variables:
        a, b = left[name].values, right[name].values
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), name


@pytest.fixture
def same_results():
    """`assert_same_results`, for the test modules (imported by path, not as a package)."""
    return assert_same_results


@pytest.fixture(scope="session")
def faults_cluster():
    """A cluster of two worker processes that import the models of this folder, for the tests
    whose faults neither end nor alter a worker: one cluster start for them all instead of an
    embedded cluster for each run. Yields its scheduler's address."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(FOLDER))  # a spawned worker starts with this sys.path
        patch.setenv("PYTHONPATH", ENV["PYTHONPATH"])
        cluster = dask_cluster(2)
    with cluster:
        yield cluster.scheduler_address


@pytest.fixture
def faults_models(monkeypatch) -> None:
    """This folder's models importable in the test's process too (`campaign` run in it)."""
    monkeypatch.syspath_prepend(str(FOLDER))


@pytest.fixture(scope="module")
def one_worker_cluster():
    """The address of a cluster of one worker for a test module: spawned with this folder on
    its path (and this process too, for the runs made in it), it imports this folder's
    models; one worker, so that tasks finish in the order they were sent."""
    sys.path.insert(0, str(FOLDER))
    with dask_cluster(1) as cluster:
        yield cluster.scheduler_address
    sys.path.remove(str(FOLDER))
