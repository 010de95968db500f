"""Programs as models: a Python script, a shell script and a C simulator, each task in its own
folder with its inputs, metrics read from stdout (JSON or key=value), a file or a parser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.plan.plan import make_plan

STDLIB = sys.stdlib_module_names

SCRIPT = """
import json, os, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
platform = json.load(open("data/platform.json"))
seed = int(args["--seed"])
print("simulating", args)
print(json.dumps({
    "mean_wait": float(args["--load"]) * (seed % 1000) + platform["nodes"],
    "policy_code": {"fcfs": 1, "easy": 2}[args["--policy"]],
    "in_own_folder": float(os.getcwd() == args["--dir"] and not os.listdir(".") == []),
}))
"""


def expected_wait(load, seed):
    return load * (seed % 1000) + 64


@pytest.fixture
def python_sim(tmp_path):
    (tmp_path / "sim.py").write_text(textwrap.dedent(SCRIPT))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "platform.json").write_text('{"nodes": 64}')
    return tmp_path


def test_a_python_script_runs_in_its_own_folder_with_its_inputs(
    python_sim, write_spec, scheduler_address
):
    spec = write_spec(
        """
        name: script
        model:
          command: [python3, sim.py, --load, "{load}", --policy, "{policy}", --seed, "{seed}",
                    --dir, "{dir}"]
          inputs: [sim.py, data/platform.json]
        factors:
          load: [0.5, 0.9]
          policy: [fcfs, easy]
        paired: [policy]
        replicates: 3
        seed: 11
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert int((data.status == 1).sum()) == 12
    for load in (0.5, 0.9):
        for policy, code in (("fcfs", 1), ("easy", 2)):
            cell = data.sel(load=load, policy=policy)
            seeds = cell.seed.values
            assert cell.mean_wait.values.tolist() == [expected_wait(load, s) for s in seeds]
            assert cell.policy_code.values.tolist() == [code] * 3
            assert cell.in_own_folder.values.tolist() == [1.0] * 3
    # paired policy: both policies see the same seeds
    assert (data.seed.sel(policy="fcfs") == data.seed.sel(policy="easy")).all()
    again = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert again.mean_wait.equals(data.mean_wait)  # nothing reran: the same stored numbers


