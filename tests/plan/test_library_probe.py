"""The distribution each installed module comes from is read from the distributions' own
lists of files, without checking every file exists: the answer must be the one the standard
library gives (`importlib.metadata.packages_distributions`), for every module installed."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import subprocess
import sys

from campaign.plan import library_probe


def test_modules_map_to_the_distributions_the_standard_library_names():
    expected = metadata.packages_distributions()
    found = library_probe._distributions_by_module()
    compared = 0
    for module, names in expected.items():
        if "." in module or module.startswith("__"):
            continue
        assert sorted({d.metadata["Name"] for d in found.get(module, [])}) == sorted(set(names))
        compared += 1
    assert compared > 40  # the test environment's distributions, not an empty path


def test_an_installed_library_is_its_version_a_module_on_the_path_its_code(tmp_path):
    own = tmp_path / "simlib"
    own.mkdir()
    (own / "__init__.py").write_text("RATE = 1.0\n")
    probe = [sys.executable, library_probe.__file__, "yaml", "simlib", "nowhere"]
    answer = subprocess.run(
        probe, capture_output=True, text=True, check=True, env={"PYTHONPATH": str(tmp_path)}
    )
    modules = json.loads(answer.stdout)["modules"]
    assert modules["yaml"][0] == metadata.version("PyYAML")
    assert modules["simlib"] == [
        "code " + library_probe._files_digest(str(own / "__init__.py")),
        str(own / "__init__.py"),
    ]
    assert modules["nowhere"] == ["not installed", None]
