"""One Python session calls campaign many times while its user edits files between the calls:
each call runs, checks and digests the files as they are now, never what an earlier call of
the same process loaded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

import campaign
from tests.conftest import dask_cluster

FIRST = """
def run(params, seed):
    return {"x": float(params["a"])}


def check(params):
    if params["a"] > 5:
        raise ValueError("a: at most 5")


run.check = check
"""

WIDER = FIRST.replace("> 5", "> 50").replace("at most 5", "at most 50")

READS_DATA = """
from pathlib import Path


def run(params, seed):
    return {"x": float(params["a"]) * float(Path(params["data"]).read_text())}


run.inputs = lambda params: [params["data"]]
"""


@pytest.fixture
def session(tmp_path, monkeypatch):
    """A session working in the test's folder, whose model module ``edited_model`` (written
    there) this process and the embedded cluster's workers import."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    paths = [str(tmp_path), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, paths)))
    monkeypatch.delitem(sys.modules, "edited_model", raising=False)
    yield tmp_path
    sys.modules.pop("edited_model", None)


def write_model(folder: Path, text: str) -> None:
    path = folder / "edited_model.py"
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    while path.stat().st_mtime_ns == before:  # a coarse clock: the edit must show
        time.sleep(0.01)
        path.write_text(text)


def spec(levels: list[int], **params: object) -> dict:
    return {
        "name": "edited",
        "model": "edited_model:run",
        "params": params,
        "factors": {"a": levels},
        "replicates": 1,
        "seed": 3,
        "output": "out",
    }


def test_a_model_edited_between_two_calls_checks_params_as_edited(session):
    write_model(session, FIRST)
    assert len(campaign.plan(spec([1, 2])).to_run) == 2
    with pytest.raises(campaign.CampaignError, match="a: at most 5"):
        campaign.plan(spec([1, 6]))
    write_model(session, WIDER)  # the check now allows 6: the edited check decides
    assert len(campaign.plan(spec([1, 6])).to_run) == 2


def test_an_input_a_model_names_once_edited_is_digested_at_the_next_run(session):
    """The model edited to read a file, and say so: a run of the same session digests that
    file, so that its change is refused later rather than hidden behind stored results."""
    (session / "data.txt").write_text("1.0\n")
    write_model(session, FIRST)
    first = campaign.run(spec([1, 2], data="data.txt"), workers=1, progress=False)
    assert first["x"].values.ravel().tolist() == [1.0, 2.0]
    write_model(session, READS_DATA)
    again = campaign.run(
        spec([1, 2], data="data.txt"), workers=1, progress=False, on_change="rerun"
    )
    assert again["x"].values.ravel().tolist() == [1.0, 2.0]
    assert str(session / "data.txt") in again.attrs["input_digests"]
    (session / "data.txt").write_text("5.0\n")
    with pytest.raises(campaign.CampaignError, match="before input file .*data.txt changed"):
        campaign.run(spec([1, 2], data="data.txt"), workers=1, progress=False)
    third = campaign.run(
        spec([1, 2], data="data.txt"), workers=1, progress=False, on_change="rerun"
    )
    assert third["x"].values.ravel().tolist() == [5.0, 10.0]


PARSER = """
def metrics(folder):
    return {"y": SCALE * float((folder / "stdout").read_text())}


SCALE = 1.0
"""


def test_a_parser_edited_between_two_runs_on_one_cluster_runs_as_edited(session):
    """A program's ``parse:`` parser runs on the workers, which a long-lived cluster keeps
    between the runs of a session: an edited parser is imported afresh there, so that the
    digest its results are stored under is that of the code that computed them."""
    (session / "edited_parser.py").write_text(PARSER)
    program = {
        "name": "parsed",
        "model": {
            "command": ["/bin/sh", "-c", "echo {x}"],
            "metrics": {"parse": "edited_parser:metrics"},
        },
        "factors": {"x": [1, 2]},
        "replicates": 1,
        "seed": 3,
    }
    try:
        with dask_cluster(1) as cluster:
            address = cluster.scheduler_address
            first = campaign.run({**program, "output": "one"}, scheduler=address, progress=False)
            assert first["y"].values.ravel().tolist() == [1.0, 2.0]
            time.sleep(0.02)  # a coarse clock: the edit must show
            (session / "edited_parser.py").write_text(PARSER.replace("1.0", "100.0"))
            again = campaign.run({**program, "output": "two"}, scheduler=address, progress=False)
            assert again["y"].values.ravel().tolist() == [100.0, 200.0]
    finally:
        sys.modules.pop("edited_parser", None)


