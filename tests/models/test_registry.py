"""Models are found through the ``campaign.models`` entry points; the engine knows none."""

from __future__ import annotations

import ast
import importlib.util
import sys
import textwrap
import time
import tomllib
from pathlib import Path

import xarray as xr

from campaign.cli.main import main
from campaign.models import BUILTIN, CHECK_MODELS, GROUP, installed, load_model, registered
from tests.conftest import campaign_command

REPO = Path(__file__).resolve().parents[2]
ENGINE_MAY_IMPORT = {"campaign.models", "campaign.models.contract", "campaign.models.describe"}


def test_the_built_in_models_are_this_package_entry_points():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["entry-points"][GROUP] == BUILTIN
    assert set(BUILTIN) <= set(registered())


def engine_sources() -> list[Path]:
    return [
        path
        for path in (REPO / "campaign").rglob("*.py")
        if "models" not in path.relative_to(REPO / "campaign").parts
    ]


def is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # its parent is a module, not a package
        return False


def imported_modules(path: Path) -> set[str]:
    """The modules a source file imports (``from package import module`` included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                if name.startswith("campaign.") and is_module(name):
                    found.add(name)
    return found


def test_the_engine_imports_no_model_module_and_names_no_model():
    """Outside campaign/models, only the registry and the contract are imported, and no
    string is a model's name."""
    imported = {}
    models = registered()
    for path in engine_sources():
        for name in imported_modules(path):
            if name.startswith("campaign.models"):
                imported.setdefault(name, path.name)
        named = [
            node.value
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and node.value in models
        ]
        assert not named, (path.name, named)
    assert set(imported) <= ENGINE_MAY_IMPORT, imported
    assert {"campaign.models", "campaign.models.describe"} <= set(imported)  # the check sees them


MODEL_SOURCE = '''
"""A third party's model: a fair coin flipped ``flips`` times."""

import numpy as np

from campaign.models.contract import Command, Integer, Model, Number, Param, Params

PARAMS = Params(
    "coin",
    Param("flips", Integer(1), 100, "flips per run"),
    Param("bias", Number(0, 1), 0.5, "probability of heads"),
)


def run(params, seed):
    p = PARAMS.values(params)
    heads = np.random.default_rng(seed).random(p["flips"]) < p["bias"]
    return {"heads": float(heads.sum()), "first": float(heads[0])}


def hello(argv):
    print("hello from coin:", " ".join(argv))
    return 0


MODEL = Model(
    name="coin",
    run=run,
    summary="a coin flipped many times",
    params=PARAMS,
    metrics={
        "heads": {"units": "1", "long_name": "number of heads"},
        "first": {"units": "1", "long_name": "1 when the first flip is heads"},
    },
    headline=("heads",),
    commands=(Command("coin-hello", "say hello", hello),),
    example={"flips": 10},
)
'''

SPEC = """
name: coins
model: coin
params: {flips: 50}
factors:
  bias: [0.25, 0.75]
replicates: 3
seed: 7
output: out
"""


def install_package(folder: Path) -> None:
    """A package and its metadata, as `pip install` leaves them, in ``folder``."""
    (folder / "coin_model").mkdir()
    (folder / "coin_model" / "__init__.py").write_text(MODEL_SOURCE)
    info = folder / "coin_model-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: coin-model\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ncoin = coin_model:MODEL\n")


