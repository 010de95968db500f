"""What a program's results depend on, digested so that a change never hides behind stored
results: the program a shell line runs, each version a factor names (only its own tasks go
stale), its shared libraries and interpreter, and the environment ``env:`` sets."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.errors import CampaignError
from campaign.plan.plan import make_plan
from campaign.plan.program_sources import command_sources
from campaign.plan.runtime import digest, runtime_files
from campaign.plan.sources import combined_digest, file_digest
from campaign.spec.describe import describe_spec
from campaign.spec.load import load_spec
from tests.conftest import dask_cluster, read_notes

C_SIM = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    unsigned long long seed = strtoull(argv[1], 0, 10);
    printf("v=%d\nvalue=%llu\n", VERSION, seed % 1000 + 1000 * VERSION);
    return 0;
}
"""


def build(path: Path, version: int, source: str = C_SIM, *flags: str) -> Path:
    """Compile a C program printing ``version`` (``flags``: more for cc)."""
    source_file = path.with_name(path.name + ".c")
    source_file.write_text(source)
    command = ["cc", f"-DVERSION={version}", "-o", str(path), str(source_file), *flags]
    subprocess.run(command, check=True)
    return path


def run(spec: Path, scheduler: str | None = None, **options):
    """The campaign run on a running cluster (``scheduler``), or on an embedded one of one
    worker."""
    where = {"scheduler": scheduler} if scheduler else {"workers": 1}
    return campaign.run(spec, progress=False, **where, **options)


def stored_sources(output: Path) -> dict:
    return json.loads((output / "campaign.json").read_text())["sources"]


def write(folder: Path, text: str) -> Path:
    path = folder / "spec.yaml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture(scope="module")
def path_cluster(tmp_path_factory):
    """A folder put first on PATH, and a cluster of one worker process started with that PATH
    (the tests' programs on PATH are found there): one for the module's tests."""
    folder = tmp_path_factory.mktemp("bin")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
        cluster = dask_cluster(1)
    with cluster:
        yield folder, cluster.scheduler_address


@pytest.fixture
def on_path(path_cluster, monkeypatch) -> tuple[Path, str]:
    """The folder put first on PATH here too, emptied, and the address of the cluster whose
    worker has it on its PATH."""
    folder, address = path_cluster
    for program in folder.iterdir():
        program.unlink()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder, address


def test_a_program_a_shell_line_runs_from_path_is_digested(tmp_path, on_path):
    on_path, scheduler = on_path
    build(on_path / "campaign-sim", 1)
    spec = write(
        tmp_path,
        """
        name: shellpath
        model:
          command: 'campaign-sim "{seed}" | cat'
          shell: true
        replicates: 2
        seed: 2
        output: out
        """,
    )
    assert run(spec, scheduler).v.values.tolist() == [1.0, 1.0]
    programs = stored_sources(tmp_path / "out")["programs"]
    assert programs["campaign-sim"]["campaign-sim"] == file_digest(on_path / "campaign-sim")
    assert programs["campaign-sim"]["libc.so.6"] == digest(
        os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")
    )
    build(on_path / "campaign-sim", 2)  # recompiled: results would mix two versions
    with pytest.raises(
        CampaignError,
        match=r"2 stored results were computed before program campaign-sim changed; rerun with",
    ):
        run(spec, scheduler)
    assert run(spec, scheduler, on_change="rerun").v.values.tolist() == [2.0, 2.0]


FACTOR_SPEC = """
name: versions
model:
  command: ["{sim}", "{seed}", "{load}"]
factors:
  sim: {v1: ./mw.v1, v2: ./mw, installed: campaign-mw}
  load: [1, 2]
paired: [sim]
replicates: 3
seed: 4
output: out
"""


