"""Shared test fixtures: the tests' workloads folder, spec files, a Dask cluster shared by the
session (a real scheduler and two worker processes, started when a test first asks for it)."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from campaign.cluster.open import EMBEDDED_DASK_CONFIG

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = Path(__file__).resolve().parent.parent

# Tests send Ctrl-C to the runs they start and to commands in this process. A suite started
# where SIGINT is ignored (a shell's background job, nohup: its processes inherit that) takes
# Ctrl-C back, as a program run in a terminal has it, and so do the processes it starts.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# The longest test files (by `--durations` of a whole run) start first: scripts/test.sh hands
# files to its processes in collection order (xdist's loadfile, --no-loadscope-reorder),
# so that they end together instead of one waiting on another's last long file.
LONGEST_FIRST = (
    "tests/test_readme_outputs.py",
    "tests/rigid/test_compression_kernel.py",
    "tests/faults/test_recovery.py",
    "tests/faults/test_workers.py",
    "tests/faults/test_no_room.py",
    "tests/faults/test_damaged_trace.py",
    "tests/results/test_metrics.py",
    "tests/remote/test_faults.py",
    "tests/execute/test_command_faults.py",
    "tests/faults/test_memory.py",
    "tests/faults/test_reproducibility.py",
    "tests/store/test_merge.py",
    "tests/faults/test_same_failure.py",
    "tests/faults/test_batching.py",
    "tests/faults/test_crashes.py",
    "tests/execute/test_kill_resume.py",
    "tests/store/test_integrity.py",
    "tests/remote/test_engine_identity.py",
    "tests/faults/test_model_faults.py",
    "tests/remote/test_command_remote.py",
    "tests/plan/test_precision.py",
    "tests/cli/test_user_models.py",
    "tests/docs/test_site.py",
    "tests/faults/test_damaged_ledger.py",
    "tests/plan/test_sources.py",
    "tests/analysis/test_pooling.py",
    "tests/analysis/test_breakdown.py",
    "tests/pipelines/test_rewritten_results.py",
    "tests/remote/test_program_libraries.py",
    "tests/render/test_report_page.py",
)


def pytest_collection_modifyitems(items):
    """The files of LONGEST_FIRST first, in its order; the others after, as collected."""
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


def load_script(name: str, repository: Path = REPOSITORY):
    """A script of ``scripts/`` (not a package) as a module, e.g. ``compare_results``."""
    module_spec = importlib.util.spec_from_file_location(
        name, repository / "scripts" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


"""Slices of real archive traces, under the traces' own names (scripts/make_test_slices.py)."""


MM1_TWO_LOADS = """
name: two-loads
model: mm1
params: {service_rate: 1.0, customers: 500}
factors:
  arrival_rate: [0.5, 0.8]
replicates: 4
seed: 3
output: out
"""
"""A small finished-in-seconds campaign of the M/M/1 check model."""

MM1_PRECISION = """
name: precision
model: mm1
params: {customers: 200}
factors:
  arrival_rate: [0.2, 0.4, 0.6, 0.8, 0.9]
precision: {metrics: [mean_wait], half_width: 0.25, min_replicates: 3, max_replicates: 12}
seed: 3
output: out
"""
"""The same with a precision target: cells run 3 to 12 replicates."""


def run_with_model(folder: Path, spec: Path, **env: str | None) -> subprocess.CompletedProcess:
    """`campaign run SPEC --workers 2 --quiet` in a process (and embedded cluster) that can
    import the models in ``folder``, its environment with ``env`` (None: left out)."""
    given = {**os.environ, **env}
    environment = {name: value for name, value in given.items() if value is not None}
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(folder), os.environ.get("PYTHONPATH")])
    )
    command = [sys.executable, "-m", "campaign.cli", "run", str(spec), "--workers", "2", "--quiet"]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)


