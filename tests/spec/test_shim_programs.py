"""A program found as a version manager's shim (pyenv's ``python3``) is a script that starts
the version the manager's settings choose where it runs; its digest does not say which, and
`validate` says so beside the program."""

from __future__ import annotations

import os

from campaign.spec.describe import describe_spec
from campaign.spec.load import load_spec

SPEC = """
name: shimmed
model:
  command: [campaign-shim-python, sim.py, "{seed}"]
  inputs: [sim.py]
replicates: 1
seed: 1
"""


def test_a_program_that_is_a_shim_is_named_as_one(tmp_path, monkeypatch):
    shims = tmp_path / "pyenv" / "shims"
    shims.mkdir(parents=True)
    shim = shims / "campaign-shim-python"
    shim.write_text('#!/usr/bin/env bash\nexec python3 "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    (tmp_path / "sim.py").write_text("print('value=1')\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    assert (
        f"\n  program: campaign-shim-python (on PATH here: {shim}; a version manager's shim: "
        "the version it starts is not digested, name the interpreter itself, e.g. the path "
        "`pyenv which python3` prints)\n"
    ) in describe_spec(load_spec(tmp_path / "spec.yaml"))