def test_a_factor_names_the_program_and_a_change_makes_only_its_tasks_stale(
    tmp_path, on_path, capsys
):
    on_path, scheduler = on_path
    from campaign.cli.main import main

    build(tmp_path / "mw.v1", 1)
    build(tmp_path / "mw", 2)
    build(on_path / "campaign-mw", 5)
    spec = write(tmp_path, FACTOR_SPEC)
    assert main(["validate", str(spec)]) == 0
    assert (
        "  program: {sim} names one of ./mw.v1 (with the inputs), ./mw (with the inputs), "
        f"campaign-mw (on PATH here: {on_path / 'campaign-mw'})\n"
    ) in capsys.readouterr().out
    data = run(spec, scheduler)
    assert data.v.sel(sim="v1").values.ravel().tolist() == [1.0] * 6
    assert data.v.sel(sim="v2").values.ravel().tolist() == [2.0] * 6
    assert data.v.sel(sim="installed").values.ravel().tolist() == [5.0] * 6
    seeds = data.seed.sel(sim="v1").values
    assert (data.seed.sel(sim="v2").values == seeds).all()  # paired: the versions compared
    assert data.value.sel(sim="v2").values.tolist() == (seeds % 1000 + 2000).tolist()
    stored = stored_sources(tmp_path / "out")
    assert set(stored["programs"]) == {"./mw.v1", "./mw", "campaign-mw"}
    assert stored["programs"]["./mw"]["./mw"] == file_digest(tmp_path / "mw")
    assert "mw" not in stored["model_files"]  # each version apart from the code of every task

    build(tmp_path / "mw", 3)  # one version recompiled: only its 6 tasks are stale
    note = (
        "results.nc holds 6 of its 18 results computed before program ./mw changed: they are "
        f"stale; `campaign run {tmp_path / 'out'} --rerun-changed` computes them again"
    )
    assert read_notes(tmp_path / "out", "value") == ([note], [note])
    with pytest.raises(
        CampaignError, match=r"^\S+: 6 stored results were computed before program ./mw changed;"
    ):
        run(spec, scheduler)
    again = run(spec, scheduler, on_change="rerun")
    assert again.v.sel(sim="v2").values.ravel().tolist() == [3.0] * 6
    for untouched in ("v1", "installed"):
        assert again.value.sel(sim=untouched).equals(data.value.sel(sim=untouched))
    records = campaign.open_results(tmp_path / "out")  # which run computed each task
    ledger = [
        json.loads(line)
        for path in (tmp_path / "out" / "ledger").glob("*.jsonl")
        for line in path.read_text().splitlines()
    ]
    runs = {(r["cell"]["sim"], r["run"]) for r in ledger if r.get("status") == "ok"}
    assert len({run for sim, run in runs if sim == "v2"}) == 1  # v2's six, in the rerun alone
    assert not {run for sim, run in runs if sim == "v2"} & {run for sim, run in runs if sim != "v2"}
    assert records.value.sel(sim="v2").values.tolist() == (seeds % 1000 + 3000).tolist()

    build(on_path / "campaign-mw", 6)  # the one on PATH, likewise
    plan = make_plan(spec, on_change="rerun")
    assert len(plan.changed) == 6
    assert plan.change.describe("command") == "program campaign-mw changed"


def test_rerun_changed_runs_with_where_the_levels_chosen(tmp_path, on_path, capsys):
    on_path, scheduler = on_path
    from campaign.cli.main import main

    build(tmp_path / "mw.v1", 1)
    build(tmp_path / "mw", 2)
    build(on_path / "campaign-mw", 5)
    spec = write(tmp_path, FACTOR_SPEC.replace("replicates: 3", "replicates: 2"))
    first = run(spec, scheduler)
    build(on_path / "campaign-mw", 6)
    build(tmp_path / "mw", 3)
    argv = ["run", str(spec), "--scheduler", scheduler, "--quiet", "--rerun-changed"]
    assert main([*argv, "--where", "sim=v1,v2"]) == 2
    assert capsys.readouterr().err == (
        f"campaign: error: {tmp_path / 'out'}: --where leaves out 4 of the 8 stored results "
        "computed before program ./mw changed and program campaign-mw changed; choose their "
        "levels too, or run without --where\n"
    )
    assert main([*argv, "--where", "sim=v2,installed", "--where", "load=1,2"]) == 0
    data = campaign.open_results(tmp_path / "out")
    assert data.v.sel(sim="v2").values.ravel().tolist() == [3.0] * 4
    assert data.v.sel(sim="installed").values.ravel().tolist() == [6.0] * 4
    assert data.value.sel(sim="v1").equals(first.value.sel(sim="v1"))
    more = write(tmp_path, FACTOR_SPEC.replace("replicates: 3", "replicates: 4"))
    assert main(["run", str(more), "--scheduler", scheduler, "--quiet", "--where", "sim=v1"]) == 0
    ran = campaign.open_results(tmp_path / "out").status.values == 1  # sim x load x replicate
    assert ran[0].all() and ran[1:, :, :2].all() and not ran[1:, :, 2:].any()
    ran = run(more, scheduler, where={"sim": ["v2"], "load": 2}).status.values == 1  # from Python
    assert ran[1, 1].all() and not ran[1, 0, 2:].any() and not ran[2, :, 2:].any()