def campaign_command(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """`campaign ARGS` in a process of its own, working in ``folder``: it imports this
    checkout's campaign and the modules in ``folder`` (a user's models)."""
    paths = [str(folder), str(DATA.parents[1]), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    return subprocess.run(
        [sys.executable, "-m", "campaign", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def ledger_keys(output: Path) -> set[str]:
    """The keys of the tasks an output folder's ledger holds, read as a run writes it."""
    keys = set()
    for path in (output / "ledger").glob("*.jsonl"):
        keys.update(json.loads(line)["key"] for line in path.read_text().splitlines() if line)
    return keys


def run_and_kill(command: list[str], output: Path, after: int) -> set[str]:
    """Start `campaign run` (``command``), SIGKILL its whole process group once ``after``
    results are stored in ``output``; the keys stored by then."""
    process = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 180  # against a hang of the test, not a time limit
    try:
        while len(ledger_keys(output)) < after:
            assert process.poll() is None, "campaign run ended before it could be killed"
            assert time.monotonic() < deadline, "campaign run made no progress"
            time.sleep(0.02)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return ledger_keys(output)


def error_line(stderr: str) -> str:
    """The message of a command's one error line (``campaign: error: MESSAGE``), no
    traceback before it."""
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith("campaign: error: "), stderr
    return stderr[len("campaign: error: ") : -1]


def read_notes(folder: Path, metric: str) -> tuple[list[str], list[str]]:
    """The notes on results.nc that `campaign query FOLDER` prints under its table and those
    at the top of the page `campaign report FOLDER --metric METRIC` writes (into a folder
    beside ``folder``): the same lines on both, or none."""
    import contextlib
    import html
    import io
    import re

    from campaign.cli.main import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["query", str(folder), "--metric", metric]) == 0
    query = [line for line in printed.getvalue().splitlines() if line.startswith("results.nc ")]
    page_folder = folder.parent / f"{folder.name}-report"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["report", str(folder), "--metric", metric, "--out", str(page_folder)]) == 0
    page = (page_folder / "report.html").read_text()
    top = page.split('<h2 id="metrics">')[0]
    return query, [html.unescape(note) for note in re.findall('<p class="warning">(.*)</p>', top)]


class HTMLCells(HTMLParser):
    """The text of an HTML table's cells, row by row (``rows``), and of its paragraphs
    (``notes``), as the renderer writes them: feed it the page, read what a reader sees."""

    def __init__(self):
        super().__init__()
        self.rows, self.notes, self.inside = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th", "p"):
            self.inside = tag

    def handle_endtag(self, tag):
        self.inside = None

    def handle_data(self, data):
        if self.inside in ("td", "th"):
            self.rows[-1].append(data)
        elif self.inside == "p":
            self.notes.append(data)


@pytest.fixture(autouse=True)
def close_figures():
    """Close the figures a test left open: functions of the Python API return pyplot figures
    (a notebook shows them) that stay open until closed, and a test process makes hundreds."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


@pytest.fixture
def workloads(monkeypatch) -> Path:
    """The workloads folder of a test: tests/data, whatever CAMPAIGN_WORKLOADS says outside, so
    the numbers a test expects are those of the slices it ships with."""
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(DATA))
    return DATA


@pytest.fixture
def write_spec(tmp_path):
    """Write a spec (dedented) into the test's folder and return its path."""

    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


QUIET_DIAGNOSTICS = {
    **EMBEDDED_DASK_CONFIG,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",
}
"""Dask's own diagnostics, less often in the tests' shared clusters: the event-loop tick once
a second as in the embedded cluster, and no workers' stack sampling every 10 ms nor system
monitor every 500 ms (with those, an idle cluster of two workers took a tenth of a core, and
these clusters wait idle most of the session). No campaign behaviour depends on them (the
nannies' memory monitor, which ends a worker over its limit, keeps its default)."""


def dask_cluster(workers: int):
    """A Dask cluster of ``workers`` single-thread worker processes on the loopback, its
    dashboard on a free port: spawned workers take this process's sys.path and environment,
    so set those first for models or programs they must find."""
    import dask
    from distributed import LocalCluster

    with dask.config.set(QUIET_DIAGNOSTICS):  # the nannies hand it to their workers
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        )


@pytest.fixture(scope="session")
def scheduler_address():
    with dask_cluster(2) as cluster:
        yield cluster.scheduler_address


PAPER_SPEC = """
name: paper
model: mm1
params: {customers: 500, fail_above: 40.0}
factors:
  arrival_rate: [0.05, 0.3, 0.9]
  service_rate: {fast: 2.0, slow: 1.0}
paired: [service_rate]
replicates: 6
seed: 8
output: out
"""


@pytest.fixture(scope="session")
def run_campaign(tmp_path_factory, scheduler_address):
    """Run a spec, given as text, on the shared cluster in a folder of its own; returns the
    output folder (the spec's ``output: out``). For the fixtures of finished campaigns."""
    import campaign

    def run(name: str, text: str) -> Path:
        folder = tmp_path_factory.mktemp(name)
        (folder / "spec.yaml").write_text(textwrap.dedent(text))
        campaign.run(folder / "spec.yaml", scheduler=scheduler_address, progress=False)
        return folder / "out"

    return run


def finished_campaign(name: str, text: str):
    """A test module's fixture (``results = finished_campaign("usage", SPEC)``): the output
    folder of the campaign of spec ``text``, run once for the module by `run_campaign`."""

    @pytest.fixture(scope="module")
    def results(run_campaign) -> Path:
        return run_campaign(name, text)

    return results


@pytest.fixture(scope="session")
def paper_results(run_campaign):
    """The output folder of an M/M/1 campaign whose waits span decades (arrival rates 0.05 to
    0.9) and where this seed makes 4 tasks fail (a first interarrival time above 40 s)."""
    return run_campaign("paper", PAPER_SPEC)


@pytest.fixture(scope="session")
def demo_results(tmp_path_factory, scheduler_address):
    """The README's demo (specs/demo.yaml) made small, 400 jobs and 4 replicates, run by
    `campaign run`: its output folder, and what the command printed (``run-output.txt``
    beside it)."""
    import contextlib
    import io

    import yaml

    from campaign.cli.main import main

    folder = tmp_path_factory.mktemp("demo")
    spec = yaml.safe_load((Path(__file__).resolve().parents[1] / "specs" / "demo.yaml").read_text())
    spec["params"]["jobs"] = 400
    spec.update(replicates=4, output="out")
    path = folder / "demo.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["run", str(path), "--scheduler", scheduler_address, "--quiet"])
    assert code == 0, printed.getvalue()
    (folder / "run-output.txt").write_text(printed.getvalue())
    return folder / "out"


PYTHON_API_DOC = REPOSITORY / "docs" / "python-api.md"


@pytest.fixture(scope="session")
def python_api_notebook(tmp_path_factory):
    """docs/python-api.md's code blocks run in order in a fresh folder, as in a notebook: the
    folder (``outputs/demo-small`` in it: a small demo whose results keep the sample ``wait``
    and the breakdown ``job_class``), the namespace, and what the blocks printed."""
    import contextlib
    import io
    import re

    folder = tmp_path_factory.mktemp("notebook")
    namespace: dict = {}
    printed = io.StringIO()
    blocks = re.findall(r"```python\n(.*?)```", PYTHON_API_DOC.read_text(), flags=re.DOTALL)
    with contextlib.chdir(folder), contextlib.redirect_stdout(printed):
        for block in blocks:
            exec(compile(block, str(PYTHON_API_DOC), "exec"), namespace)
    return folder, namespace, printed.getvalue()
