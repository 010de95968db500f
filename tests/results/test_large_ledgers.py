"""results.nc from a ledger of many records: read a chunk of records at a time into a task
table of a few bytes a task (the same table as from the records loaded whole, whatever the
order of duplicates), and written in a few tens of bytes a task for one metric."""

from __future__ import annotations

import random
import tracemalloc

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.design.tasks import Design
from campaign.plan.plan import make_plan
from campaign.results.ledger_table import read_status, read_table, records_table
from campaign.results.resource_group import table_costs, task_costs
from campaign.results.status import STATUS_FAILED, STATUS_MISSING, STATUS_OK
from campaign.results.writing import write_results
from campaign.spec.load import load_spec
from campaign.store import scan
from campaign.store.ledger import Ledger

SPEC = """
name: many
model: busy
params: {{duration_ms: 0}}
factors:
  tag: [{levels}]
replicates: {replicates}
seed: 1
output: out
{metrics}
"""


def write_spec(folder, cells: int, replicates: int, metrics: str = ""):
    levels = ", ".join(f"t{i}" for i in range(cells))
    text = SPEC.format(levels=levels, replicates=replicates, metrics=metrics)
    (folder / "spec.yaml").write_text(text)
    return load_spec(folder / "spec.yaml")


def record(design: Design, index: int, ok: bool = True, **metrics: float) -> dict:
    """A record as a run stores it."""
    task = design.task(index)
    found = {
        "key": task.key,
        "status": "ok" if ok else "failed",
        "cell": design.cell_label(task.cell),
        "replicate": task.replicate,
        "run": "r",
        "elapsed": 0.001 * (index % 5),
        "peak_memory": 7e7 + index % 3,
        "seed": task.seed,
        "attempts": 1,
        "worker": f"tcp://127.0.0.1:{4000 + index % 2}",
    }
    if ok:
        found["metrics"] = metrics or {"value": index / 8}
    else:
        found["error"] = f"RuntimeError: task {index % 2}"
    return found


def test_a_table_read_a_chunk_at_a_time_is_the_table_of_the_records_loaded_whole(
    tmp_path, monkeypatch
):
    """Tasks failed then ok, ok then failed, ok twice, a metric only some tasks return (its
    column after the others, as the first task holding it says), a task lacking the kept
    metric, records of another design, recomputation stamps: the same table either way."""
    monkeypatch.setattr(scan, "CHUNK_BYTES", 2**12)
    spec = write_spec(tmp_path, 4, 5, "metrics: [value, extra]")
    design = Design(spec)
    rng = random.Random(3)
    stamp = {"time": "t", "parser": "p:f", "digest": "d", "metrics": ["value"]}
    batches = []
    for _ in range(40):
        index = rng.randrange(design.size)
        ok = rng.random() < 0.7
        metrics = {"value": rng.random(), **({"extra": 1.0} if index % 3 else {})}
        found = record(design, index, ok, **metrics)
        if rng.random() < 0.2:
            found["metrics_from"] = stamp
        batches.append(found)
    other = {"key": "f" * 32, "status": "ok", "metrics": {"value": 1.0}, "metrics_from": stamp}
    batches.append(other)
    ledger = Ledger(spec.output)
    for first in range(0, len(batches), 7):
        ledger.append(batches[first : first + 7])
    streamed, whole = read_table(ledger, design), records_table(design, ledger.load())
    assert streamed.status.tolist() == whole.status.tolist()
    assert list(streamed.columns) == list(whole.columns) == ["value", "extra"]
    for name in streamed.columns:
        assert np.array_equal(streamed.columns[name], whole.columns[name], equal_nan=True)
    errors = [streamed.errors.get(i) for i in range(design.size)]
    assert errors == [whole.errors.get(i) for i in range(design.size)]
    assert streamed.recomputed == whole.recomputed
    assert task_costs(streamed) == task_costs(whole)
    stored = read_status(ledger, design).status != STATUS_MISSING  # the heads alone
    assert stored.tolist() == (streamed.status != STATUS_MISSING).tolist()


