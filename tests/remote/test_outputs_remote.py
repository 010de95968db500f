"""Kept outputs through a remote scheduler: workers started as processes in another folder than
the spec's, sharing no file with the driver but what Dask carries, send each task's stdout and
kept file back; they are stored with the records and read back the same."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import campaign
from campaign.cli.main import main
from campaign.store.ledger import Ledger
from campaign.store.outputs import Archives

REPO = Path(__file__).resolve().parents[2]

SIM = """
import json, sys
seed, rate = int(sys.argv[1]), float(sys.argv[2])
open("trace.txt", "w").write("".join(f"{seed % (i + 7)} {rate}\\n" for i in range(50)))
print(json.dumps({"value": (seed % 997) * rate}))
"""

SPEC = """
name: remote-kept
model:
  command: [python3, sim.py, "{seed}", "{rate}"]
  inputs: [sim.py]
  keep: [stdout, "*.txt"]
factors:
  rate: [0.5, 1.5]
replicates: 4
seed: 17
output: out
"""


def expected(seed: int, rate: float) -> dict[str, bytes]:
    return {
        "files/trace.txt": "".join(f"{seed % (i + 7)} {rate}\n" for i in range(50)).encode(),
        "stdout": (json.dumps({"value": (seed % 997) * rate}) + "\n").encode(),
    }


def test_outputs_come_back_from_workers_in_another_folder(start_cluster, tmp_path, capsys):
    site = tmp_path / "site"  # the spec's folder; the workers run in tmp_path/elsewhere
    site.mkdir()
    (site / "sim.py").write_text(textwrap.dedent(SIM))
    (site / "spec.yaml").write_text(SPEC)
    cluster = start_cluster(workers=0, wait=False)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    cluster.folder = tmp_path / "elsewhere"  # where start_worker runs the workers (with env)
    cluster.folder.mkdir()
    for _ in range(2):
        cluster.start_worker(env=env)
    cluster.wait_for_workers(2)
    data = campaign.run(site / "spec.yaml", scheduler=cluster.address, progress=False)
    assert int((data.status == 1).sum()) == 8
    records = Ledger(site / "out").load()
    with Archives(site / "out") as archives:
        for record in records.values():
            assert archives.read(record) == expected(record["seed"], record["cell"]["rate"])
    assert not list((tmp_path / "elsewhere").glob("*.txt"))  # each task in its own folder
    assert main(["outputs", str(site / "spec.yaml"), "--where", "rate=1.5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and lines[-1].startswith("4 tasks kept outputs (")
