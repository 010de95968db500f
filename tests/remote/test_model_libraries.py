"""A library a Python model imports (installed with pip, or on PYTHONPATH) decides its numbers
as its code does: a worker whose environment finds another version of it (another venv, a
PYTHONPATH shadowing the package) is not used, and results stored under another version are
stale."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError

MODEL = """
import time

import numpy as np
import simlib_shadowed


def run(params, seed):
    time.sleep(0.01)
    value = np.random.default_rng(seed).random() * simlib_shadowed.FACTOR * params["x"]
    return {"value": float(value)}
"""
SPEC = """
name: shadowed
model: model_of_simlib:run
factors:
  x: [1, 2]
replicates: 20
seed: 5
output: out
"""


def installed(folder, version, factor):
    """simlib_shadowed in ``folder``: a distribution of ``version`` (as pip installs it into
    a site folder) when given, else a bare package (a copy on PYTHONPATH)."""
    (folder / "simlib_shadowed").mkdir(parents=True)
    (folder / "simlib_shadowed" / "__init__.py").write_text(f"FACTOR = {factor}\n")
    if version:
        info = folder / f"simlib_shadowed-{version}.dist-info"
        info.mkdir()
        metadata = f"Metadata-Version: 2.1\nName: simlib_shadowed\nVersion: {version}\n"
        (info / "METADATA").write_text(metadata)
        (info / "RECORD").write_text("simlib_shadowed/__init__.py,,\n")
        (info / "top_level.txt").write_text("simlib_shadowed\n")
    return folder


def test_a_worker_finding_another_copy_of_a_library_the_model_imports_is_not_used(
    start_cluster, remote, tmp_path, monkeypatch, capsys
):
    site = installed(tmp_path / "site", "1.0", 1.0)
    shadow = installed(tmp_path / "shadow", None, 1.25)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model_of_simlib.py").write_text(MODEL)
    for folder in (site, tmp_path / "model"):
        monkeypatch.syspath_prepend(str(folder))
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    cluster = start_cluster(workers=0, wait=False, nanny=False)
    path = [str(remote.repo), str(tmp_path / "model")]
    cluster.start_worker(env={**remote.env, "PYTHONPATH": ":".join([*path, str(site)])})
    port = remote.free_port()
    shadowed = ":".join([*path, str(shadow), str(site)])
    cluster.start_worker(env={**remote.env, "PYTHONPATH": shadowed}, port=port)
    cluster.wait_for_workers(2)

    code = main(["run", str(spec), "--quiet", "--scheduler", cluster.address])
    ran = capsys.readouterr()
    assert code == 0, ran.err + cluster.logs()
    refused = f"worker tcp://127.0.0.1:{port}: simlib_shadowed differs (code "
    assert ran.out.count(refused) == 1, ran.out + cluster.logs()
    assert ", 1.0 here) — it is not used" in ran.out
    data = xr.load_dataset(tmp_path / "out" / "results.nc")
    draws = np.vectorize(lambda seed: np.random.default_rng(int(seed)).random())(data["seed"])
    assert np.array_equal(data["value"].values, draws * data["x"].values[:, None])
    stored = json.loads((tmp_path / "out" / "campaign.json").read_text())["sources"]["engine"]
    assert stored["simlib_shadowed"] == "1.0"
    assert json.loads(data.attrs["model_libraries"])["simlib_shadowed"] == "1.0"

    metadata = next(site.glob("*.dist-info")) / "METADATA"  # upgraded where the run is
    metadata.write_text(metadata.read_text().replace("Version: 1.0", "Version: 1.1"))
    with pytest.raises(CampaignError, match=r"\(simlib_shadowed 1\.0 then, 1\.1 now\)"):
        campaign.plan(spec)


SIM = """
import sys

import numpy as np
import simlib_shadowed

value = np.random.default_rng(int(sys.argv[1])).random() * simlib_shadowed.FACTOR
print(f"value={value!r}")
"""
PROGRAM_SPEC = """
name: script
model:
  command: [{python}, sim.py, "{{seed}}"]
  inputs: [sim.py]
replicates: 4
seed: 5
output: out
"""


def test_a_worker_whose_python_finds_another_copy_of_a_library_a_python_program_imports(
    start_cluster, remote, tmp_path, monkeypatch, capsys
):
    """The same sim.py and interpreter, a PYTHONPATH shadowing the library on the worker:
    the run stops in one line and stores nothing the worker computed."""
    site = installed(tmp_path / "site", "1.0", 1.0)
    shadow = installed(tmp_path / "shadow", None, 1.25)
    (tmp_path / "sim.py").write_text(SIM)
    spec = tmp_path / "spec.yaml"
    spec.write_text(PROGRAM_SPEC.format(python=sys.executable))
    monkeypatch.setenv("PYTHONPATH", str(site))  # the program's Python, where the run is
    cluster = start_cluster(workers=0, wait=False, nanny=False)
    shadowed = ":".join([str(remote.repo), str(shadow), str(site)])
    cluster.start_worker(env={**remote.env, "PYTHONPATH": shadowed})
    cluster.wait_for_workers(1)

    code = main(["run", str(spec), "--quiet", "--scheduler", cluster.address])
    ran = capsys.readouterr()
    assert code == 2, ran.out + ran.err + cluster.logs()
    assert "runs other code of model command than this machine has" in ran.err
    named = f"({sys.executable}: module simlib_shadowed is code "
    assert named in ran.err and " there, 1.0 here): install the same program" in ran.err
    assert remote.ledger_records(tmp_path / "out") == []
    stored = json.loads((tmp_path / "out" / "campaign.json").read_text())["sources"]["programs"]
    assert stored[sys.executable]["module simlib_shadowed"] == "1.0"