def test_the_task_table_says_what_each_record_says(tmp_path):
    """By hand: task 0 failed then succeeded, 1 succeeded then failed (still ok), 2 two
    successes (the later counts), 3 lacks the kept metric (failed, saying so, wherever its
    status is read), 4 never ran."""
    spec = write_spec(tmp_path, 1, 5, "metrics: [value]")
    design = Design(spec)
    ledger = Ledger(spec.output)
    ledger.append([record(design, 0, ok=False), record(design, 1), record(design, 2)])
    ledger.append([record(design, 0), record(design, 1, ok=False)])
    ledger.append([record(design, 2, value=9.0), record(design, 3, other=1.0)])
    table = read_table(ledger, design)
    assert table.status.tolist() == [STATUS_OK] * 3 + [STATUS_FAILED, STATUS_MISSING]
    assert np.array_equal(table.columns["value"], [0.0, 1 / 8, 9.0, np.nan, np.nan], True)
    assert table.errors.get(3) == (
        "ValueError: the model returned no metric 'value', which the spec's metrics: keeps; "
        "it returned: other"
    )
    assert [table.errors.get(i) for i in (0, 1, 2, 4)] == [None] * 4
    assert table.costs.measured.tolist() == [True] * 4 + [False]
    # the status plan and status count: 3 failed too (as results.nc has it, and as a task
    # run now under that spec would end), read from the records whole
    assert read_status(ledger, design).status.tolist() == table.status.tolist()
    unkept = Design(write_spec(tmp_path, 1, 5))  # without metrics: from the heads alone
    assert read_status(ledger, unkept).status.tolist() == [STATUS_OK] * 4 + [STATUS_MISSING]


def fill(spec, design: Design) -> None:
    ledger = Ledger(spec.output)
    ledger.write_identity({"model": spec.model, "params": spec.params, "seed": spec.seed})
    for first in range(0, design.size, 1000):
        ledger.append(record(design, i) for i in range(first, min(first + 1000, design.size)))


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """results.nc of 2,000 and of 8,000 stored tasks, and the peak memory of the latter."""
    found = {}
    for replicates in (20, 80):
        folder = tmp_path_factory.mktemp(f"r{replicates}")
        spec = write_spec(folder, 100, replicates)
        fill(spec, Design(spec))
        plan = make_plan(spec, check_identity=False)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(scan, "CHUNK_BYTES", 2**16)
            tracemalloc.start()
            dataset = write_results(plan)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        found[replicates] = (spec.output / "results.nc", dataset, peak)
    return found


def test_results_nc_takes_tens_of_bytes_a_task_for_one_metric(written):
    (small, _, _), (large, dataset, _) = written[20], written[80]
    per_task = (large.stat().st_size - small.stat().st_size) / (8000 - 2000)
    assert per_task < 40, per_task
    assert dataset.attrs["tasks_ok"] == 8000
    values = xr.load_dataset(large)["value"].values.ravel()
    assert np.array_equal(values, np.arange(8000) / 8)


def test_writing_results_holds_arrays_of_the_tasks_not_their_records(written):
    """8,000 records loaded whole take 10 MB; the table and results, read a chunk of 64 kB
    at a time, under 3 MB."""
    assert written[80][2] < 3 * 2**20, written[80][2]


def test_resources_hold_codes_into_tables_of_cells_and_workers(written):
    path, _, _ = written[20]
    group = xr.load_dataset(path, group="resources")
    assert group["task_cell"].dtype == np.int32 and group["task_worker"].dtype == np.int32
    assert sorted(group["worker"].values) == ["tcp://127.0.0.1:4000", "tcp://127.0.0.1:4001"]
    levels = group["cell_levels"].values[group["task_cell"].values]
    assert levels[0] == '{"tag": "t0"}' and levels[-1] == '{"tag": "t99"}'
    assert group["task_replicate"].values.tolist() == list(range(20)) * 100
    assert "task_key" not in group