def test_a_shell_script_with_key_value_lines_and_a_template(
    tmp_path, write_spec, scheduler_address
):
    script = tmp_path / "sim.sh"
    script.write_text(
        "#!/bin/sh\n"
        "rate=$(sed -n 's/.*\"rate\": \\([0-9.]*\\).*/\\1/p' options.json)\n"
        "echo starting\n"
        'echo "rate_read=$rate"\n'
        'echo "seed_mod=$(( $1 % 97 ))"\n'
        'echo "rep=$2"\n'
        "grep -q '\"{kept}\"' options.json && echo literal_kept=1\n"
    )
    script.chmod(0o755)
    (tmp_path / "options.json").write_text('{"rate": {rate}, "literal": "{{kept}}"}\n')
    spec = write_spec(
        """
        name: shell
        model:
          command: [sim.sh, "{seed}", "{replicate}"]
          templates: [options.json]
        factors:
          rate: [1.5, 2.5]
        replicates: 2
        seed: 3
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    for rate in (1.5, 2.5):
        cell = data.sel(rate=rate)
        assert cell.seed_mod.values.tolist() == [s % 97 for s in cell.seed.values]
        assert cell.rep.values.tolist() == [0, 1]
        assert cell.rate_read.values.tolist() == [rate, rate]
        assert cell.literal_kept.values.tolist() == [1, 1]


C_SIM = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    unsigned long long seed = strtoull(argv[1], 0, 10);
    double load = atof(argv[2]);
    FILE *out = fopen("result.csv", "w");
    fprintf(out, "makespan,jobs\n%.17g,%llu\n", load * (double)(seed % 10007), seed % 13);
    fclose(out);
    return 0;
}
"""


def compile_c(folder, source, name="sim"):
    (folder / f"{name}.c").write_text(source)
    subprocess.run(["cc", "-O2", "-o", str(folder / name), str(folder / f"{name}.c")], check=True)
    return folder / name


def test_a_c_simulator_writes_its_metrics_to_a_file(tmp_path, write_spec, scheduler_address):
    compile_c(tmp_path, C_SIM)
    spec = write_spec(
        """
        name: csim
        model:
          command: [./sim, "{seed}", "{load}"]
          metrics: {file: result.csv}
          declare: {makespan: {units: s, long_name: time the last job ends}, jobs: {}}
        factors:
          load: [0.25, 4]
        replicates: 4
        seed: 99
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    for load in (0.25, 4):
        cell = data.sel(load=load)
        assert cell.makespan.values.tolist() == [load * (s % 10007) for s in cell.seed.values]
        assert cell.jobs.values.tolist() == [s % 13 for s in cell.seed.values]
    assert data.makespan.attrs["units"] == "s"
    assert data.makespan.attrs["long_name"] == "time the last job ends"


def test_a_parser_reads_the_task_folder(tmp_path, write_spec, scheduler_address, monkeypatch):
    (tmp_path / "myparser.py").write_text(
        "def metrics(folder):\n"
        "    words = (folder / 'stdout').read_text().split()\n"
        "    lines = (folder / 'log.txt').read_text().splitlines()\n"
        "    return {'words': len(words), 'log_lines': len(lines)}\n"
    )
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = write_spec(
        """
        name: parsed
        model:
          command: [/bin/sh, -c, "echo one two three; seq {lines} > log.txt", sh]
          metrics: {parse: "myparser:metrics"}
        factors:
          lines: [2, 5]
        replicates: 1
        seed: 1
        output: out
        """
    )
    data = campaign.run(spec, workers=1, progress=False)
    assert data.words.values.ravel().tolist() == [3.0, 3.0]
    assert data.log_lines.values.ravel().tolist() == [2.0, 5.0]


def spec_error(write_spec, text):
    with pytest.raises(CampaignError) as caught:
        make_plan(write_spec(text))
    message = str(caught.value)
    assert "\n" not in message
    return message


BASE = """
name: bad
model:
  command: {command}
  inputs: {inputs}
factors:
  load: [1, 2]
replicates: 1
seed: 1
"""


@pytest.mark.parametrize(
    "command, inputs, expected",
    [
        ('[python3, sim.py, "{lod}"]', "[sim.py]", "placeholder {lod} names nothing; allowed:"),
        ("[python3, sim.py]", "[sim.py]", "factor 'load' is used by no placeholder"),
        (
            "[python3, sim.py, {load}]",
            "[sim.py]",
            'model.command: {load} unquoted is a YAML mapping, not an argument: write "{load}"',
        ),
        ('[python3, sim.py, "{load}"]', "[sim.py, nothere.json]", "'nothere.json' is not found"),
        ('[no-such-program-x, "{load}"]', "[]", "program 'no-such-program-x' not found in the"),
        ('[python3, sim.py, "{load}"]', "[]", "'sim.py' is a file beside the spec but not among"),
    ],
)
def test_a_bad_command_is_refused_in_one_line_before_any_work(
    python_sim, write_spec, command, inputs, expected
):
    message = spec_error(write_spec, BASE.format(command=command, inputs=inputs))
    assert expected in message
    assert not (python_sim / "outputs").exists()


UNSEEDED = """
name: unseeded
model:
  command: [python3, sim.py, --load, "{load}"]
  inputs: [sim.py]
factors:
  load: [1, 2]
seed: 1
"""


@pytest.mark.parametrize(
    ("replicates", "what"),
    [
        ("replicates: 3", "replicates: 3"),
        (
            "precision: {metrics: wait, half_width: 0.1, max_replicates: 40}",
            "precision.max_replicates: up to 40",
        ),
        ("select: {metric: wait, goal: min, indifference: 1}", "select.max_replicates: up to 1000"),
    ],
)
def test_replicates_of_a_program_that_sees_no_seed_are_refused(
    python_sim, write_spec, replicates, what
):
    """Every replicate would run the same command: identical replicates, an interval of +-0
    (or, for a program seeding itself from the clock, numbers no rerun gives again)."""
    message = spec_error(write_spec, UNSEEDED + replicates + "\n")
    assert message.endswith(
        f"{what} replicates of a program that sees no seed would each run the same command "
        "(none of {replicate}, {seed}, {seed31}, {task} is in model.command, model.env or a "
        'template); pass the task\'s seed to the program (say --seed, "{seed}"), or set '
        "replicates: 1 if the program is deterministic"
    )
    assert not (python_sim / "outputs").exists()


@pytest.mark.parametrize(
    "change",
    [
        ("replicates: 3", "replicates: 1"),  # a deterministic program, run once
        ('"{load}"]', '"{load}", "{seed31}"]'),
        ("  inputs:", '  env: {SIM_SEED: "{seed}"}\n  inputs:'),
        ("inputs: [sim.py]", "inputs: [sim.py]\n  templates: [run.cfg]"),
    ],
)
def test_a_seed_reaching_the_program_anywhere_lets_replicates_run(python_sim, write_spec, change):
    (python_sim / "run.cfg").write_text("replicate = {replicate}\n")
    plan = make_plan(write_spec((UNSEEDED + "replicates: 3\n").replace(*change)))
    assert plan.spec.command.seeded or plan.spec.replicates == 1


@pytest.mark.parametrize(
    ("parser", "problem"),
    [
        (
            "no_such_parser:metrics",
            "cannot import module 'no_such_parser' (No module named 'no_such_parser'); the "
            "module must be importable where campaign runs (on PYTHONPATH or an installed "
            "package)",
        ),
        ("json:no_such_function", "module 'json' has no function 'no_such_function'"),
    ],
)
def test_a_metrics_parser_that_cannot_be_loaded_is_refused_by_validate(
    python_sim, write_spec, capsys, parser, problem
):
    """validate said the spec was valid; run refused it, having made the output folder. The
    standard library's modules stay as they were loaded (a parser of the standard library is
    never imported afresh: this process lost ``warnings`` and ``re``)."""
    loaded = {name: module for name, module in sys.modules.items() if name in STDLIB}
    text = BASE.format(command='[python3, sim.py, "{load}"]', inputs="[sim.py]")
    spec = write_spec(text.replace("  inputs:", f"  metrics: {{parse: {parser}}}\n  inputs:"))
    for command in ("validate", "run"):
        assert main([command, str(spec)]) == 2
        assert capsys.readouterr().err == (
            f"campaign: error: {spec}: model.metrics.parse: model {parser!r}: {problem}\n"
        )
    assert not (python_sim / "outputs").exists()
    assert all(sys.modules.get(name) is module for name, module in loaded.items())


def test_a_program_outside_the_spec_folder_by_a_relative_path_is_refused(tmp_path, write_spec):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "sim").write_text("#!/bin/sh\necho y=1\n")
    (tmp_path / "bin" / "sim").chmod(0o755)
    (tmp_path / "project").mkdir()
    text = BASE.format(command='[../bin/sim, "{load}"]', inputs="[]")
    message = spec_error(lambda t: write_spec(t, "project/spec.yaml"), text)
    assert message.endswith(
        f"model.command: program '../bin/sim' is outside the spec's folder {tmp_path / 'project'}: "
        f"write its absolute path ({tmp_path / 'bin' / 'sim'}: each worker runs the file at that "
        "path) or put it in the spec's folder (then sent to every worker)"
    )
    text = BASE.format(command=f'["{tmp_path}/bin/sim", "{{load}}"]', inputs="[]")
    plan = make_plan(write_spec(text, "project/spec.yaml"))
    assert plan.tasks == 2


PLATFORMS = """
name: platforms
model:
  command: [./sim.sh, "{platform}"]
  inputs: INPUTS
factors:
  platform: [./small.txt, ./large.txt]
replicates: 1
seed: 1
output: out
"""


def test_a_level_naming_a_file_beside_the_spec_must_be_an_input(
    tmp_path, write_spec, capsys, scheduler_address
):
    """A factor's values ./small.txt and ./large.txt, given to the program: the task read the
    spec's own copy (the value made absolute), which nothing digested: after small.txt went
    from 1 to 9, status and run said nothing and results.nc kept 1. Now such a value is
    refused unless listed among the inputs, and listed, a change to it is seen."""
    (tmp_path / "sim.sh").write_text(
        '#!/bin/sh\necho "y=$(cat "$1")"\n'
        'case "$1" in "$PWD"/*) echo own=1;; *) echo own=0;; esac\n'
    )
    (tmp_path / "sim.sh").chmod(0o755)
    (tmp_path / "small.txt").write_text("1\n")
    (tmp_path / "large.txt").write_text("2\n")
    spec = write_spec(PLATFORMS.replace("INPUTS", "[sim.sh]"))
    assert main(["validate", str(spec)]) == 2
    assert capsys.readouterr().err.endswith(
        "factors.platform: './small.txt' is a file beside the spec but not among model.inputs; "
        "list it there so that each task's folder has it and a change to it is seen\n"
    )
    spec = write_spec(PLATFORMS.replace("INPUTS", "[sim.sh, small.txt, large.txt]"))
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.y.values.ravel().tolist() == [1, 2]
    assert data.own.values.ravel().tolist() == [1, 1]  # the task's own copy, as digested
    (tmp_path / "small.txt").write_text("9\n")
    with pytest.raises(CampaignError, match=r"computed before the program or its inputs changed"):
        campaign.run(spec, scheduler=scheduler_address, progress=False)
    again = campaign.run(spec, scheduler=scheduler_address, progress=False, on_change="rerun")
    assert again.y.values.ravel().tolist() == [9, 2]


def test_an_unquoted_placeholder_in_env_is_refused_with_the_way_out(python_sim, write_spec):
    """YAML reads ``{cores}`` unquoted as a mapping: the line says to quote it."""
    text = BASE.format(command='[python3, sim.py, "{load}"]', inputs="[sim.py]")
    text = text.replace("  inputs:", "  env: {OMP_NUM_THREADS: {cores}}\n  inputs:")
    message = spec_error(write_spec, text)
    assert message.endswith(
        "model.env.OMP_NUM_THREADS: {cores} unquoted is a YAML mapping, not a value: "
        'write "{cores}"'
    )


def test_a_param_no_placeholder_uses_is_refused(python_sim, write_spec):
    """results.nc would record a value the program never saw (it ran with its own default)."""
    text = BASE.format(command='[python3, sim.py, "{load}"]', inputs="[sim.py]")
    message = spec_error(write_spec, text + "params: {jobs: 2000}\n")
    assert message.endswith(
        "param 'jobs' is used by no placeholder of the command, its templates or model.env, "
        "so the program never sees it: use {jobs}, or leave it out of params"
    )


def test_a_factor_marked_as_a_label_may_go_unused(python_sim, write_spec):
    text = BASE.format(command="[python3, sim.py]", inputs="[sim.py]")
    text = text.replace("  inputs:", "  labels: [load]\n  inputs:")
    make_plan(write_spec(text))


def test_a_placeholder_in_a_template_that_names_nothing_is_refused(python_sim, write_spec):
    (python_sim / "options.json").write_text('{"x": {loda}}')
    text = BASE.format(command='[python3, sim.py, "{load}"]', inputs="[sim.py]")
    text = text.replace("  inputs:", "  templates: [options.json]\n  inputs:")
    message = spec_error(write_spec, text)
    assert "model.templates: options.json: placeholder {loda} names nothing" in message


def test_metrics_from_outputs_reads_each_form():
    from campaign.execute.command_metrics import metrics_from_outputs
    from campaign.spec.command_model import MetricsSource

    stdout = MetricsSource()
    assert metrics_from_outputs(stdout, {"stdout": b'{"a": 1, "b": 2.5}'}) == {"a": 1.0, "b": 2.5}
    assert metrics_from_outputs(stdout, {"stdout": b"log\na=1\nb = 2e3\n"}) == {"a": 1, "b": 2000}
    assert metrics_from_outputs(stdout, {"stdout": b'step 1\n{"a": 3}\n'}) == {"a": 3.0}
    csv_file = MetricsSource("file", "r.csv")
    assert metrics_from_outputs(csv_file, {"files/r.csv": b"a,b\n1,2\n"}) == {"a": 1.0, "b": 2.0}
    for outputs, words in [
        ({"stdout": b"segmentation fault"}, "stdout holds no metrics"),
        ({"stdout": b'{"a": "x"}'}, "metric 'a' is 'x', not a number"),
        ({"stdout": b"a=fast"}, "metric 'a' is 'fast', not a number"),
        ({"stdout": b""}, "stdout is empty"),
    ]:
        with pytest.raises(ValueError, match=words):
            metrics_from_outputs(stdout, outputs)
    with pytest.raises(ValueError, match="r.csv was not kept for this task"):
        metrics_from_outputs(csv_file, {"stdout": b""})


def test_results_file_records_the_program_and_its_digests(tmp_path, write_spec, scheduler_address):
    compile_c(tmp_path, C_SIM)
    spec = write_spec(
        """
        name: provenance
        model:
          command: [./sim, "{seed}", "1"]
          metrics: {file: result.csv}
          version: [sh, -c, "echo sim 1.2"]
        replicates: 1
        seed: 1
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.attrs["model"] == "command"
    assert data.attrs["model_reference"] == "./sim {seed} 1"
    assert data.attrs["program_version"] == "sim 1.2"
    files = json.loads(data.attrs["model_code_files"])
    assert set(files) == {"sim"}
    assert np.isfinite(data.makespan.values).all()


def test_shards_of_a_program_merge_into_the_whole_campaign(tmp_path, write_spec, scheduler_address):
    from campaign.pipelines.merge import merge

    compile_c(tmp_path, C_SIM)
    text = """
        name: sharded
        model:
          command: [./sim, "{seed}", "{load}"]
          metrics: {file: result.csv}
        factors:
          load: [0.25, 4, 9]
        replicates: 3
        seed: 7
        output: out
        """
    spec = write_spec(text)
    whole = campaign.run(spec, scheduler=scheduler_address, progress=False, output=tmp_path / "w")
    for shard in ("1/2", "2/2"):
        campaign.run(spec, scheduler=scheduler_address, progress=False, shard=shard)
    merged = merge(sorted((tmp_path / "out").glob("shard-*")), tmp_path / "merged").dataset
    assert merged.makespan.equals(whole.makespan) and merged.seed.equals(whole.seed)


def run_one(tmp_path, text, script, key="k"):
    """One task of a program through the worker's own function, outside Dask."""
    from campaign.execute.worker import run_batch
    from campaign.plan.command_declaration import worker_model
    from campaign.plan.program_sources import command_sources
    from campaign.spec.load import load_spec

    (tmp_path / "run.sh").write_text(script)
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(text))
    spec = load_spec(tmp_path / "spec.yaml")
    command = worker_model(spec, command_sources(spec.command))
    _, results, *_ = run_batch(command, [(key, {}, 5, 0)], None)
    return results[0]


