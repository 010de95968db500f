"""A program's ``version:`` command: its answer is the version, a failure is one error before
any work, and one that hangs (or leaves a child holding its output) is ended in bounded time
with its whole process group."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

import campaign
from campaign.errors import CampaignError
from campaign.plan import version
from campaign.plan.plan import make_plan

SPEC = """
name: versioned
model:
  command: [sh, -c, "echo x=1", sh, "{{seed}}"]
  version: {version}
replicates: 1
seed: 1
output: out
"""


def alive_with(word: str) -> list[int]:
    """Live processes (not zombies) whose command line holds ``word``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if word in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def test_the_version_is_what_the_command_prints(write_spec, tmp_path, scheduler_address):
    spec = write_spec(SPEC.format(version='[sh, -c, "echo sim 2.1; echo ignored >&2"]'))
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.attrs["program_version"] == "sim 2.1"


def test_a_failing_version_command_is_one_error_before_any_work(write_spec, tmp_path):
    spec = write_spec(SPEC.format(version='[sh, -c, "echo no such option >&2; exit 3"]'))
    with pytest.raises(CampaignError) as caught:
        campaign.run(spec, workers=1, progress=False)
    assert str(caught.value) == (
        "model.version: sh -c 'echo no such option >&2; exit 3' exited with code 3; stderr: "
        "no such option; fix the command or remove model.version"
    )
    assert not list((tmp_path / "out").glob("ledger/*.jsonl"))
    silent = write_spec(SPEC.format(version='["true"]'))
    with pytest.raises(CampaignError, match=r"^model.version: true printed nothing; it must"):
        make_plan(silent)


def test_a_version_command_naming_a_level_is_refused_when_the_spec_is_read(write_spec, tmp_path):
    """``version: ["{sim}", --version]`` with the versions as a factor: `validate` said the
    spec was valid, then `run` stopped on "'{sim}' --version cannot start: [Errno 2] No such
    file or directory: '{sim}'". A shell's own ``${HOME}`` stays as it is."""
    for name in ("sim-a", "sim-b"):
        (tmp_path / name).write_text("#!/bin/sh\necho y=1\n")
        (tmp_path / name).chmod(0o755)
    text = (
        'name: v\nmodel:\n  command: ["{sim}", "{seed}"]\n  version: VERSION\n'
        "factors:\n  sim: {a: ./sim-a, b: ./sim-b}\nreplicates: 1\nseed: 1\noutput: out\n"
    )
    spec = write_spec(text.replace("VERSION", '["{sim}", --version]'))
    with pytest.raises(CampaignError) as caught:
        campaign.validate(spec)
    assert str(caught.value).endswith(
        "model.version: {sim} is not filled: the version command runs once per plan, in the "
        "spec's folder, not per task or per level; name the program ([./sim, --version])"
    )
    seeded = write_spec(text.replace("VERSION", '[sh, -c, "echo {seed}"]'))
    with pytest.raises(CampaignError, match=r"model.version: \{seed\} is not filled"):
        campaign.validate(seeded)
    shell = write_spec(text.replace("VERSION", '[sh, -c, "echo sim ${HOME}"]'))
    assert make_plan(shell).plan.sources.version.startswith("sim /")


def gone_soon(word: str, seconds: float = 5.0) -> None:
    """No live process holds ``word`` once a killed one has had time to end (a SIGKILL is
    delivered, not waited for)."""
    deadline = time.monotonic() + seconds
    while alive_with(word) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive_with(word) == []


def marker() -> int:
    """A sleep's length no other run of these tests uses (its command line tells it apart)."""
    return random.randrange(100_000, 999_999)


def test_a_child_holding_the_output_does_not_hold_the_run(write_spec):
    child = f"sleep {marker()}"
    spec = write_spec(SPEC.format(version=f'[sh, -c, "({child}; echo late) & echo sim 3"]'))
    start = time.monotonic()
    plan = make_plan(spec)
    assert time.monotonic() - start < 5
    assert plan.sources.version == "sim 3"
    gone_soon(child)  # the child left behind was ended with its group


def test_a_hanging_version_command_is_ended_with_its_group(write_spec, monkeypatch):
    monkeypatch.setattr(version, "VERSION_SECONDS", 1.0)
    one, two = f"sleep {marker()}", f"sleep {marker()}"
    spec = write_spec(SPEC.format(version=f'[sh, -c, "{one} & {two}; echo v"]'))
    start = time.monotonic()
    with pytest.raises(CampaignError) as caught:
        make_plan(spec)
    assert time.monotonic() - start < 5
    assert str(caught.value) == (
        f"model.version: sh -c '{one} & {two}; echo v' did not exit within 1 s "
        "(ended); a version command must print the version and exit"
    )
    gone_soon(one)
    gone_soon(two)
