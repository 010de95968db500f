"""Per-task resources: a task asking for cores and memory gets them from Dask worker resources,
so a task never shares the cores it asked for; a task no worker can hold is refused first."""

from __future__ import annotations

import pytest

import campaign
from campaign.cluster.resources import machine
from campaign.errors import CampaignError

SPEC = """
name: wide
model:
  command: [/bin/sh, -c, "date +%s.%N > {times}/{{task}}.start; sleep 0.3;
    date +%s.%N > {times}/{{task}}.end; echo cores={{cores}}; echo slot={{x}}", sh]
  resources: {{cores: {cores}, memory: 100MB}}
factors:
  x: [1, 2, 3]
replicates: 2
seed: 1
output: out
"""


def intervals(folder):
    spans = []
    for start in folder.glob("*.start"):
        end = start.with_suffix(".end")
        spans.append((float(start.read_text()), float(end.read_text())))
    return sorted(spans)


def test_a_task_asking_every_core_runs_alone(tmp_path, write_spec):
    cores = int(machine()["cores"])
    times = tmp_path / "times"
    times.mkdir()
    spec = write_spec(SPEC.format(times=times, cores=cores))
    said = []
    data = campaign.run(spec, progress=False, say=said.append)
    assert data.cores.values.ravel().tolist() == [float(cores)] * 6
    assert any("Local Dask cluster: 1 worker processes" in line for line in said)
    spans = intervals(times)
    assert len(spans) == 6
    assert all(end <= next_start for (_, end), (next_start, _) in zip(spans, spans[1:]))


def test_a_task_asking_more_than_any_worker_has_is_refused_before_work(tmp_path, write_spec):
    cores = int(machine()["cores"])
    times = tmp_path / "times"
    times.mkdir()
    spec = write_spec(SPEC.format(times=times, cores=cores + 1))
    with pytest.raises(CampaignError) as caught:
        campaign.run(spec, progress=False)
    assert str(caught.value) == (
        f"resources: a task asks {cores + 1} cores, but each of the embedded cluster's 1 "
        f"workers has {cores} cores of this machine's {cores} cores: use fewer workers, or a "
        "cluster whose workers have more"
    )
    assert not list(times.iterdir())
    with pytest.raises(CampaignError, match="but each of the embedded cluster's 2 workers"):
        campaign.run(write_spec(SPEC.format(times=times, cores=cores)), workers=2, progress=False)


def test_a_python_model_may_ask_for_resources(write_spec):
    spec = write_spec(
        """
        name: python
        model: mm1
        params: {customers: 50}
        factors:
          arrival_rate: [0.5]
        resources: {cores: 1}
        replicates: 2
        seed: 1
        output: out
        """
    )
    data = campaign.run(spec, workers=1, progress=False)
    assert int((data.status == 1).sum()) == 2
