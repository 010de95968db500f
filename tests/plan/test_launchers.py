"""A program a launcher runs (``[timeout, 60, env, X=1, mysim]``, ``mpirun -n 2 mysim``) is
digested as the command's own program: recompiled, it makes the stored results stale."""

from __future__ import annotations

import pytest

from campaign.errors import CampaignError
from campaign.spec.launchers import launched_programs, launched_words
from campaign.spec.load import load_spec
from tests.plan.test_program_provenance import build, on_path, path_cluster, run, write

__all__ = ["on_path", "path_cluster"]  # the fixtures this module's tests use


@pytest.mark.parametrize(
    "command, words",
    [
        ("timeout -s KILL 60 env -u HOME X=1 mysim --seed 1", (["env", "mysim"], False)),
        ("nice -n 5 taskset -c 0-3 mysim", (["taskset", "mysim"], False)),
        ("numactl --physcpubind=0 -m 0 stdbuf -oL mysim", (["stdbuf", "mysim"], False)),
        ("chrt -f 99 /opt/sim/bin/mysim", (["/opt/sim/bin/mysim"], False)),
        ("mpirun -n 2 --map-by core mysim -x", (["2", "core", "mysim"], True)),
        ("srun --ntasks=4 mysim", (["mysim"], True)),
        ("python3 sim.py", ([], False)),  # no launcher: the script is among the inputs
    ],
)
def test_the_word_a_launcher_runs_is_found(command, words):
    assert launched_words(command.split()) == words


def test_a_program_on_path_that_launchers_run_is_digested(tmp_path, on_path):
    on_path, scheduler = on_path
    build(on_path / "campaign-launched", 1)
    spec = write(
        tmp_path,
        """
        name: launched
        model:
          command: [timeout, "60", env, X=1, campaign-launched, "{seed}"]
        replicates: 2
        seed: 4
        output: out
        """,
    )
    assert load_spec(spec).command.launched[-1].path == str(on_path / "campaign-launched")
    assert run(spec, scheduler).v.values.tolist() == [1.0, 1.0]
    build(on_path / "campaign-launched", 2)  # recompiled: results would mix two versions
    with pytest.raises(CampaignError, match=r"before program campaign-launched changed;"):
        run(spec, scheduler)
    assert run(spec, scheduler, on_change="rerun").v.values.tolist() == [2.0, 2.0]


def test_the_programs_a_placeholder_gives_a_launcher_are_each_digested(tmp_path, on_path):
    on_path, scheduler = on_path
    build(on_path / "campaign-a", 1)
    build(on_path / "campaign-b", 2)
    spec = write(
        tmp_path,
        """
        name: launched
        model:
          shell: true
          command: 'timeout 60 {sim} "{seed}" | cat'
        factors:
          sim: [campaign-a, campaign-b]
        replicates: 1
        seed: 4
        output: out
        """,
    )
    assert [p.name for p in load_spec(spec).command.launched] == ["campaign-a", "campaign-b"]
    assert run(spec, scheduler).v.values.ravel().tolist() == [1.0, 2.0]
    build(on_path / "campaign-b", 3)
    with pytest.raises(CampaignError, match=r"before program campaign-b changed;"):
        run(spec, scheduler)


def test_a_program_a_launcher_runs_that_is_not_found_is_refused(tmp_path):
    spec = write(
        tmp_path,
        """
        name: launched
        model:
          command: [timeout, "60", campaign-nowhere, "{seed}"]
        replicates: 1
        seed: 4
        """,
    )
    with pytest.raises(CampaignError) as refused:
        load_spec(spec)
    assert str(refused.value).endswith(
        "model.command: 'campaign-nowhere', the program timeout runs, is not found on PATH "
        "here; its changes would go unseen: install it, or write its path"
    )


def test_a_file_of_the_tasks_folder_that_a_launcher_runs_is_an_input():
    def fail(message: str) -> ValueError:
        return ValueError(message)

    for words in (["timeout", "60", "{dir}/sim"], ["env", "X=1", "./sim-{v}"]):
        assert launched_programs(words, {"v": ["a"]}, {"sim"}, fail) == ()
    with pytest.raises(ValueError, match=r"'sim-\{v\}', cannot hold a placeholder"):
        launched_programs(["timeout", "60", "sim-{v}"], {"v": ["a"]}, set(), fail)
