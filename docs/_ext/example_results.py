"""What a results file holds, read from real ones: runs two small example campaigns and
describes every group, variable (dimensions, type, attributes) and global attribute of the
results.nc each writes. The reference page of the results file is written from this, so it
shows what the code writes today, not what someone remembered.

    python docs/_ext/example_results.py FOLDER   # prints the description as JSON

Run as a script of its own (by the docs build): the campaigns start an embedded Dask cluster,
whose worker processes import this file's main module, hence the guard below.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

EXAMPLES = {
    "samples": """
name: example
model: jobs
params: {workload: synthetic, jobs: 100, processors: 32}
factors:
  scheduler: [fcfs, easy]
  load: [1.0, 2.0]
paired: [scheduler]
replicates: 2
seed: 1
metrics: [mean_wait, utilization, wait, job_class]
output: out
""",
    "precision": """
name: example-precision
model: mm1
params: {customers: 200, fail_above: 3.0}
factors:
  arrival_rate: [0.3, 0.6]
precision: {metrics: [mean_wait], half_width: 0.5, min_replicates: 3, max_replicates: 6}
seed: 3
output: out
""",
}
"""A campaign with a sample and a breakdown (the jobs model), and one with a precision
target and failed tasks (the M/M/1 check model: `fail_above` fails some seeds)."""


def describe_variables(dataset) -> list[dict]:
    rows = []
    for name, variable in dataset.variables.items():
        attrs = {key: _plain(value) for key, value in variable.attrs.items()}
        rows.append(
            {
                "name": str(name),
                "dims": [str(d) for d in variable.dims],
                "dtype": str(variable.dtype),
                "coordinate": name in dataset.coords,
                "attrs": attrs,
            }
        )
    return rows


def _plain(value):
    """An attribute's value as JSON holds it."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def describe(path: Path) -> dict:
    """The groups of a results file: each its variables and attributes."""
    import netCDF4
    import xarray as xr

    with netCDF4.Dataset(path) as handle:  # nested ones too: breakdowns/job_class
        groups, pending = ["/"], list(handle.groups.values())
        while pending:
            group = pending.pop(0)
            if group.variables:  # a group that only holds groups says nothing of its own
                groups.append(group.path.lstrip("/"))
            pending.extend(group.groups.values())
    found = {}
    for group in groups:
        with xr.open_dataset(path, group=None if group == "/" else group) as dataset:
            found[group] = {
                "variables": describe_variables(dataset),
                "attrs": {k: _plain(v) for k, v in dataset.attrs.items()},
            }
    return found


def main(folder: Path) -> dict:
    from distributed import LocalCluster

    import campaign

    described = {}
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        for name, text in EXAMPLES.items():
            where = folder / name
            where.mkdir(parents=True, exist_ok=True)
            (where / "spec.yaml").write_text(text)
            address = cluster.scheduler_address
            campaign.run(where / "spec.yaml", scheduler=address, progress=False)
            described[name] = {"spec": text.strip(), "file": describe(where / "out" / "results.nc")}
    return described


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=1, default=str))
