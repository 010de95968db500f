"""The report's provenance names what a program ran with: its version and each library and
interpreter each program runs, with their digests, as results.nc records them."""

from __future__ import annotations

import json
import textwrap

import xarray as xr

import campaign
from campaign.render.report import provenance_section

SIM = """
import sys
if sys.argv[1] == "--version":
    print("sim 4.2")
else:
    print("value=1")
"""

SPEC = """
name: versioned
model:
  command: [python3, sim.py, "{seed}"]
  inputs: [sim.py]
  version: [python3, sim.py, --version]
replicates: 1
seed: 1
output: out
"""


def test_the_provenance_names_the_program_version_and_its_libraries(tmp_path, scheduler_address):
    (tmp_path / "sim.py").write_text(textwrap.dedent(SIM))
    (tmp_path / "spec.yaml").write_text(SPEC)
    data = campaign.run(tmp_path / "spec.yaml", scheduler=scheduler_address, progress=False)
    section = provenance_section(data)
    assert "<tr><th>program version</th><td>sim 4.2</td></tr>" in section
    runs = json.loads(data.attrs["program_files"])["python3"]
    assert runs  # the interpreter's libraries, by name
    for name, digest in runs.items():
        assert f"<tr><th>python3 runs {name}</th><td>{digest}</td></tr>" in section


def test_the_provenance_names_each_input_of_a_program_with_its_digest():
    """The simulator's binary and platform file, placed with the inputs, are named with their
    digests, as results.nc's model_code_files lists them; the report gave only the digest of
    them all together, so a paper could not say which platform file its numbers came from."""
    files = {"simgrid/masterworker": "ab12", "simgrid/platform.xml": "cd34", "env OMP": "ef56"}
    attrs = {"model": "command", "model_code_digest": "b:99", "model_code_files": json.dumps(files)}
    section = provenance_section(xr.Dataset(attrs=attrs))
    for name, digest in files.items():
        assert f"<tr><th>model code file {name}</th><td>{digest}</td></tr>" in section
    # a Python model's modules (46 of the built-in jobs model) are said by their digest alone
    section = provenance_section(xr.Dataset(attrs={**attrs, "model": "jobs"}))
    assert "model code file" not in section
    assert "<tr><th>model code digest</th><td>b:99</td></tr>" in section