def test_an_installed_package_model_runs_by_its_name(tmp_path):
    install_package(tmp_path)
    (tmp_path / "coins.yaml").write_text(textwrap.dedent(SPEC))
    done = campaign_command(tmp_path, "run", "coins.yaml", "--workers", "1", "--quiet")
    assert done.returncode == 0, done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        from coin_model import run

        with xr.open_dataset(tmp_path / "out" / "results.nc") as results:
            assert results.attrs["model"] == "coin"
            assert results.attrs["model_reference"] == "coin_model:MODEL"
            assert results.attrs["headline_metrics"] == "heads"
            assert results["heads"].attrs == {"units": "1", "long_name": "number of heads"}
            for bias in (0.25, 0.75):
                for replicate in range(3):
                    cell = results.sel(bias=bias, replicate=replicate)
                    expected = run({"flips": 50, "bias": bias}, int(cell["seed"]))
                    assert float(cell["heads"]) == expected["heads"]
    finally:
        sys.path.remove(str(tmp_path))

    listed = campaign_command(tmp_path, "models")
    assert "coin         a coin flipped many times  (coin_model:MODEL)" in listed.stdout
    assert "command: campaign coin-hello: say hello" in listed.stdout
    shown = campaign_command(tmp_path, "models", "show", "coin")
    assert "  bias, default 0.5: a number in [0, 1]\n      probability of heads" in shown.stdout
    assert "  heads  [1]: number of heads" in shown.stdout
    hello = campaign_command(tmp_path, "coin-hello", "a", "b")
    assert (hello.returncode, hello.stdout) == (0, "hello from coin: a b\n")

    (tmp_path / "coins.yaml").write_text(textwrap.dedent(SPEC).replace("flips: 50", "flips: 0"))
    refused = campaign_command(tmp_path, "validate", "coins.yaml")
    assert refused.returncode == 2
    assert refused.stderr == (
        "campaign: error: coins.yaml: params (cell bias=0.25): "
        "parameter 'flips' must be an integer >= 1, got 0\n"
    )


def test_a_plain_function_is_a_model_without_a_declaration(tmp_path, monkeypatch):
    (tmp_path / "plain_model.py").write_text("def run(params, seed):\n    return {'x': 1.0}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    model = load_model("plain_model:run")
    assert (model.name, model.metrics, model.checks, model.params) == (
        "plain_model:run",
        {},
        False,
        None,
    )
    assert model({}, 1) == {"x": 1.0}


def test_models_lists_and_shows_the_built_in_models(capsys):
    assert main(["models"]) == 0
    listed = capsys.readouterr().out
    for name in BUILTIN:  # the check models on a line of their own, not as the domain's
        assert (f"\n{name} " in f"\n{listed}") == (name not in CHECK_MODELS)
    assert listed.endswith(
        "(check models with known answers, for testing and benchmarking the engine: mm1, busy, "
        "normal; `campaign models show NAME` describes one)\n"
    )
    assert main(["models", "show", "mm1"]) == 0
    assert capsys.readouterr().out == textwrap.dedent(
        """\
        model mm1: check model: waiting times of a stationary M/M/1 queue, with a closed-form mean

        params:
          arrival_rate [1/s], required: a number > 0
              arrival rate lambda, < service_rate
          service_rate [1/s], default 1: a number > 0
              service rate mu
          customers, default 10000: an integer >= 1
              customers simulated per run
          fail_above [s], default never fail: a number
              fail a run whose first interarrival time exceeds this (tests failure records)

        metrics (units: long name):
          mean_wait    [s]: mean waiting time in queue
          max_wait     [s]: maximum waiting time in queue
          utilization  [1]: total service time / total interarrival time

        headline metrics (rankings and reports): mean_wait

        example params: {arrival_rate: 0.5, customers: 1000}
        """
    )
    assert main(["models", "show", "nosuch"]) == 2
    assert "unknown model 'nosuch': use a registered model (" in capsys.readouterr().err


def test_a_model_declared_command_runs_through_the_cli(workloads, capsys):
    assert main(["workloads", "list"]) == 0
    assert "KTH-SP2-1996-2.1-cln.swf.gz\t" in capsys.readouterr().out
    assert main(["--debug", "workloads", "show", "missing.swf"]) == 1
    assert "not found" in capsys.readouterr().err


def test_the_registry_is_read_again_only_when_the_installed_packages_change(tmp_path, monkeypatch):
    """A scan of the installed distributions per call cost milliseconds, several times a
    command; a package installed or edited during a session is still found."""
    scans = []
    scan = installed.entry_points
    monkeypatch.setattr(installed, "entry_points", lambda **kw: scans.append(1) or scan(**kw))
    registered()
    assert "coin" not in registered() and len(scans) <= 1
    install_package(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # a folder on sys.path
    assert registered()["coin"] == "coin_model:MODEL"
    info = tmp_path / "dice_model-1.0.dist-info"  # a package installed in it
    info.mkdir()
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ndice = dice_model:MODEL\n")
    assert registered()["dice"] == "dice_model:MODEL"
    time.sleep(0.01)  # an entry point edited in place
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ndice = dice_model.v2:MODEL\n")
    assert registered()["dice"] == "dice_model.v2:MODEL"
    count = len(scans)
    assert registered() == registered() and len(scans) == count
