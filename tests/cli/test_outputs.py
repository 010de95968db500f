"""`campaign outputs` (list, choose, show, extract kept outputs), metrics recomputed or added
from kept outputs (`campaign remetric`), and `verify` saying which kept outputs are damaged.

The campaign is a real one (the mm1 check model on the test cluster); its finished tasks'
records are then stored again carrying outputs, as the workers of a command model send them
(a JSON stdout and a kept file), through the runner's own storing steps."""

from __future__ import annotations

import json
import shutil

import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.design.tasks import Design
from campaign.errors import CampaignError
from campaign.pipelines.remetric import MetricsParser, remetric
from campaign.pipelines.verify import verify
from campaign.spec.load import load_spec
from campaign.store.ledger import Ledger
from campaign.store.outputs import keep_outputs
from tests.conftest import finished_campaign

SPEC = """
name: kept
model: mm1
params: {customers: 200, fail_above: 12.0}
factors:
  arrival_rate: [0.2, 0.6]
  service_rate: {fast: 2.0, slow: 1.0}
replicates: 3
seed: 5
output: out
"""


def printed_stdout(record):
    """What a command model's program printed: its metrics as JSON, and one more number."""
    metrics = dict(record["metrics"], served=float(record["replicate"] + 100))
    return json.dumps(metrics).encode() + b"\n"


def schedule(record):
    return f"task,{record['key']}\nreplicate,{record['replicate']}\n".encode()


def attach_outputs(output, skip=()):
    """Store every finished task again with its kept outputs, as a run of a command model
    keeping stdout and schedule.csv would have (failed tasks keep their stderr)."""
    ledger = Ledger(output)
    again = []
    for key, record in sorted(ledger.load().items()):
        if key in skip:
            continue
        record = dict(record)
        if record["status"] == "ok":
            record["outputs"] = {
                "stdout": printed_stdout(record),
                "files/schedule.csv": schedule(record),
            }
        else:
            record["outputs"] = {"stderr": record["error"].encode() + b"\n"}
        again.append(record)
    keep_outputs(output, again)
    ledger.append(again)


finished = finished_campaign("kept", SPEC)


@pytest.fixture
def finished_copy(finished, tmp_path):
    """The output folder of a copy of the module's finished campaign (its spec.yaml beside
    it), for a test to change: the campaign runs once, not once a test."""
    shutil.copytree(finished.parent, tmp_path / "kept")
    return tmp_path / "kept" / "out"


@pytest.fixture
def kept(finished_copy):
    """The spec of a finished campaign whose tasks kept outputs."""
    attach_outputs(finished_copy)
    return finished_copy.parent / "spec.yaml"


def records_of(spec):
    return Ledger(spec.parent / "out").load()


def test_the_listing_shows_every_task_that_kept_outputs_with_levels_and_sizes(kept, capsys):
    assert main(["outputs", str(kept)]) == 0
    lines = capsys.readouterr().out.splitlines()
    records = records_of(kept)
    design = Design(load_spec(kept))
    assert len(lines) == design.size + 1
    for task, line in zip(design.tasks(), lines):
        record = records[task.key]
        levels = " ".join(f"{k}={v}" for k, v in design.cell_label(task.cell).items())
        if record["status"] == "ok":
            size = len(schedule(record))
            stdout = len(printed_stdout(record))
            kept_text = f"files/schedule.csv {size} B, stdout {stdout} B"
        else:
            kept_text = f"stderr {len(record['error']) + 1} B"
        status = f"{record['status']:6}"
        assert line == f"{task.key}  {status}  r{task.replicate}  {levels}  {kept_text}"
    failed = sum(r["status"] != "ok" for r in records.values())
    assert 0 < failed < design.size  # this seed makes some tasks fail
    assert lines[-1].startswith(f"{design.size} tasks kept outputs (")