def test_a_program_placeholder_names_programs_only(tmp_path):
    build(tmp_path / "mw.v1", 1)
    build(tmp_path / "mw", 2)
    spec = write(tmp_path, FACTOR_SPEC.replace("installed: campaign-mw", "bad: 3"))
    with pytest.raises(CampaignError) as caught:
        make_plan(spec)
    assert str(caught.value).endswith(
        "model.command: {sim} names the program, but sim has the value 3; each of its values "
        "must be a program (a file or a name on PATH)"
    )
    spec = write(tmp_path, FACTOR_SPEC.replace("campaign-mw", "no-such-campaign-mw"))
    with pytest.raises(CampaignError, match="model.command: sim: program 'no-such-campaign-mw'"):
        make_plan(spec)


def test_two_labels_naming_one_program_are_refused_before_any_work(tmp_path):
    """``sim: {a: ./mw, b: ./mw}`` with ``paired: [sim]``: both labels' tasks had one key, so
    b's ran on every run and were never stored ("2 missing", its row NaN, n 0)."""
    build(tmp_path / "mw", 2)
    spec = write(
        tmp_path,
        FACTOR_SPEC.replace("v1: ./mw.v1, v2: ./mw, installed: campaign-mw", "a: ./mw, b: ./mw"),
    )
    with pytest.raises(CampaignError) as caught:
        make_plan(spec)
    assert str(caught.value).endswith(
        "factors.sim: labels 'a' and 'b' give the same value './mw'; a design runs each level "
        "once (one label, or more replicates)"
    )
    assert not (tmp_path / "out").exists()


LIBRARY = "double factor(void) { return FACTOR; }\n"
LINKED_SIM = r"""
#include <stdio.h>
#include <stdlib.h>
double factor(void);
int main(int argc, char **argv) {
    printf("value=%.17g\n", factor() * (double)(strtoull(argv[1], 0, 10) % 1000));
    return 0;
}
"""


def build_library(folder: Path, factor: str) -> Path:
    (folder / "foo.c").write_text(LIBRARY)
    library = folder / "libfoo.so"
    command = ["cc", "-shared", "-fPIC", f"-DFACTOR={factor}", "-o", str(library)]
    subprocess.run([*command, str(folder / "foo.c")], check=True)
    return library


