"""No room to write (a full disk, a quota, a file size limit): `run` stops in one line saying
which file it could not write and that what it stored is kept, leaves no partial file behind,
and once there is room the same command ends with an undisturbed run's results, bit for bit.

The limit is the driver process's own (RLIMIT_FSIZE; the driver writes the ledger and
results.nc): every write past it fails with EFBIG at a size the test chooses, as a full disk
fails with ENOSPC, without filling a disk. The runs share one cluster for the module, whose
workers import the test's model; the runs with room enough run `campaign` in this process."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import xarray as xr
import yaml

from campaign.cli import main
from campaign.results.netcdf import write_netcdf
from campaign.store.ledger import Ledger
from tests.conftest import error_line

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


@pytest.fixture(scope="module")
def scheduler(one_worker_cluster):
    return one_worker_cluster


def run_limited(spec: Path, scheduler: str, largest_file: int) -> subprocess.CompletedProcess:
    """`campaign run` in a new process that cannot write a file past ``largest_file`` bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (largest_file, largest_file))

    command = [sys.executable, "-m", "campaign", "run", str(spec), "--scheduler", scheduler]
    return subprocess.run(
        [*command, "--quiet"],
        env=ENV,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run(spec: Path, scheduler: str, capsys) -> tuple[int, str, str]:
    """`campaign run` with room to write, in this process: its exit status, what it printed
    and said."""
    capsys.readouterr()
    code = main(["run", str(spec), "--scheduler", scheduler, "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


def leftovers(output: Path) -> list[str]:
    """Temporary files a failed write left (ledger batches, results.nc)."""
    return sorted(p.name for p in output.rglob(".*") if p.name.endswith(".tmp"))


def test_no_room_for_results_nc_or_a_ledger_batch_stops_in_one_line_and_loses_nothing(
    tmp_path, same_results, scheduler, capsys
):
    code, _, err = run(write_spec(tmp_path, "clean", replicates=12), scheduler, capsys)
    assert code == 0, err
    output = tmp_path / "full"

    # Room for the ledger, not for results.nc: every task's result is stored, the file is not.
    spec = write_spec(tmp_path, "full", replicates=10)
    done = run_limited(spec, scheduler, largest_file=200_000)
    assert done.returncode == 2, done.stdout + done.stderr
    message = error_line(done.stderr)
    assert message.startswith(f"cannot write {output / 'results.nc'}: NetCDF: HDF error (")
    assert message.endswith(
        " free on its disk); every finished result is kept in the ledger: fix this and run "
        "again (nothing reruns)"
    )
    assert len(Ledger(output).load()) == 20
    assert not (output / "results.nc").exists() and leftovers(output) == []

    # Two more replicates with no room for a task's record: the first batch cannot be stored.
    spec = write_spec(tmp_path, "full", replicates=12)
    done = run_limited(spec, scheduler, largest_file=1000)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "20 already done, 4 to run" in done.stdout
    message = error_line(done.stderr)
    assert message.startswith(
        f"cannot store finished results in {output / 'ledger'}: File too large ("
    ), message
    assert message.endswith(
        "; the results stored before are kept: make room and run the same command again to "
        "finish the rest"
    )
    assert len(Ledger(output).load()) == 20 and leftovers(output) == []

    # Room again: the same command computes the 4 missing tasks and writes results.nc.
    code, out, err = run(spec, scheduler, capsys)
    assert code == 0, err
    assert "20 already done, 4 to run" in out
    assert "24 tasks ok, 0 failed, 0 missing" in out
    finished = xr.load_dataset(output / "results.nc")
    same_results(finished, xr.load_dataset(tmp_path / "clean" / "results.nc"))


@contextmanager
def unwritable(folder: Path):
    """``folder`` as a read-only copy or mount is: files cannot be made in it (for root,
    whom permissions do not stop, the immutable attribute does: EPERM rather than EACCES)."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield errno.EACCES
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("running as root on a file system without chattr +i")
    try:
        yield errno.EPERM
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_a_folder_that_cannot_be_written_is_said_so_not_that_the_disk_is_full(
    tmp_path, scheduler, capsys
):
    output = tmp_path / "locked"
    code, _, err = run(write_spec(tmp_path, "locked", replicates=2), scheduler, capsys)
    assert code == 0, err
    spec = write_spec(tmp_path, "locked", replicates=3)  # two more tasks to store
    with unwritable(output / "ledger") as error:
        code, out, err = run(spec, scheduler, capsys)
    assert code == 2, out + err
    ledger = output / "ledger"
    assert err == (
        f"campaign: error: cannot store finished results in {ledger}: {os.strerror(error)}: "
        f"{ledger} is not writable; the results stored before are kept: make it writable (or "
        "give another output folder) and run the same command again to finish the rest\n"
    )
    assert len(Ledger(output).load()) == 4
    code, out, err = run(spec, scheduler, capsys)  # writable again: the same command finishes
    assert code == 0, err
    assert "6 tasks ok, 0 failed, 0 missing" in out


def test_a_later_run_removes_what_a_killed_writer_left_and_a_failed_write_leaves_nothing(
    tmp_path, scheduler, capsys
):
    output = tmp_path / "left"
    spec = write_spec(tmp_path, "left", replicates=2)
    assert run(spec, scheduler, capsys)[0] == 0
    gone = int(
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    # what SIGTERM during the write of results.nc, campaign.json or a batch leaves behind
    left = [
        output / f".results.nc.{gone}.5eed0fa1.tmp",
        output / f".campaign.json.{gone}.tmp",
        output / "ledger" / f".00000000000000000001-{gone}-000001.jsonl.{gone}.tmp",
    ]
    for path in left:
        path.write_bytes(b"\x89HDF\r\n\x1a\n half a file")
    code, _, err = run(spec, scheduler, capsys)
    assert code == 0, err
    assert leftovers(output) == []
    # a write of results.nc that fails part way removes its temporary file and keeps the
    # previous results.nc whole
    previous = (output / "results.nc").read_bytes()
    dataset = xr.load_dataset(output / "results.nc")
    dataset["m00"].attrs["nested"] = {"not": "storable"}
    with pytest.raises(TypeError):
        write_netcdf(dataset, output / "results.nc")
    assert leftovers(output) == []
    assert (output / "results.nc").read_bytes() == previous