def test_where_and_task_choose_tasks_and_a_bad_choice_is_one_line(kept, capsys):
    design = Design(load_spec(kept))
    slow = [t.key for t in design.tasks() if design.cell_label(t.cell)["service_rate"] == "slow"]
    assert main(["outputs", str(kept), "--where", "service_rate=slow"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()[:-1]]
    assert listed == slow and len(slow) == 6
    assert main(["outputs", str(kept), "--where", "arrival_rate=0.6", "--task", slow[3]]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()[:-1]]
    assert listed == [slow[3]]
    assert main(["outputs", str(kept), "--where", "arrival_rate=0.6", "--task", slow[0]]) == 2
    assert capsys.readouterr().err == (
        f"campaign: error: --task {slow[0]} --where arrival_rate=0.6: no stored task is chosen\n"
    )
    assert main(["outputs", str(kept), "--where", "service_rate=medium"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --where 'service_rate=medium': 'medium' is not a level of "
        "service_rate; levels: fast, slow\n"
    )
    assert main(["outputs", str(kept), "--task", "0123"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --task '0123': no task of campaign kept has this key (`campaign "
        "outputs` lists the tasks that kept outputs)\n"
    )


def test_show_prints_one_output_of_one_task_bit_for_bit(kept, capfdbinary):
    record = next(r for r in records_of(kept).values() if r["status"] == "ok")
    assert main(["outputs", str(kept), "--task", record["key"], "--show", "stdout"]) == 0
    assert capfdbinary.readouterr().out == printed_stdout(record)
    assert main(["outputs", str(kept), "--task", record["key"], "--show", "schedule.csv"]) == 0
    assert capfdbinary.readouterr().out == schedule(record)
    assert main(["outputs", str(kept), "--show", "stdout"]) == 2
    assert capfdbinary.readouterr().err.decode() == (
        "campaign: error: --show stdout: choose one task (--task KEY, or --where clauses that "
        "leave one); 12 tasks with kept outputs are chosen\n"
    )


def test_extract_writes_each_task_folder_as_a_parser_sees_it(kept, tmp_path, capsys):
    into = tmp_path / "extracted"
    assert main(["outputs", str(kept), "--where", "arrival_rate=0.2", "--extract", str(into)]) == 0
    records = records_of(kept)
    chosen = {
        t.key
        for t in Design(load_spec(kept)).tasks()
        if t.cell[0] == 0  # arrival_rate 0.2
    }
    assert {p.name for p in into.iterdir()} == chosen
    for key in chosen:
        record = records[key]
        if record["status"] == "ok":
            assert (into / key / "stdout").read_bytes() == printed_stdout(record)
            assert (into / key / "schedule.csv").read_bytes() == schedule(record)
            assert sorted(p.name for p in (into / key).iterdir()) == ["schedule.csv", "stdout"]
        else:
            assert (into / key / "stderr").read_bytes() == record["error"].encode() + b"\n"
    assert capsys.readouterr().out.endswith(f"of 6 tasks written under {into}\n")


def test_a_campaign_that_kept_nothing_says_so_in_one_line(finished_copy, capsys):
    spec = finished_copy.parent / "spec.yaml"
    assert main(["outputs", str(spec)]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: none of the 12 stored tasks kept outputs (by default a task keeps only "
        "its stdout and stderr, and only when it fails; the model's keep: names files to "
        "keep)\n"
    )


def stdout_parser(outputs):
    return json.loads(outputs["stdout"])


STDOUT_PARSER = MetricsParser(stdout_parser, "parse: tests:stdout_parser", "sha256:abc")


def test_metrics_are_added_from_kept_outputs_without_running_anything(kept):
    out = kept.parent / "out"
    before = records_of(kept)
    with xr.open_dataset(out / "results.nc") as first:
        assert "served" not in first
        mean_wait = first["mean_wait"].values.copy()
    done = remetric(out, STDOUT_PARSER)  # the output folder: no cluster, no spec needed
    assert done.tasks == sum(r["status"] == "ok" for r in before.values())
    assert done.metrics == ["max_wait", "mean_wait", "served", "utilization"]
    after = records_of(kept)
    for key, record in before.items():
        if record["status"] == "ok":
            assert after[key]["metrics"] == {
                **record["metrics"],
                "served": float(record["replicate"] + 100),
            }
            assert after[key]["run"] == record["run"]  # the run that computed it, unchanged
    with xr.open_dataset(out / "results.nc") as results:
        assert (results["mean_wait"].values == mean_wait)[~(mean_wait != mean_wait)].all()
        table = results[["served", "status"]].to_dataframe().reset_index()
        ok = table[table["status"] == 1]
        assert len(ok) == done.tasks
        assert (ok["served"] == ok["replicate"] + 100).all()
        (recomputed,) = json.loads(results.attrs["metrics_recomputed"])
    assert recomputed["parser"] == "parse: tests:stdout_parser"
    assert recomputed["digest"] == "sha256:abc"
    assert recomputed["tasks"] == done.tasks
    assert recomputed["metrics"] == ["max_wait", "mean_wait", "served", "utilization"]


def levels(record) -> str:
    """A task's levels and replicate, as a line names them."""
    cell = ", ".join(f"{name}={level}" for name, level in record["cell"].items())
    return f"{cell}, replicate {record['replicate']}"


def test_tasks_that_kept_no_outputs_are_counted_and_nothing_is_stored(
    finished_copy, scheduler_address
):
    out = finished_copy
    spec = out.parent / "spec.yaml"
    Ledger(out).compact()  # one file: the tasks that keep no outputs share it with the others
    ok = sorted(k for k, r in Ledger(out).load().items() if r["status"] == "ok")
    attach_outputs(out, skip=set(ok[:3]))
    files = sorted(p.read_bytes() for p in Ledger(out).files())
    with pytest.raises(CampaignError) as refused:
        remetric(out, STDOUT_PARSER)
    assert str(refused.value) == (
        f"remetric: 3 of {len(ok)} finished tasks kept no outputs (a task that succeeds keeps "
        "only what the model's keep: names), so their metrics cannot be recomputed; nothing "
        "was stored: name what to keep in keep: and give rerun_unkept=True to set those tasks "
        "aside for `campaign run` to compute again"
    )
    assert sorted(p.read_bytes() for p in Ledger(out).files()) == files
    said = []
    done = remetric(out, STDOUT_PARSER, say=said.append, rerun_unkept=True)
    assert done.tasks == len(ok) - 3
    (aside,) = out.glob("ledger.unkept-*")
    assert said[1] == (
        f"remetric: 3 tasks kept no outputs: their records are set aside in {aside}; "
        "`campaign run` computes them again"
    )
    stored = Ledger(out).load()
    assert not set(ok[:3]) & set(stored)
    assert all("served" in stored[key]["metrics"] for key in ok[3:])
    assert int((done.dataset["status"] == 0).sum()) == 3  # missing: they run again
    # a run would compute them with the model alone, without the metrics the parser (given
    # from Python) defines now: refused in one line, before anything runs
    with pytest.raises(CampaignError) as refused:
        campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert str(refused.value) == (
        f"{out}: metrics max_wait, mean_wait, served, utilization were recomputed by `campaign "
        "remetric` with parse: tests:stdout_parser, a function given from Python, which cannot "
        "be loaded to compute new tasks' max_wait, mean_wait, served, utilization the same "
        "way; give the same parser to `campaign remetric` (every finished task recomputed with "
        "it as it is now), then run again"
    )
    assert Ledger(out).load().keys() == stored.keys()
    ok = ok[3:]

    def garbage(outputs):
        raise ValueError("stdout: not a JSON object or key=value lines")

    attach_outputs(out)
    files = sorted(p.read_bytes() for p in Ledger(out).files())
    with pytest.raises(CampaignError) as refused:
        remetric(out, MetricsParser(garbage, "stdout", "sha256:0"))
    assert str(refused.value) == (
        f"remetric: {len(ok)} of {len(ok)} finished tasks cannot be recomputed with stdout; "
        f"nothing was stored; the first: task {ok[0]} ({levels(stored[ok[0]])}): stdout: not "
        "a JSON object or key=value lines"
    )
    assert sorted(p.read_bytes() for p in Ledger(out).files()) == files


def test_verify_names_finished_tasks_whose_kept_outputs_are_damaged(kept, scheduler_address):
    out = kept.parent / "out"
    verdict = verify(kept, count=2, scheduler=scheduler_address)
    assert verdict.outputs == [] and not verdict.mismatches
    (archive,) = (out / "outputs").iterdir()
    archive.write_bytes(archive.read_bytes()[:-30])  # its end (the central directory) torn
    verdict = verify(kept, count=2, scheduler=scheduler_address)
    ok = sorted(k for k, r in records_of(kept).items() if r["status"] == "ok")
    assert len(verdict.outputs) == len(ok)
    assert verdict.outputs[0].startswith(f"task {ok[0]}: its kept outputs cannot be read: ")
    assert "is damaged" in verdict.outputs[0]


def test_a_metric_the_specs_metrics_does_not_keep_is_refused(tmp_path, scheduler_address):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC + "metrics: [mean_wait]\n")
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    attach_outputs(tmp_path / "out")
    files = sorted(p.read_bytes() for p in Ledger(tmp_path / "out").files())
    with pytest.raises(CampaignError) as refused:
        remetric(spec, STDOUT_PARSER)
    assert str(refused.value) == (
        "remetric: parse: tests:stdout_parser returns served, new metrics the spec's metrics: "
        "does not keep (mean_wait); nothing was stored: add them to metrics: and give the "
        "spec file"
    )
    assert sorted(p.read_bytes() for p in Ledger(tmp_path / "out").files()) == files
