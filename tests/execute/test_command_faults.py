"""Faults of programs as models: each fails its task in one line (exit code or signal and the
end of stderr), retried only when another try may differ, and no process of a task outlives
it: past --task-timeout, cancelled, or when the driver is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def failures(output: Path) -> list[str]:
    errors = xr.load_dataset(output / "results.nc", group="failures").failure_error.values
    return sorted(str(e) for e in errors)


def records(output: Path) -> list[dict]:
    found = []
    for path in (output / "ledger").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line:
                found.append(json.loads(line))
    return found


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def processes_with(word: str) -> list[int]:
    """Live processes (not zombies) whose command line holds ``word``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if word in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def is_sleep(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep")
    except OSError:
        return False


def wait_until_gone(groups: list[int], word: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(group_alive(g) for g in groups) and not processes_with(word):
            return
        time.sleep(0.1)
    alive = [g for g in groups if group_alive(g)]
    raise AssertionError(f"left running: groups {alive}, processes {processes_with(word)}")


def test_a_program_forking_children_past_the_timeout_leaves_no_process(tmp_path, write_spec):
    pids = tmp_path / "pids"
    pids.mkdir()
    spec = write_spec(
        f"""
        name: forks
        model:
          command: [/bin/sh, -c, "echo $$ > {pids}/{{task}}; if [ {{hang}} = 1 ]; then
            echo waiting for the license server >&2;
            sleep 3017 & sleep 3017 & setsid sleep 3017 & sleep 3017; fi; echo ok=1", sh]
        factors:
          hang: [0, 1]
        replicates: 2
        seed: 4
        output: out
        """
    )
    data = campaign.run(spec, workers=2, task_timeout=3, retries=0, progress=False)
    assert data.status.sel(hang=0).values.tolist() == [1, 1]
    assert data.status.sel(hang=1).values.tolist() == [2, 2]
    for error in failures(tmp_path / "out"):  # with what it printed, as an exit's failure
        assert "ran longer than the task timeout of 3 s" in error
        assert error.endswith("; stderr: waiting for the license server")
    stuck = [r for r in records(tmp_path / "out") if r["status"] == "failed"]
    assert [r["outputs"]["members"]["stderr"]["size"] for r in stuck] == [31, 31]
    groups = [int(path.read_text()) for path in pids.iterdir()]
    assert len(groups) >= 4
    wait_until_gone(groups, "sleep 3017")


def test_a_daemon_a_finished_program_left_ends_on_a_worker_kept_after_the_run(
    write_spec, scheduler_address
):
    """A program that starts a child in a session of its own (`setsid`, a daemon) and exits:
    the child is out of the program's process group, and on a worker that outlives the run
    (a cluster started by hand) it ran on after the campaign ended. It ends with the run, as
    on the embedded cluster, whose workers end with the run."""
    spec = write_spec(
        """
        name: daemon
        model:
          command: [/bin/sh, -c, "setsid sleep 3047 </dev/null >/dev/null 2>&1 & sleep 0.3;
            echo v={replicate}"]
        replicates: 3
        seed: 4
        output: out
        """
    )
    try:
        data = campaign.run(spec, scheduler=scheduler_address, progress=False)
        assert data.v.values.tolist() == [0, 1, 2]
        wait_until_gone([], "sleep 3047", seconds=5)
    finally:
        for pid in processes_with("sleep 3047"):  # what this test's programs left, if any
            if is_sleep(pid):
                os.kill(pid, signal.SIGKILL)


SPAWNER = """
import subprocess, time

def run(params, seed):
    subprocess.Popen(["sleep", "3019"])
    subprocess.Popen(["setsid", "sleep", "3019"])
    if params["hang"]:
        time.sleep(300)
    return {"x": 1.0}
"""


def test_a_python_model_starting_subprocesses_past_the_timeout_leaves_none(
    tmp_path, write_spec, monkeypatch
):
    (tmp_path / "spawner.py").write_text(textwrap.dedent(SPAWNER))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), str(tmp_path)]))
    spec = write_spec(
        """
        name: spawner
        model: spawner:run
        factors:
          hang: [false, true]
        replicates: 1
        seed: 4
        output: out
        """
    )
    data = campaign.run(spec, workers=1, task_timeout=3, retries=0, progress=False)
    assert data.status.values.ravel().tolist() == [1, 2]
    # the hung task's worker process was ended with every process it started; the finished
    # task's subprocesses die with the cluster's worker processes, when the run ends
    wait_until_gone([], "sleep 3019")