OUTPUTS = """
name: kept
model:
  command: [/bin/sh, run.sh]
  inputs: [run.sh]
  keep: {keep}
  keep_limit: {limit}
replicates: 1
seed: 1
"""


def test_a_finished_task_keeps_the_outputs_keep_names(tmp_path):
    script = "echo '{\"a\": 1}'; echo note >&2; echo x,y > r.csv; echo z > other.txt\n"
    result = run_one(tmp_path, OUTPUTS.format(keep="[stdout, '*.csv']", limit="1kB"), script)
    assert result["status"] == "ok" and result["metrics"] == {"a": 1.0}
    assert result["outputs"] == {"stdout": b'{"a": 1}\n', "files/r.csv": b"x,y\n"}


def test_a_failed_task_keeps_its_stdout_and_stderr(tmp_path):
    result = run_one(tmp_path, OUTPUTS.format(keep="[]", limit="1kB"), "echo out; echo err >&2")
    assert result["status"] == "failed"
    assert result["outputs"] == {"stdout": b"out\n", "stderr": b"err\n"}
    ok = run_one(tmp_path, OUTPUTS.format(keep="[]", limit="1kB"), "echo a=1")
    assert ok["status"] == "ok" and "outputs" not in ok  # by default a finished task keeps none


def test_outputs_over_the_keep_limit_fail_the_task_in_one_line(tmp_path):
    script = "head -c 3000 /dev/zero > big.bin; echo a=1\n"
    result = run_one(tmp_path, OUTPUTS.format(keep="['*.bin']", limit="2kB"), script)
    assert result["status"] == "failed"
    assert result["error"] == (
        "the outputs to keep are 3,000 bytes, over the limit of 2,000 bytes per task "
        "(model.keep_limit)"
    )