def test_a_model_edited_between_two_calls_is_described_as_edited(session, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as Python runs by default
    write_model(session, FIRST + 'run.metrics = {"x": {"units": "s", "long_name": "the x"}}\n')
    assert "x  [s]: the x" in campaign.models("edited_model:run")
    write_model(session, FIRST + 'run.metrics = {"x": {"units": "h", "long_name": "the x"}}\n')
    assert "x  [h]: the x" in campaign.models("edited_model:run")
    # an edit of the same size within the same second: the file's modification time as it
    # was, which Python's cached bytecode is checked against (with its size): the old code
    # was imported again from it
    path = session / "edited_model.py"
    stat = path.stat()
    path.write_text(FIRST + 'run.metrics = {"x": {"units": "d", "long_name": "the x"}}\n')
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "x  [d]: the x" in campaign.models("edited_model:run")


def test_a_function_of_the_main_module_leaves_the_main_module_in_place(session, monkeypatch):
    """A notebook's or a script's own module cannot be imported again: taken out of
    ``sys.modules`` to be, the session lost it and the model was "not found"."""
    main = sys.modules["__main__"]
    monkeypatch.setattr(main, "edited_main_run", lambda params, seed: {"x": 1.0}, raising=False)
    named = {**spec([1, 2]), "model": "__main__:edited_main_run"}
    assert len(campaign.plan(named).to_run) == 2
    assert len(campaign.plan(named).to_run) == 2
    assert sys.modules["__main__"] is main


ONCE = r"""
#include <Python.h>
static int loaded = 0;
static struct PyModuleDef once = {PyModuleDef_HEAD_INIT, "once", NULL, 0, NULL};
PyMODINIT_FUNC PyInit_once(void) {
    if (loaded++) {
        PyErr_SetString(PyExc_ImportError, "may only be initialized once per process");
        return NULL;
    }
    PyObject *module = PyModule_Create(&once);
    PyModule_AddIntConstant(module, "SCALE", 3);
    return module;
}
"""


def test_a_model_package_with_a_compiled_module_is_imported_afresh_around_it(session):
    """A compiled module loads once per process (PyO3's refuse a second time): an edited
    model beside it is imported afresh, the compiled module kept."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    package = session / "edited_pkg"
    package.mkdir()
    (package / "once.c").write_text(ONCE)
    target = package / f"once{sysconfig.get_config_var('EXT_SUFFIX')}"
    include = sysconfig.get_paths()["include"]
    command = [cc, "-shared", "-fPIC", f"-I{include}", "-o", str(target), str(package / "once.c")]
    subprocess.run(command, check=True)
    (package / "__init__.py").write_text("")
    model = package / "model.py"
    model.write_text(FIRST.replace("float(params", "once.SCALE * float(params"))
    model.write_text("from edited_pkg import once\n" + model.read_text())
    named = {**spec([1, 2]), "model": "edited_pkg.model:run"}
    try:
        assert len(campaign.plan(named).to_run) == 2
        time.sleep(0.02)  # a coarse clock: the edit must show
        model.write_text(model.read_text().replace("> 5", "> 50"))
        assert len(campaign.plan({**named, "factors": {"a": [1, 6]}}).to_run) == 2
    finally:
        for name in [n for n in sys.modules if n.startswith("edited_pkg")]:
            del sys.modules[name]
