"""Writing results.nc with many metrics: each step of `write_results`, per metric count.

A ledger is filled with synthetic finished records (the real record format, written through
`Ledger.append`) of a small design whose tasks return M metrics each; then the steps that
turn it into results.nc are timed: reading the ledger, assembling the Dataset (raw values,
summaries, NaN counts) and writing the netCDF file. Beside the summary and the write, the
naive way is timed in the same process: one `interval` per metric merged into a Dataset, and
a plain `Dataset.to_netcdf` of the variables in assembly order (data first, coordinates last).
Each metric count runs in a fresh Python process. A step that scales linearly takes about
twice as long for twice the metrics.

Usage: ``python scripts/bench_write.py [--metrics 200 800 2000] [--cells 12]
[--replicates 10] [--no-naive]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SPEC = """
name: write
model: busy
factors:
  duration_ms: [{levels}]
replicates: {replicates}
seed: 1
output: out-{metrics}
"""

STEP = r"""
import json, sys, time
from pathlib import Path
import numpy as np
import xarray as xr
from campaign.design.tasks import Design
from campaign.store.ledger import Ledger
from campaign.results.assemble import assemble
from campaign.results.netcdf import write_netcdf
from campaign.spec.load import load_spec
from campaign.analysis.stats import interval, summarize

spec_path, metrics, naive = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
spec = load_spec(spec_path)
design = Design(spec)
ledger = Ledger(spec.output)
rng = np.random.default_rng(1)
names = [f"metric_{i:05d}" for i in range(metrics)]
ledger.append(
    {"key": key, "status": "ok", "metrics": dict(zip(names, rng.random(metrics).tolist())),
     "replicate": 0, "cell": {}, "run": "fill", "attempts": 1, "elapsed": 0.001}
    for key in design.keys()
)
seconds = {}
start = time.perf_counter()
records = ledger.load()
seconds["load"] = time.perf_counter() - start
start = time.perf_counter()
documented = {name: {"units": "s", "long_name": f"metric number {name[7:]}"} for name in names}
dataset = assemble(design, records, 0.95, documented)
seconds["assemble"] = time.perf_counter() - start
raw = dataset[names + ["status"]]
start = time.perf_counter()
summarize(raw, names, 0.95)
seconds["summary"] = time.perf_counter() - start
start = time.perf_counter()
write_netcdf(dataset, spec.output / "results.nc")
seconds["write"] = time.perf_counter() - start
if naive:
    start = time.perf_counter()
    parts = {}
    for name in names:
        result = interval(raw[name], "replicate", 0.95)
        for stat in ("mean", "std", "n", "ci_low", "ci_high"):
            parts[f"{name}_{stat}"] = result[stat]
    xr.merge([raw, xr.Dataset(parts)])
    seconds["naive_summary"] = time.perf_counter() - start
    data_first = xr.Dataset(
        {name: dataset.variables[name] for name in dataset.data_vars},
        coords=dataset.coords, attrs=dataset.attrs,
    )
    encoding = {
        name: {"zlib": True, "complevel": 4}
        for name in dataset.data_vars
        if dataset.variables[name].dtype.kind in "fiu" and dataset.variables[name].ndim > 0
    }
    start = time.perf_counter()
    data_first.to_netcdf(spec.output / "naive.nc", engine="netcdf4", format="NETCDF4",
                         encoding=encoding)
    seconds["naive_write"] = time.perf_counter() - start
seconds["variables"] = len(dataset.data_vars)
print(json.dumps(seconds))
"""


def measure(folder: Path, metrics: int, cells: int, replicates: int, naive: bool) -> dict:
    path = folder / f"write-{metrics}.yaml"
    levels = ", ".join(str(i) for i in range(cells))
    path.write_text(SPEC.format(levels=levels, replicates=replicates, metrics=metrics))
    result = subprocess.run(
        [sys.executable, "-c", STEP, str(path), str(metrics), "1" if naive else "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=int, nargs="+", default=[200, 800, 2000])
    parser.add_argument("--cells", type=int, default=12)
    parser.add_argument("--replicates", type=int, default=10)
    parser.add_argument(
        "--no-naive", dest="naive", action="store_false", help="time only the current path"
    )
    args = parser.parse_args()
    print(f"{args.cells} cells x {args.replicates} replicates, all finished; seconds")
    print(
        f"{'metrics':>8} {'variables':>9} {'load':>6} {'assemble':>8} {'summary':>8} "
        f"{'naive':>8} {'write':>8} {'naive':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for metrics in args.metrics:
            row = measure(Path(tmp), metrics, args.cells, args.replicates, args.naive)
            print(
                f"{metrics:>8} {row['variables']:>9} {row['load']:>6.2f} {row['assemble']:>8.2f} "
                f"{row['summary']:>8.2f} {row.get('naive_summary', float('nan')):>8.2f} "
                f"{row['write']:>8.2f} {row.get('naive_write', float('nan')):>8.2f}"
            )
    print("summary: part of assemble; naive: one interval per metric, merged")
    print("write: write_netcdf; naive: Dataset.to_netcdf, data variables before coordinates")


if __name__ == "__main__":
    main()