EXITS = """
name: exits
model:
  command: [/bin/sh, exits.sh, "{{how}}", "{{seed}}", {marks}]
  inputs: [exits.sh]
factors:
  how: [ok, code, sigkill, sigkill_once, sigsegv]
replicates: 1
seed: 2
output: out
"""

EXIT_SCRIPT = (
    'case $1 in ok) echo v=1;; code) echo "line one" >&2; echo "bad load 7" >&2; exit 3;; '
    "sigkill) kill -9 $$;; sigkill_once) if [ -e $3/$2 ]; then echo v=2; "
    "else touch $3/$2; kill -9 $$; fi;; sigsegv) kill -11 $$;; esac"
)


def test_exit_codes_and_signals_fail_in_one_line_and_only_sigkill_is_tried_again(
    tmp_path, write_spec, scheduler_address
):
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "exits.sh").write_text(EXIT_SCRIPT)
    spec = write_spec(EXITS.format(marks=marks))
    data = campaign.run(spec, scheduler=scheduler_address, retries=2, progress=False)
    status = dict(zip(data.how.values.tolist(), data.status.values.ravel().tolist()))
    assert status == {"ok": 1, "code": 2, "sigkill": 2, "sigkill_once": 1, "sigsegv": 2}
    assert data.v.sel(how="sigkill_once").item() == 2.0
    assert failures(tmp_path / "out") == [
        "/bin/sh exited with code 3; stderr: line one | bad load 7",
        "/bin/sh was killed by SIGKILL; stderr was empty",
        "/bin/sh was killed by SIGSEGV; stderr was empty",
    ]
    tries = {r["cell"]["how"]: r["attempts"] for r in records(tmp_path / "out")}
    # an exit code or a segfault comes back the same: tried once; SIGKILL (the OOM killer)
    # is tried again, up to --retries 2 more times
    assert tries == {"ok": 1, "code": 1, "sigkill": 3, "sigkill_once": 2, "sigsegv": 1}


SEGFAULT = r"""
#include <stdio.h>
int main(int argc, char **argv) {
    fprintf(stderr, "about to crash\n");
    fflush(stderr);
    volatile int *nowhere = 0;
    *nowhere = 1;
    return 0;
}
"""


