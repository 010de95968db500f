"""What counts as a model's code (`campaign.plan.model_code`): its package, and what that
code imports of models' libraries and of the modules beside it, read from the source."""

from __future__ import annotations

import hashlib

from campaign.plan.model_code import source_files
from campaign.plan.sources import code_files, file_digest


def test_a_models_code_is_its_whole_package(tmp_path, monkeypatch):
    folder, files = source_files("jobs")
    names = [path.relative_to(folder).as_posix() for path in files]
    assert "jobs/__init__.py" in names and "jobs/energy.py" in names
    # The libraries below campaign.models it imports (the rigid-job site and policies) too:
    # an edited policy changes the schedules of every model that replays one.
    assert "rigid/loop.py" in names and "rigid/policies/easy.py" in names
    assert "rigid/swf.py" in names and "grid/broker.py" not in names
    assert "bot/model.py" not in names and "contract.py" not in names
    grid_folder, grid_files = source_files("grid")
    grid_names = {path.relative_to(grid_folder).as_posix() for path in grid_files}
    assert {"grid/broker.py", "rigid/site.py", "rigid/swf.py"} <= grid_names
    assert "jobs/__init__.py" not in grid_names
    assert [p.relative_to(folder).as_posix() for p in source_files("mm1")[1]] == ["check.py"]
    # A user's package: every module below its top-level package; a lone module: itself.
    package = tmp_path / "mypkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("SCALE = 2\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "model.py").write_text(
        "from mypkg.helpers import SCALE\n\ndef run(params, seed):\n    return {'x': SCALE}\n"
    )
    (package / "notes.txt").write_text("not code\n")
    (package / "policy.py").write_text("from campaign.models.rigid.policies import POLICIES\n")
    (tmp_path / "lone.py").write_text("def run(params, seed):\n    return {'x': 1.0}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    folder, files = source_files("mypkg.sub.model:run")
    assert folder == tmp_path
    own = [p.relative_to(folder).as_posix() for p in files if p.is_relative_to(folder)]
    assert own == [
        "mypkg/__init__.py",
        "mypkg/helpers.py",
        "mypkg/policy.py",
        "mypkg/sub/__init__.py",
        "mypkg/sub/model.py",
    ]
    # A library of campaign.models it imports is named from the folder holding campaign.
    shared = set(code_files("mypkg.sub.model:run")) - set(own)
    assert "campaign/models/rigid/policies/easy.py" in shared
    assert all(name.startswith("campaign/models/rigid/") for name in shared)
    assert source_files("lone:run") == (tmp_path, [tmp_path / "lone.py"])
    # A module's helpers beside it, imported directly or through each other, are its code too;
    # what is installed (numpy) is not.
    (tmp_path / "helper.py").write_text("import numpy\nimport mypkg.helpers\n\nSCALE = 3\n")
    (tmp_path / "lone2.py").write_text(
        "from helper import SCALE\n\ndef run(params, seed):\n    return {'x': SCALE}\n"
    )
    folder, files = source_files("lone2:run")
    assert folder == tmp_path
    assert [p.relative_to(folder).as_posix() for p in files if p.is_relative_to(folder)] == [
        "lone2.py",
        "helper.py",
        "mypkg/__init__.py",
        "mypkg/helpers.py",
        "mypkg/policy.py",
        "mypkg/sub/__init__.py",
        "mypkg/sub/model.py",
    ]
    lone = (tmp_path / "lone.py").read_bytes()
    assert file_digest(tmp_path / "lone.py") == hashlib.blake2b(lone, digest_size=32).hexdigest()


def test_imports_are_read_from_the_source_without_running_it(tmp_path, monkeypatch):
    """A module imported by name at run time is not followed; a module beside the model that
    does not parse is its code (digested) but what it imports is not followed."""
    (tmp_path / "named.py").write_text("SCALE = 2\n")
    (tmp_path / "other.py").write_text("SCALE = 3\n")
    (tmp_path / "broken.py").write_text("import other\ndef broken(:\n")
    (tmp_path / "dynamic.py").write_text(
        "import importlib\n\ntry:\n    import broken\nexcept SyntaxError:\n    broken = None\n"
        "\n\ndef run(params, seed):\n"
        "    return {'x': float(importlib.import_module('named').SCALE)}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    folder, files = source_files("dynamic:run")
    assert folder == tmp_path
    assert [path.name for path in files] == ["dynamic.py", "broken.py"]
    assert set(code_files("dynamic:run")) == {"dynamic.py", "broken.py"}
