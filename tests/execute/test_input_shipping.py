"""A program's inputs reach the workers a part at a time: a driver shipping a 96 MiB input
holds about one copy of it (the scheduler's, kept for workers that join later), not one per
step of the way (read, pickled, sent to the scheduler, kept there, sent to each worker);
every worker, one joining later too, puts the file together under its digest; a file changed
since it was digested reaches no worker."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import Client

from campaign.errors import CampaignError
from campaign.execute.inputs import CACHE_FOLDER, ship_inputs, withdraw_inputs
from campaign.execute.memory import reset_peak
from campaign.plan.sources import file_digest
from campaign.spec.command_model import CommandSpec
from campaign.spec.input_file import InputFile

REPO = Path(__file__).resolve().parents[2]
SIZE = 96 * 2**20


def resident(field: str) -> int:
    """This process's VmRSS or VmHWM, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/self/status")


@pytest.fixture
def big_input(tmp_path) -> tuple[CommandSpec, str]:
    path = tmp_path / "big.bin"
    with open(path, "wb") as handle:
        for block in range(SIZE // 2**20):
            handle.write(hashlib.sha512(str(block).encode()).digest() * (2**20 // 64))
    digest = file_digest(path)
    command = CommandSpec(
        argv=("true",),
        program=None,
        inputs=(InputFile("big.bin", str(path)),),
        files=(("big.bin", digest),),
        shell=True,
    )
    return command, digest


def cached_digests(client: Client, digest: str) -> dict[str, str]:
    """Per worker, the digest and mode of its cached copy of the file of ``digest``."""

    def look(dask_worker) -> str:
        path = Path(dask_worker.local_directory) / CACHE_FOLDER / digest
        if not path.exists():
            return "missing"
        return f"{file_digest(path)} {oct(path.stat().st_mode & 0o777)}"

    return client.run(look)


def test_a_big_input_reaches_every_worker_with_about_one_copy_in_the_driver(
    big_input, scheduler_address, tmp_path
):
    command, digest = big_input
    with Client(scheduler_address) as client:
        assert reset_peak(), "this test needs Linux (/proc/self/clear_refs)"
        before = resident("VmRSS")
        names = ship_inputs(client, command)
        grew = resident("VmHWM") - before  # the scheduler runs in this process, as embedded
        try:
            assert set(cached_digests(client, digest).values()) == {f"{digest} 0o444"}
            with joining_worker(client, scheduler_address, tmp_path / "late") as joined:
                assert cached_digests(client, digest)[joined] == f"{digest} 0o444"
        finally:
            withdraw_inputs(client, names)
    # one copy (the scheduler's, for workers joining later) and a few parts in flight; read
    # whole, pickled and sent on, it took about six
    assert grew < SIZE + 64 * 2**20, f"the driver grew by {grew / SIZE:.2f} times the input"


@contextlib.contextmanager
def joining_worker(client: Client, address: str, folder: Path) -> Iterator[str]:
    """A `dask worker` process that joins the scheduler now (its address), ended and gone from
    the scheduler afterwards: the test's cluster is shared by other tests."""
    before = set(client.scheduler_info()["workers"])
    folder.mkdir()
    args = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1"]
    args += ["--no-nanny", "--no-dashboard", "--local-directory", str(folder)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (joined := set(client.scheduler_info()["workers"]) - before):
            assert process.poll() is None and time.monotonic() < deadline, "no worker joined"
            time.sleep(0.1)
        (worker,) = joined
        yield worker
    finally:
        process.kill()  # the process this test started, alone
        process.wait()
        deadline = time.monotonic() + 60
        while set(client.scheduler_info()["workers"]) - before and time.monotonic() < deadline:
            time.sleep(0.1)


def test_an_input_changed_since_it_was_digested_reaches_no_worker(big_input, scheduler_address):
    command, digest = big_input
    stale = CommandSpec(**{**command.__dict__, "files": (("big.bin", "0" * 64),)})
    with Client(scheduler_address) as client:
        with pytest.raises(CampaignError) as caught:
            ship_inputs(client, stale)
        assert str(caught.value) == (
            f"{command.inputs[0].path} changed since the run started; run again to take the "
            "change in"
        )
        assert set(cached_digests(client, "0" * 64).values()) == {"missing"}
        plugins = client.run_on_scheduler(
            lambda dask_scheduler: list(dask_scheduler.worker_plugins)
        )
        assert not [name for name in plugins if name.startswith("campaign-input")]


def test_a_worker_joining_after_another_run_of_the_same_input_ended_still_gets_it(
    tmp_path, scheduler_address
):
    """Two runs on one cluster ship the same input (two specs of one simulator, two shards);
    the first to end took back the plugins both shared, and a worker joining the other run
    afterwards (a restarted one) lacked the input: each of its tasks failed."""
    path = tmp_path / "sim.sh"
    path.write_text("echo v=1\n")
    command = CommandSpec(
        argv=("/bin/sh", "sim.sh"),
        program=None,
        inputs=(InputFile("sim.sh", str(path)),),
        files=(("sim.sh", file_digest(path)),),
    )
    digest = file_digest(path)
    with Client(scheduler_address) as client:
        running = ship_inputs(client, command)
        try:
            withdraw_inputs(client, ship_inputs(client, command))  # the other run, ended
            with joining_worker(client, scheduler_address, tmp_path / "late") as joined:
                assert cached_digests(client, digest)[joined] == f"{digest} 0o444"
        finally:
            withdraw_inputs(client, running)


def campaign_plugins(client: Client) -> list[str]:
    names = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins))
    return [name for name in names if name.startswith("campaign-input")]


def test_the_inputs_a_killed_run_left_on_the_scheduler_are_taken_back_by_the_next(
    tmp_path, scheduler_address
):
    """A driver killed before it withdrew its inputs (SIGKILL) left them on the scheduler,
    which held a copy of each input per such run and gave them to every worker joining later;
    the next run takes back those of runs whose client is gone, and leaves the others'."""
    path = tmp_path / "sim.sh"
    path.write_text("echo v=2\n")
    command = CommandSpec(
        argv=("/bin/sh", "sim.sh"),
        program=None,
        inputs=(InputFile("sim.sh", str(path)),),
        files=(("sim.sh", file_digest(path)),),
    )
    with Client(scheduler_address) as killed:
        left = ship_inputs(killed, command)  # never withdrawn: its driver was killed
    with Client(scheduler_address) as living, Client(scheduler_address) as client:
        assert set(left) <= set(campaign_plugins(client))
        other = ship_inputs(living, command)
        try:
            assert not set(left) & set(campaign_plugins(client))
            names = ship_inputs(client, command)
            try:
                assert set(campaign_plugins(client)) == {*other, *names}
            finally:
                withdraw_inputs(client, names)
        finally:
            withdraw_inputs(living, other)