def test_a_segfaulting_c_program_fails_with_the_signals_name(
    tmp_path, write_spec, scheduler_address
):
    (tmp_path / "crash.c").write_text(SEGFAULT)
    subprocess.run(
        ["cc", "-O0", "-o", str(tmp_path / "crash"), str(tmp_path / "crash.c")], check=True
    )
    spec = write_spec(
        """
        name: crash
        model:
          command: [./crash, "{seed}"]
        replicates: 2
        seed: 2
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.status.values.tolist() == [2, 2]
    assert (
        failures(tmp_path / "out") == ["./crash was killed by SIGSEGV; stderr: about to crash"] * 2
    )


@pytest.mark.parametrize(
    "command, metrics, error",
    [
        ("echo hello", "stdout", "stdout holds no metrics (expected a JSON object, key=value"),
        ("echo '{\"a\": [1]}'", "stdout", "metric 'a' is declared a number (kind: scalar"),
        ("echo a=1", "{file: out.json}", "the program wrote no out.json in its folder"),
        ('echo \'{"a": 1, "b": 2}\'', "stdout", "metric 'b' is not declared in model.declare"),
        ("echo '{\"b\": 2}'", "stdout", "metric 'b' is not declared in model.declare (a)"),
        ("echo '{\"x\" 1}'", "stdout", "stdout is not valid JSON"),
    ],
)
def test_garbage_and_missing_outputs_fail_the_task_in_one_line(
    tmp_path, write_spec, scheduler_address, command, metrics, error
):
    quoted = command.replace('"', '\\"')
    spec = write_spec(
        f"""
        name: garbage
        model:
          command: [/bin/sh, -c, "{quoted}"]
          metrics: {metrics}
          declare: {{a: {{units: s}}}}
        replicates: 1
        seed: 2
        output: out
        """
    )
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    (found,) = failures(tmp_path / "out")
    assert error in found and "\n" not in found


def test_a_huge_stdout_neither_blocks_nor_fills_memory(tmp_path, write_spec, scheduler_address):
    spec = write_spec(
        """
        name: huge
        model:
          command: [/bin/sh, -c, "yes 'a line of log' | head -c 60000000; echo; echo done=1",
                    "{seed}"]
        replicates: 2
        seed: 2
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.done.values.tolist() == [1.0, 1.0]
    peaks = [r["peak_memory"] for r in records(tmp_path / "out")]
    assert all(0 < peak < 2_000_000_000 for peak in peaks)


C_V1 = '#include <stdio.h>\nint main(void) { printf("v=1\\n"); return 0; }\n'
C_V2 = '#include <stdio.h>\nint main(void) { printf("v=2\\n"); return 0; }\n'


def test_a_recompiled_binary_is_refused_like_changed_code(tmp_path, write_spec, scheduler_address):
    def build(source):
        (tmp_path / "sim.c").write_text(source)
        subprocess.run(["cc", "-o", str(tmp_path / "sim"), str(tmp_path / "sim.c")], check=True)

    build(C_V1)
    spec = write_spec(
        """
        name: rebuilt
        model:
          command: [./sim, "{seed}"]
        replicates: 2
        seed: 2
        output: out
        """
    )
    assert campaign.run(spec, scheduler=scheduler_address, progress=False).v.values.tolist() == [
        1.0,
        1.0,
    ]
    build(C_V2)
    with pytest.raises(
        CampaignError,
        match=r"2 stored results were computed before the program "
        r"or its inputs changed \(sim\); rerun with on_change='rerun'",
    ):
        campaign.run(spec, scheduler=scheduler_address, progress=False)
    again = campaign.run(spec, scheduler=scheduler_address, progress=False, on_change="rerun")
    assert again.v.values.tolist() == [2.0, 2.0]


def test_a_cancelled_task_ends_its_whole_process_group(tmp_path, scheduler_address):
    from distributed import Client

    from campaign.execute.worker import run_batch
    from campaign.spec.command_model import parse_command

    def fail(message):
        return CampaignError(message)

    pids = tmp_path / "pids"
    pids.mkdir()
    command = parse_command(
        {"command": ["/bin/sh", "-c", f"echo $$ > {pids}/g; sleep 3023 & sleep 3023"]},
        {},
        [],
        tmp_path,
        fail,
    )
    with Client(scheduler_address) as client:
        future = client.submit(run_batch, command, [("k", {}, 1, 0)], "cancel-me", key="cancel-me")
        deadline = time.monotonic() + 30
        while not (pids / "g").exists() or not (pids / "g").read_text().strip():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        group = int((pids / "g").read_text())
        assert group_alive(group)
        future.cancel()
        wait_until_gone([group], "sleep 3023", seconds=5)


KILL_SPEC = """
name: killed
model:
  command: [/bin/sh, -c, "echo $$ > {pids}/{{task}}; sleep 0.0{{pause}};
    if [ -n \\"$HOLD\\" ] && [ {{replicate}} -ge 10 ]; then sleep 3031; fi; echo v={{replicate}}",
    sh]
factors:
  pause: [2, 3]
replicates: 20
seed: 9
output: {output}
"""


@pytest.fixture(scope="module")
def kill_folder(tmp_path_factory, scheduler_address) -> Path:
    """A folder with ``pids/`` and the undisturbed run of KILL_SPEC (``clean/``), run once on
    the shared cluster for both ways of stopping the driver."""
    folder = tmp_path_factory.mktemp("stopped")
    (folder / "pids").mkdir()
    clean = folder / "clean.yaml"
    clean.write_text(KILL_SPEC.format(pids=folder / "pids", output=folder / "clean"))
    campaign.run(clean, scheduler=scheduler_address, progress=False)
    return folder


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM])
def test_a_stopped_driver_leaves_no_program_and_a_rerun_ends_as_an_undisturbed_run(
    kill_folder, scheduler_address, stop
):
    """The killed run's programs hang from replicate 10 on (HOLD set), so the driver stops
    while they run: none is left afterwards (each runs in a session of its own, out of reach
    of a signal to the driver's group), and the rerun ends as an undisturbed run (the same
    spec run once for the module, undisturbed). The driver is a process of its own, as only
    a real process can be stopped; the rerun and the undisturbed run use the shared cluster."""
    pids = kill_folder / "pids"
    for path in pids.iterdir():  # the groups of this test's run alone
        path.unlink()
    killed = kill_folder / f"killed-{stop.name}.yaml"
    output = kill_folder / f"killed-{stop.name}"
    killed.write_text(KILL_SPEC.format(pids=pids, output=output))
    command = [sys.executable, "-m", "campaign", "run", "--workers", "2", "--quiet"]
    process = subprocess.Popen(
        [*command, str(killed)],
        env={**os.environ, "PYTHONPATH": str(REPO), "HOLD": "1"},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    try:
        while len([p for p in processes_with("sleep 3031") if is_sleep(p)]) < 2:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        if stop == signal.SIGKILL:  # the driver and its cluster's processes, at once
            os.killpg(process.pid, signal.SIGKILL)
        else:  # the driver alone: it stops its cluster
            os.kill(process.pid, stop)
        process.wait(timeout=60)
    groups = [int(text) for path in pids.iterdir() if (text := path.read_text().strip())]
    assert groups
    wait_until_gone(groups, "sleep 3031")
    assert main(["run", str(killed), "--scheduler", scheduler_address, "--quiet"]) == 0
    left = xr.load_dataset(output / "results.nc")
    right = xr.load_dataset(kill_folder / "clean" / "results.nc")
    assert int((left.status == 1).sum()) == 40
    assert left.v.equals(right.v) and left.seed.equals(right.seed)
    assert (left.v.values == left.replicate.values).all()


def test_a_straggling_copy_that_lost_is_ended_with_its_group(tmp_path, write_spec):
    """Tail replication copies a straggling task to an idle worker; the copy wins, and the
    straggler's whole process group ends with its cancelled batch: the run does not wait."""
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "slow.sh"
    script.write_text(
        'if [ "$2" = 0 ] && [ ! -e "$3/$1" ]; then touch "$3/$1"; echo $$ > "$3/$1.group";\n'
        "  sleep 3043 & sleep 3043; fi\nsleep 0.2; echo v=$2\n"
    )
    spec = write_spec(
        f"""
        name: straggler
        model:
          command: [/bin/sh, slow.sh, "{{task}}", "{{replicate}}", {marks}]
          inputs: [slow.sh]
        replicates: 12
        seed: 6
        output: out
        """
    )
    started = time.monotonic()
    data = campaign.run(spec, workers=2, batch_size=1, progress=False)
    assert time.monotonic() - started < 120
    assert data.v.values.tolist() == list(range(12))
    (group,) = [int(path.read_text()) for path in marks.glob("*.group")]
    wait_until_gone([group], "sleep 3043")
