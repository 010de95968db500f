"""No room to write (a full disk, a quota, a file size limit): `run` stops in one line saying
which file it could not write and that what it stored is kept, leaves no partial file behind,
and once there is room the same command ends with an undisturbed run's results, bit for bit.

The limit is the process's own (RLIMIT_FSIZE, inherited by the embedded cluster's workers):
every write past it fails with EFBIG at a size the test chooses, as a full disk fails with
ENOSPC, without filling a disk."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import xarray as xr
import yaml

from campaign.store.ledger import Ledger

FOLDER = Path(__file__).resolve().parent
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [str(FOLDER.parents[1]), str(FOLDER), os.environ.get("PYTHONPATH", "")]
    ),
}


def write_spec(folder: Path, output: str, replicates: int) -> Path:
    """The wide model's campaign: a task's record (about 1.3 kB) is larger than campaign.json
    (about 0.3 kB), and results.nc (hundreds of kB) larger than the whole ledger (30 kB)."""
    spec = {
        "name": "room",
        "model": "wide:run",
        "factors": {"level": [1, 2]},
        "replicates": replicates,
        "seed": 5,
        "output": output,
    }
    path = folder / f"{output}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def run(spec: Path, largest_file: int | None = None) -> subprocess.CompletedProcess:
    """`campaign run` in a new process that cannot write a file past ``largest_file`` bytes."""

    def limit() -> None:
        if largest_file is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (largest_file, largest_file))

    command = [sys.executable, "-m", "campaign", "run", str(spec), "--workers", "1"]
    return subprocess.run(
        [*command, "--quiet"],
        env=ENV,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=300,
    )


def leftovers(output: Path) -> list[str]:
    """Temporary files a failed write left (ledger batches, results.nc)."""
    return sorted(p.name for p in output.rglob(".*") if p.name.endswith(".tmp"))


def test_no_room_for_results_nc_or_a_ledger_batch_stops_in_one_line_and_loses_nothing(
    tmp_path, same_results
):
    clean = run(write_spec(tmp_path, "clean", replicates=12))
    assert clean.returncode == 0, clean.stderr
    output = tmp_path / "full"

    # Room for the ledger, not for results.nc: every task's result is stored, the file is not.
    spec = write_spec(tmp_path, "full", replicates=10)
    done = run(spec, largest_file=200_000)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(
        f"campaign: error: cannot write {output / 'results.nc'}: NetCDF: HDF error ("
    ), done.stderr
    assert done.stderr.endswith(
        " free on its disk); every finished result is kept in the ledger: fix this and run "
        "again (nothing reruns)\n"
    )
    assert len(Ledger(output).load()) == 20
    assert not (output / "results.nc").exists() and leftovers(output) == []

    # Two more replicates with no room for a task's record: the first batch cannot be stored.
    spec = write_spec(tmp_path, "full", replicates=12)
    done = run(spec, largest_file=1000)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "20 already done, 4 to run" in done.stdout
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(
        f"campaign: error: cannot store finished results in {output / 'ledger'}: File too large ("
    ), done.stderr
    assert done.stderr.endswith(
        "; the results stored before are kept: make room and run the same command again to "
        "finish the rest\n"
    )
    assert len(Ledger(output).load()) == 20 and leftovers(output) == []

    # Room again: the same command computes the 4 missing tasks and writes results.nc.
    done = run(spec)
    assert done.returncode == 0, done.stderr
    assert "20 already done, 4 to run" in done.stdout
    assert "24 tasks ok, 0 failed, 0 missing" in done.stdout
    finished = xr.load_dataset(output / "results.nc")
    same_results(finished, xr.load_dataset(tmp_path / "clean" / "results.nc"))
