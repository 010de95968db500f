"""A Python model's numbers depend on the numpy (scipy, pandas, Python) it computes with as on
its code: results stored under other versions are stale, as under other code, and shards
computed under other versions are not merged."""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import pytest
import yaml

import campaign
from campaign.errors import CampaignError
from campaign.plan.program_sources import command_sources
from campaign.plan.sources import compare, computing_libraries, model_engine
from campaign.spec.command_model import COMMAND_MODEL
from campaign.spec.load import load_spec

SPEC = """
name: libraries
model: mm1
params: {service_rate: 1.0, customers: 200}
factors:
  arrival_rate: [0.5, 0.7]
replicates: 2
seed: 1
output: out
"""


def stored_under(folder: Path, **versions: str) -> None:
    """campaign.json as a run under other versions of these libraries left it."""
    path = folder / "campaign.json"
    stored = json.loads(path.read_text())
    stored["sources"]["engine"].update(versions)
    path.write_text(json.dumps(stored))


def test_results_computed_with_another_numpy_are_stale(tmp_path, scheduler_address):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    engine = json.loads((tmp_path / "out" / "campaign.json").read_text())["sources"]["engine"]
    assert engine == computing_libraries() and set(engine) == {"python", "numpy", "scipy", "pandas"}
    assert json.loads(data.attrs["model_libraries"]) == engine  # the file alone says them
    now = engine["numpy"]
    stored_under(tmp_path / "out", numpy="1.26.4")  # as if numpy was upgraded since
    with pytest.raises(CampaignError) as refused:
        campaign.plan(spec)
    assert (
        "4 stored results were computed before the libraries model mm1 computes with changed "
        f"(numpy 1.26.4 then, {now} now); rerun with"
    ) in str(refused.value)
    again = campaign.run(spec, scheduler=scheduler_address, progress=False, on_change="rerun")
    assert int(again.status.count()) == 4
    assert json.loads(again.attrs["versions"])["numpy"] == now


def test_results_stored_before_versions_were_kept_are_not_refused(tmp_path, scheduler_address):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    path = tmp_path / "out" / "campaign.json"
    stored = json.loads(path.read_text())
    del stored["sources"]["engine"]
    path.write_text(json.dumps(stored))
    assert campaign.plan(spec).done == 4


def test_shards_computed_with_other_versions_are_not_merged(tmp_path, scheduler_address):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    for shard in ("1/2", "2/2"):
        campaign.run(spec, scheduler=scheduler_address, progress=False, shard=shard)
    stored_under(tmp_path / "out" / "shard-2-of-2", scipy="1.0.0")
    with pytest.raises(CampaignError, match=r"computed with scipy 1\.0\.0, the other with "):
        campaign.merge([tmp_path / "out"], tmp_path / "merged")


def test_a_metrics_parsers_libraries_are_a_programs_provenance(tmp_path, monkeypatch):
    """The libraries a program's ``{parse:}`` parser imports are recorded as a Python model's
    (campaign.json's and results.nc's model_libraries) and compared as theirs: a library
    the parser computes with, changed, makes the stored results stale. Only the parser's own
    code was digested, and a changed library kept the old numbers current."""
    library, project = tmp_path / "lib", tmp_path / "project"
    library.mkdir()
    project.mkdir()
    (library / "parser_scale.py").write_text("SCALE = 1.0\n")
    (project / "scaled_parser.py").write_text(
        "import numpy\nimport parser_scale\n\n\ndef metrics(folder):\n"
        "    return {'value': numpy.float64(parser_scale.SCALE)}\n"
    )
    (project / "sim.py").write_text("print('value=1')\n")
    monkeypatch.syspath_prepend(str(library))
    monkeypatch.syspath_prepend(str(project))
    for name in ("parser_scale", "scaled_parser"):  # imported here: gone with the test
        monkeypatch.delitem(sys.modules, name, raising=False)
    model = {
        "command": ["python3", "sim.py"],
        "inputs": ["sim.py"],
        "metrics": {"parse": "scaled_parser:metrics"},
    }
    spec = project / "spec.yaml"
    spec.write_text(yaml.safe_dump({"name": "parsed", "model": model, "replicates": 1, "seed": 1}))
    command = load_spec(spec).command
    before = command_sources(command)
    assert before.engine["numpy"] == importlib.metadata.version("numpy")
    assert before.engine["parser_scale"].startswith("code ")
    assert set(before.engine) == {"numpy", "parser_scale"}
    assert model_engine(command)["parser_scale"] == before.engine["parser_scale"]  # workers'
    (library / "parser_scale.py").write_text("SCALE = 2.0\n")
    after = command_sources(command)
    change = compare(before.stored(), after)
    assert change is not None and change.cells is None
    then, now = before.engine["parser_scale"], after.engine["parser_scale"]
    assert change.describe(COMMAND_MODEL) == (
        f"the libraries its metrics parser computes with changed (parser_scale {then} then, "
        f"{now} now)"
    )