def test_a_running_copy_told_to_skip_its_task_ends_its_program(tmp_path, scheduler_address):
    from distributed import Client

    from campaign.execute.worker import run_batch, skip_tasks
    from campaign.spec.command_model import parse_command

    pids = tmp_path / "pids"
    pids.mkdir()
    command = parse_command(
        {"command": ["/bin/sh", "-c", f"echo $$ > {pids}/g; sleep 3041 & sleep 3041"]},
        {},
        [],
        tmp_path,
        CampaignError,
    )
    with Client(scheduler_address) as client:
        future = client.submit(run_batch, command, [("k", {}, 1, 0)], "copy", key="copy")
        while not (pids / "g").exists() or not (pids / "g").read_text().strip():
            time.sleep(0.05)
        (worker,) = [w for w, keys in client.processing().items() if "copy" in keys]
        client.run(skip_tasks, "copy", ["k"], workers=[worker])
        _, results, *_ = future.result(timeout=30)
    assert results[0]["status"] == "skipped"
    group = int((pids / "g").read_text())
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)


def test_a_shell_line_and_a_free_port(tmp_path, write_spec, scheduler_address):
    spec = write_spec(
        """
        name: shellline
        model:
          command: "echo got {name} >&2; python3 -c \\"import socket, sys;
            s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); print('port_ok=1')\\"
            {port}"
          shell: true
        factors:
          name: ["1; echo injected=1", "2"]
        replicates: 1
        seed: 1
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.port_ok.values.ravel().tolist() == [1.0, 1.0]
    assert "injected" not in data  # a value is one word of the line, quoted


def test_a_program_runs_precision_rounds_as_a_model_does(tmp_path, write_spec, scheduler_address):
    (tmp_path / "noise.py").write_text(
        "import random, sys\n"
        "r = random.Random(int(sys.argv[1]))\n"
        "print(f'y={float(sys.argv[2]) + r.gauss(0, 1)!r}')\n"
    )
    spec = write_spec(
        """
        name: rounds
        model:
          command: [python3, noise.py, "{seed}", "{mu}"]
          inputs: [noise.py]
        factors:
          mu: [10, 20]
        precision: {metrics: [y], half_width: 0.1, min_replicates: 3, max_replicates: 9}
        seed: 3
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    done = data.status.values == 1
    assert done.sum(axis=1).min() >= 3 and done.sum(axis=1).max() <= 9
    assert done[:, :3].all()
    import random

    for i, mu in enumerate((10, 20)):
        ran = done[i]
        seeds = data.seed.values[i][ran]
        expected = [mu + random.Random(int(s)).gauss(0, 1) for s in seeds]
        assert data.y.values[i][ran].tolist() == expected