def test_costs_read_the_same_from_a_file_written_before_the_codes(written):
    """The earlier layout: a key, the levels and the worker as a string per task."""
    path, _, _ = written[20]
    group = xr.load_dataset(path, group="resources")
    cells = group["cell_levels"].values[group["task_cell"].values]
    earlier = xr.Dataset(
        {
            "task_key": ("task", np.array([f"k{i}" for i in range(cells.size)], dtype=object)),
            "task_cell": ("task", cells.astype(object)),
            "task_replicate": ("task", group["task_replicate"].values.astype(np.int64)),
            "task_ok": group["task_ok"],
            "elapsed": group["elapsed"],
            "peak_memory": group["peak_memory"],
            "worker": ("task", group["worker"].values[group["task_worker"].values]),
        }
    )
    now = table_costs(group)
    assert table_costs(earlier) == now
    assert now.tasks == 2000 and [cell.cell for cell in now.cells[:2]] == ["tag=t0", "tag=t1"]


def ledger_passes(monkeypatch) -> list:
    """The files of the ledger each read starts on (one per file and pass over the ledger)."""
    started = []
    original = scan.chunked_lines

    def counted(path, size=None):
        started.append(path)
        yield from original(path, size)

    monkeypatch.setattr(scan, "chunked_lines", counted)
    return started


def test_plan_and_status_read_a_ledger_without_samples_once_for_its_counts(tmp_path, monkeypatch):
    """Whether a stored success holds a sample (so that a metric may clash across tasks) is
    found in the same pass over the records' heads as the tasks' status: a ledger of
    millions of records is not read once more for it by every plan, run and status."""
    import campaign

    spec = write_spec(tmp_path, 10, 10)
    fill(spec, Design(spec))
    started = ledger_passes(monkeypatch)
    assert make_plan(spec, check_identity=False).done == 100
    assert len(started) == 1
    started.clear()
    assert campaign.status(spec.path).done == 100  # counts and costs: the records read whole
    assert len(started) == 1


def test_a_stored_sample_still_has_the_records_read_whole_once(tmp_path, monkeypatch):
    """A success holding a sample where others hold a number: the numbers are failed, as
    results.nc counts them, from one pass over the heads and one over the records."""
    spec = write_spec(tmp_path, 2, 2)
    design = Design(spec)
    fill(spec, design)
    sample = record(design, 3, **{"value@n": 2.0, "value@mean": 1.0})
    Ledger(spec.output).append([sample])
    started = ledger_passes(monkeypatch)
    plan = make_plan(spec, check_identity=False)
    assert (plan.done, plan.failed) == (1, [0, 1, 2])
    assert len(started) == 2 * len(list(Ledger(spec.output).files()))


@pytest.mark.parametrize(
    "target", ["", "precision: {metrics: [value], half_width: 0.5, max_replicates: 5}"]
)
def test_status_reads_the_ledger_once(tmp_path, monkeypatch, target):
    """It read each record's head and then the records whole (with a precision target, the
    records whole twice): two reads of a ledger of millions where one gives it all."""
    text = SPEC.format(levels="t0, t1", replicates=5, metrics="")
    if target:
        text = text.replace("replicates: 5", target)
    (tmp_path / "spec.yaml").write_text(text)
    spec = load_spec(tmp_path / "spec.yaml")
    fill(spec, Design(spec))
    reads = []
    for name in ("heads", "records"):
        read = getattr(scan, name)
        monkeypatch.setattr(scan, name, lambda *a, n=name, f=read: reads.append(n) or f(*a))
    state = campaign.status(tmp_path / "spec.yaml")
    assert reads == ["records"]
    assert state.done == 10 and state.table is not None