def test_a_changed_shared_library_is_refused_like_a_recompiled_binary(tmp_path, scheduler_address):
    libraries, project = tmp_path / "lib", tmp_path / "project"
    libraries.mkdir()
    project.mkdir()
    library = build_library(libraries, "1.5")
    rpath = f"-Wl,-rpath,{libraries}"
    build(project / "sim", 0, LINKED_SIM, f"-L{libraries}", "-lfoo", rpath)
    spec = write(
        project,
        """
        name: linked
        model:
          command: [./sim, "{seed}"]
        replicates: 3
        seed: 8
        output: out
        """,
    )
    data = run(spec, scheduler_address)
    assert data.value.values.tolist() == [1.5 * (s % 1000) for s in data.seed.values.tolist()]
    # the program's code digest is what it always was: its own file alone
    stored = stored_sources(project / "out")
    assert stored["model_code"] == combined_digest({"sim": file_digest(project / "sim")})
    assert stored["programs"]["./sim"]["libfoo.so"] == file_digest(library)
    provenance = json.loads(xr.open_dataset(project / "out" / "results.nc").attrs["program_files"])
    assert provenance["./sim"]["libfoo.so"] == file_digest(library)
    assert provenance["./sim"]["libc.so.6"] == stored["programs"]["./sim"]["libc.so.6"]

    build_library(libraries, "2.5")  # an upgrade of the library, the binary untouched
    with pytest.raises(
        CampaignError,
        match=r"3 stored results were computed before what ./sim runs changed \(libfoo.so\);",
    ):
        run(spec, scheduler_address)
    again = run(spec, scheduler_address, on_change="rerun")
    assert again.value.values.tolist() == [2.5 * (s % 1000) for s in again.seed.values.tolist()]


def test_a_library_ld_preload_names_is_digested_with_the_program(tmp_path, scheduler_address):
    libraries, preloaded, project = tmp_path / "lib", tmp_path / "pre", tmp_path / "project"
    for folder in (libraries, preloaded, project):
        folder.mkdir()
    build_library(libraries, "1.5")
    override = build_library(preloaded, "3.0")  # its factor() wins over libfoo's
    rpath = f"-Wl,-rpath,{libraries}"
    build(project / "sim", 0, LINKED_SIM, f"-L{libraries}", "-lfoo", rpath)
    text = f"""
        name: preloaded
        model:
          command: [./sim, "{{seed}}"]
          env: {{LD_PRELOAD: {override}}}
        replicates: 2
        seed: 8
        output: out
        """
    spec = write(project, text)
    data = run(spec, scheduler_address)
    assert data.value.values.tolist() == [3.0 * (s % 1000) for s in data.seed.values.tolist()]
    assert stored_sources(project / "out")["programs"]["./sim"][str(override)] == file_digest(
        override
    )
    build_library(preloaded, "1000.0")  # the preloaded library rebuilt, its path the same
    with pytest.raises(
        CampaignError,
        match=rf"2 stored results were computed before what ./sim runs changed \({override}\);",
    ):
        run(spec, scheduler_address)
    again = run(spec, scheduler_address, on_change="rerun")
    assert again.value.values.tolist() == [1000.0 * (s % 1000) for s in again.seed.values.tolist()]


def test_a_binary_a_launcher_runs_is_digested_with_its_libraries(tmp_path, scheduler_address):
    libraries, project = tmp_path / "lib", tmp_path / "project"
    libraries.mkdir()
    project.mkdir()
    library = build_library(libraries, "1.5")
    build(project / "sim", 0, LINKED_SIM, f"-L{libraries}", "-lfoo", f"-Wl,-rpath,{libraries}")
    spec = write(
        project,
        """
        name: launched
        model:
          command: [timeout, 60, ./sim, "{seed}"]
          inputs: [sim]
        replicates: 2
        seed: 8
        output: out
        """,
    )
    data = run(spec, scheduler_address)
    assert data.value.values.tolist() == [1.5 * (s % 1000) for s in data.seed.values.tolist()]
    programs = stored_sources(project / "out")["programs"]
    assert set(programs) == {"timeout", "sim"}  # the launcher, and the binary it runs
    assert programs["sim"]["libfoo.so"] == file_digest(library)
    build_library(libraries, "2.5")
    with pytest.raises(CampaignError, match=r"before what sim runs changed \(libfoo.so\);"):
        run(spec, scheduler_address)


