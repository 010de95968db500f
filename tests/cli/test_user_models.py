"""A user's own model: found on PYTHONPATH, and every way it can fail to load is one line."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from campaign.cli.main import main

SPEC = """
name: own
model: "{model}"
params: {{scale: 2.0}}
factors:
  shift: [0, 10]
replicates: 3
seed: 5
output: out
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """Write a module with a fresh name into a folder on sys.path; return its name."""
    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))

    def write(source: str) -> str:
        name = f"user_model_{uuid.uuid4().hex[:8]}"
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        return name

    return write


def validate(tmp_path, model: str) -> int:
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent(SPEC.format(model=model)))
    return main(["validate", str(spec)])


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("def run(params, seed):\n    return {'x': 1.0\n", "SyntaxError: '{' was never closed ("),
        ("undefined_name\n", "NameError: name 'undefined_name' is not defined"),
        ("raise RuntimeError('no licence server')\n", "RuntimeError: no licence server"),
        ("import sys\nsys.exit(3)\n", "SystemExit: sys.exit(3) called"),
        ("import no_such_dep\n", "ModuleNotFoundError: No module named 'no_such_dep'"),
    ],
)
def test_a_model_module_that_fails_at_import_is_one_line(
    tmp_path, user_module, capsys, source, error
):
    name = user_module(source)
    assert validate(tmp_path, f"{name}:run") == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"campaign: error: {tmp_path / 'spec.yaml'}: model: model '{name}:run': "
        f"importing module '{name}' failed: {error}"
    )
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_missing_model_module_says_where_it_must_be_importable(tmp_path, capsys):
    assert validate(tmp_path, "no_such_user_module:run") == 2
    err = capsys.readouterr().err
    assert "cannot import module 'no_such_user_module' (No module named" in err
    assert "on PYTHONPATH or an installed package" in err and err.count("\n") == 1


@pytest.mark.parametrize("model", [":run", "module:", ".relative:run", "a..b:run", "m:run:x"])
def test_a_malformed_model_reference_is_refused(tmp_path, capsys, model):
    assert validate(tmp_path, model) == 2
    err = capsys.readouterr().err
    assert f"unknown model {model!r}: use a registered model (" in err
    assert "or 'package.module:function'" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("raise_it", "error"),
    [
        ("raise TypeError('bad type')", "TypeError: bad type"),
        ("params['missing']", "KeyError: 'missing'"),
        ("raise SystemExit(4)", "SystemExit: sys.exit(4) called"),
    ],
)
def test_a_check_that_raises_other_than_valueerror_is_one_line(
    tmp_path, user_module, capsys, raise_it, error
):
    name = user_module(
        f"def run(params, seed):\n    return {{'x': 1.0}}\n"
        f"def check(params):\n    {raise_it}\nrun.check = check\n"
    )
    assert validate(tmp_path, f"{name}:run") == 2
    err = capsys.readouterr().err
    assert err == (
        f"campaign: error: {tmp_path / 'spec.yaml'}: params (cell shift=0): "
        f"model '{name}:run': check() failed: {error}\n"
    )


def test_a_check_valueerror_still_names_the_parameter(tmp_path, user_module, capsys):
    name = user_module(readme_block("## A function of your own", "python"))
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent(SPEC.format(model=f"{name}:run")).replace("2.0", "-1.0"))
    assert main(["validate", str(spec)]) == 2
    assert capsys.readouterr().err == (
        f"campaign: error: {spec}: params (cell shift=0): scale: -1.0 is not allowed; "
        "use a number > 0\n"
    )


def test_the_documented_own_model_runs_from_its_folder_on_the_embedded_cluster(tmp_path):
    """The reference's own model and spec, verbatim: a module in a folder of one's own, that folder
    on PYTHONPATH; the embedded cluster's worker processes import it too."""
    folder = tmp_path / "mymodels"
    folder.mkdir()
    (folder / "noisy.py").write_text(readme_block("## A function of your own", "python"))
    spec = tmp_path / "noisy.yaml"
    spec.write_text(readme_block("## A function of your own", "yaml"))
    path = [str(folder), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    done = subprocess.run(
        [sys.executable, "-m", "campaign", "run", str(spec), "--workers", "2", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "6 tasks ok, 0 failed, 0 missing" in done.stdout
    dataset = xr.load_dataset(tmp_path / "outputs" / "noisy" / "results.nc")
    expected = [
        [shift + 2.0 * np.random.default_rng(int(seed)).random() for seed in row]
        for shift, row in zip([0, 10], dataset["seed"].values)
    ]
    assert np.array_equal(dataset["value"].values, np.array(expected))
    assert dataset.attrs["model"] == "noisy:run"


def readme_block(after: str, language: str, page: str = "docs/reference/python-models.md") -> str:
    """The first ```language block of a documentation page after the line starting with
    ``after``."""
    text = (Path(__file__).resolve().parents[2] / page).read_text()
    rest = text[text.index(after) :]
    start = rest.index(f"```{language}\n") + len(f"```{language}\n")
    return rest[start : rest.index("```", start)]


def test_the_documented_python_example_runs_as_a_script(tmp_path):
    """The Python API page's script, verbatim, on the embedded cluster (the demo spec, made
    small)."""
    (tmp_path / "demo.py").write_text(
        readme_block("## In a script", "{code-block} python", "docs/python-api.md")
    )
    demo = (Path(__file__).resolve().parents[2] / "specs" / "demo.yaml").read_text()
    small = demo.replace("jobs: 3000", "jobs: 100").replace("replicates: 20", "replicates: 2")
    assert "jobs: 100\n" in small and "replicates: 2\n" in small
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "demo.yaml").write_text(small)
    done = subprocess.run(
        [sys.executable, "demo.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    dataset = xr.load_dataset(tmp_path / "outputs" / "demo" / "results.nc")
    means = dataset["mean_wait_mean"].sel(load=1.5).values
    assert "<xarray.DataArray 'mean_wait_mean' (scheduler: 3)>" in done.stdout
    assert np.array_equal(means, dataset["mean_wait"].sel(load=1.5).values.mean(axis=-1))
    assert str(means[0])[:6] in done.stdout.replace(" ", "")