def test_an_interpreter_and_its_libraries_are_digested_with_the_script(tmp_path):
    (tmp_path / "sim.sh").write_text('#!/bin/sh\necho "x=$1"\n')
    (tmp_path / "sim.sh").chmod(0o755)
    (tmp_path / "sim.py").write_text("import sys\nprint(f'y={sys.argv[1]}')\n")
    spec = write(
        tmp_path,
        """
        name: scripts
        model:
          command: ["{program}", "{seed}"]
        factors:
          program: [./sim.sh, python3]
        replicates: 1
        seed: 3
        output: out
        """,
    )
    programs = make_plan(spec).sources.programs
    shell = programs["./sim.sh"]
    assert shell["#! /bin/sh"] == file_digest(os.path.realpath("/bin/sh"))
    assert shell["libc.so.6"] == file_digest(os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6"))
    python = programs["python3"]
    import shutil

    assert python["python3"] == file_digest(os.path.realpath(shutil.which("python3")))
    assert "libc.so.6" in python


def test_env_sets_variables_for_the_program_and_a_change_makes_results_stale(
    tmp_path, scheduler_address
):
    (tmp_path / "sim.sh").write_text('#!/bin/sh\necho "mode=$MODE"; echo "got_n=$N"; echo "c=$C"\n')
    (tmp_path / "sim.sh").chmod(0o755)
    text = """
        name: environment
        model:
          command: [./sim.sh]
          env: {MODE: 7, N: "{n}", C: "{cores}", SEED: "{seed}"}
        factors:
          n: [1, 2]
        replicates: 2
        seed: 1
        output: out
        """
    spec = write(tmp_path, text)
    assert "\n  env: MODE=7, N={n}, C={cores}, SEED={seed}\n" in describe_spec(load_spec(spec))
    data = run(spec, scheduler_address)
    assert data.mode.values.ravel().tolist() == [7.0] * 4
    assert data.got_n.values.tolist() == [[1.0, 1.0], [2.0, 2.0]]
    assert data.c.values.ravel().tolist() == [1.0] * 4
    assert "env MODE" in json.loads(data.attrs["model_code_files"])
    spec = write(tmp_path, text.replace("MODE: 7", "MODE: 8"))
    with pytest.raises(
        CampaignError,
        match=r"4 stored results were computed before the program or its inputs changed "
        r"\(env MODE\)",
    ):
        run(spec, scheduler_address)
    assert run(spec, scheduler_address, on_change="rerun").mode.values.ravel().tolist() == [8.0] * 4


def test_results_stored_before_programs_were_digested_are_kept(tmp_path, scheduler_address):
    build(tmp_path / "sim", 1)
    spec = write(
        tmp_path,
        """
        name: older
        model:
          command: [./sim, "{seed}"]
        replicates: 2
        seed: 2
        output: out
        """,
    )
    first = run(spec, scheduler_address)
    path = tmp_path / "out" / "campaign.json"
    older = json.loads(path.read_text())
    del older["sources"]["programs"]  # as a campaign.json written before it was kept
    path.write_text(json.dumps(older))
    # nothing to compare the libraries with: nothing refused, nothing reruns
    again = run(spec, scheduler_address)
    assert np.array_equal(again.value.values, first.value.values)
    assert "./sim" in stored_sources(tmp_path / "out")["programs"]


def test_shards_run_with_other_libraries_are_not_merged(tmp_path, scheduler_address):
    from campaign.pipelines.merge import merge

    libraries, project = tmp_path / "lib", tmp_path / "project"
    libraries.mkdir()
    project.mkdir()
    build_library(libraries, "1.5")
    build(project / "sim", 0, LINKED_SIM, f"-L{libraries}", "-lfoo", f"-Wl,-rpath,{libraries}")
    spec = write(
        project,
        """
        name: shards
        model:
          command: [./sim, "{seed}"]
        replicates: 4
        seed: 8
        output: out
        """,
    )
    run(spec, scheduler_address, shard="1/2")
    build_library(libraries, "2.5")  # the second shard's machine has another build
    run(spec, scheduler_address, shard="2/2")
    with pytest.raises(CampaignError) as caught:
        merge(sorted((project / "out").glob("shard-*")), tmp_path / "merged")
    assert str(caught.value).endswith(
        "(program ./sim ran with other files: libfoo.so differ); run every shard with the same "
        "programs"
    )


def test_a_library_installed_after_a_run_that_missed_it_is_found_by_the_next_run(tmp_path):
    """One session: the first run's tasks fail as the loader finds no libfoo.so; once it is
    built, the next run of the same session finds it too. This process kept the first
    resolution, "not found", while new workers found the library: their copy was taken for
    another version and the run refused every worker ("restart the workers")."""
    libraries, project = tmp_path / "lib", tmp_path / "project"
    libraries.mkdir()
    project.mkdir()
    library = build_library(libraries, "1.5")
    rpath = f"-Wl,-rpath,{libraries}"
    build(project / "sim", 0, LINKED_SIM, f"-L{libraries}", "-lfoo", rpath)
    library.unlink()
    spec = write(
        project,
        """
        name: linked
        model:
          command: [./sim, "{seed}"]
        replicates: 2
        seed: 8
        output: out
        """,
    )
    first = run(spec, keep_going=True)
    assert first.attrs["tasks_ok"] == 0
    assert stored_sources(project / "out")["programs"]["./sim"]["libfoo.so"] == "not found"
    build_library(libraries, "1.5")
    again = run(spec, on_change="rerun")
    assert again.value.values.tolist() == [1.5 * (s % 1000) for s in again.seed.values.tolist()]
    assert stored_sources(project / "out")["programs"]["./sim"]["libfoo.so"] == file_digest(library)


def test_a_library_of_the_spec_folder_is_digested_or_refused_unless_an_input(tmp_path):
    """A library built in the project (``project/lib/libfoo.so``, reached through RUNPATH or
    LD_LIBRARY_PATH) was left out of the digests as if it were an input: a rebuild of it kept
    the old library's results current, and results.nc did not name it. Now a program run
    where it is (by absolute path, or on PATH) has it digested; one placed with the inputs,
    whose copy a worker runs, is refused until it is listed; listed, it is an input."""
    project = tmp_path / "project"
    libraries = project / "lib"
    libraries.mkdir(parents=True)
    library = build_library(libraries, "1.5")
    build(project / "sim", 0, LINKED_SIM, f"-L{libraries}", "-lfoo", f"-Wl,-rpath,{libraries}")
    text = """
        name: linked
        model:
          command: [%s, "{seed}"]
          inputs: [%s]
        replicates: 1
        seed: 8
        """

    def sources(program: str, inputs: str):
        return command_sources(load_spec(write(project, text % (program, inputs))).command)

    where = sources(str(project / "sim"), "").programs[str(project / "sim")]
    assert where["libfoo.so"] == file_digest(library)
    with pytest.raises(CampaignError) as refused:
        sources("./sim", "sim")
    assert str(refused.value) == (
        "model.inputs: ./sim loads libfoo.so from the spec's folder (lib/libfoo.so), which is "
        "not among the inputs: list it there, so that it travels with the program and a "
        "rebuild of it is seen"
    )
    listed = sources("./sim", "sim, lib/libfoo.so")
    assert "libfoo.so" not in listed.programs["./sim"]
    assert listed.code["lib/libfoo.so"] == file_digest(library)


def test_a_library_put_first_on_ld_library_path_is_seen_by_the_same_session(tmp_path, monkeypatch):
    """A copy of the library put in a folder LD_LIBRARY_PATH names before the installed one
    (a rebuilt SimGrid, say) is what the program loads from then on; a session (a notebook, a
    script running two campaigns) kept the first resolution, so its next run took results of
    the old library as current and named the old library in results.nc."""
    first, installed, project = tmp_path / "first", tmp_path / "lib", tmp_path / "project"
    for folder in (first, installed, project):
        folder.mkdir()
    build_library(installed, "1.5")
    build(project / "sim", 0, LINKED_SIM, f"-L{installed}", "-lfoo")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{first}{os.pathsep}{installed}")
    assert runtime_files(str(project / "sim"))["libfoo.so"] == file_digest(installed / "libfoo.so")
    copy = build_library(first, "2.5")
    assert runtime_files(str(project / "sim"))["libfoo.so"] == file_digest(copy)
