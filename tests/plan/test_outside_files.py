"""A file a program reads by an absolute path, given by a factor's value or written in the
command, is digested as an input is: an edit makes stale the results of the cells that read
it, and `--rerun-changed` computes those again."""

from __future__ import annotations

import textwrap

import pytest
import yaml

import campaign
from campaign.errors import CampaignError
from campaign.plan.outside_files import outside_values
from campaign.plan.program_sources import command_sources
from campaign.plan.sources import file_digest
from campaign.spec.describe import describe_spec
from campaign.spec.load import load_spec

SIM = """
import sys
print("value=%s" % sum(float(open(path).read()) for path in sys.argv[1:]))
"""

SPEC = """
name: outside
model:
  command: [python3, sim.py, "{{platform}}", {fixed}]
  inputs: [sim.py]
factors:
  platform: [{data}/small.txt, {data}/large.txt]
replicates: 1
seed: 1
output: out
"""


def test_files_named_by_absolute_path_are_digested(tmp_path, scheduler_address):
    data, project = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    project.mkdir()
    for name, value in (("small", 5), ("large", 50), ("fixed", 1000)):
        (data / f"{name}.txt").write_text(str(value))
    (project / "sim.py").write_text(textwrap.dedent(SIM))
    spec = project / "spec.yaml"
    spec.write_text(SPEC.format(data=data, fixed=data / "fixed.txt"))

    def run(**options):
        result = campaign.run(spec, scheduler=scheduler_address, progress=False, **options)
        return result.value.values.ravel().tolist()

    assert run() == [1005.0, 1050.0]
    (data / "small.txt").write_text("7")  # a level's file: that cell alone is stale
    with pytest.raises(CampaignError, match=r"1 stored result was computed before input file "):
        run()
    assert run(on_change="rerun") == [1007.0, 1050.0]
    (data / "fixed.txt").write_text("2000")  # the command's own: every cell
    with pytest.raises(CampaignError, match=r"2 stored results were computed before the program"):
        run()
    assert run(on_change="rerun") == [2007.0, 2050.0]


def test_a_file_an_option_names_after_its_equals_sign_is_digested_or_refused(tmp_path):
    """`--platform=/data/cluster.xml` (SimGrid's and many simulators' form) is read as
    `--platform /data/cluster.xml` is: digested, so an edit of the platform makes the results
    stale (it was not, and the old numbers stayed current); `--platform=cluster.xml`, a file
    beside the spec, must be among the inputs."""
    data, project = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    project.mkdir()
    (data / "cluster.xml").write_text("<platform/>")
    (project / "cluster.xml").write_text("<platform/>")
    (project / "sim.py").write_text(textwrap.dedent(SIM))
    text = """
        name: option
        model:
          command: [python3, sim.py, "--platform=%s", "--cfg=network/model:CM02", "{seed}"]
          inputs: [sim.py]
        replicates: 1
        seed: 1
        """
    spec = project / "spec.yaml"
    spec.write_text(textwrap.dedent(text % (data / "cluster.xml")))
    code = command_sources(load_spec(spec).command).code
    assert code[str(data / "cluster.xml")] == file_digest(data / "cluster.xml")
    spec.write_text(textwrap.dedent(text % "cluster.xml"))
    refused = r"model.command: 'cluster.xml' \(in '--platform=cluster.xml'\) is a file beside"
    with pytest.raises(CampaignError, match=refused):
        load_spec(spec)


def test_a_shell_line_names_files_by_absolute_path_as_a_command_does(tmp_path):
    """A file a shell line's word names by absolute path (alone, as an option's value, or a
    ``NAME=/path`` assignment's) is digested with the program, as a command's argument is:
    it was not, and an edited platform kept the stored numbers current. The target of an
    output redirection (written, not read), a word the shell expands and a folder are not."""
    data, project = tmp_path / "data", tmp_path / "project"
    (data / "out").mkdir(parents=True)
    project.mkdir()
    for name in ("cluster.xml", "deploy.xml", "conf.ini", "written.txt", "log.txt"):
        (data / name).write_text(name)
    (project / "sim.py").write_text(textwrap.dedent(SIM))
    line = (
        f"CONF={data}/conf.ini python3 sim.py {data}/cluster.xml --deploy={data}/deploy.xml "
        f'"{{seed}}" $HOME{data}/cluster.xml {data}/out 2>{data}/written.txt '
        f"| tee -a {data}/log.txt"
    )
    spec = project / "spec.yaml"
    model = {"command": line, "shell": True, "inputs": ["sim.py"]}
    spec.write_text(yaml.safe_dump({"name": "shell", "model": model, "replicates": 1, "seed": 1}))
    command = load_spec(spec).command
    code = command_sources(command).code
    read = [str(data / name) for name in ("cluster.xml", "conf.ini", "deploy.xml")]
    assert sorted(name for name in code if name.startswith("/")) == sorted(read)
    assert code[str(data / "cluster.xml")] == file_digest(data / "cluster.xml")
    shown = f"  files by path: {', '.join(sorted(read))} (digested; read on each worker)"
    assert shown in describe_spec(load_spec(spec)).splitlines()


def test_the_files_cp_mv_and_dd_write_in_a_shell_line_are_no_inputs(tmp_path):
    """``cp out.txt /data/latest.txt``, ``mv``, ``dd of=``: the files they write (and take
    away, ``mv``'s) were digested as files the program reads, and the first batch that wrote
    one stopped the run (`files ... changed while a batch of it ran`). What ``cp`` and ``dd``
    read is still digested."""
    data, project = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    project.mkdir()
    names = ("base.xml", "latest.txt", "copy.xml", "moved.txt", "old.txt", "in.bin", "out.bin")
    for name in names:
        (data / name).write_text(name)
    (project / "sim.py").write_text(textwrap.dedent(SIM))
    line = (
        f"python3 sim.py {data}/base.xml > out.txt && cp out.txt {data}/latest.txt; "
        f"cp -p {data}/base.xml {data}/copy.xml; mv {data}/old.txt {data}/moved.txt; "
        f"dd if={data}/in.bin of={data}/out.bin"
    )
    spec = project / "spec.yaml"
    model = {"command": line, "shell": True, "inputs": ["sim.py"]}
    spec.write_text(yaml.safe_dump({"name": "cp", "model": model, "replicates": 1, "seed": 1}))
    code = command_sources(load_spec(spec).command).code
    read = sorted(str(data / name) for name in ("base.xml", "in.bin"))
    assert sorted(name for name in code if name.startswith("/")) == read


def test_files_env_values_name_by_absolute_path_are_digested(tmp_path):
    """A file an ``env:`` value names by absolute path (the value, a word of it, an option's
    value in it, a part of a ``:``-separated list) is digested with the program: it was not,
    and an edited platform a variable names kept the stored numbers current. A folder (a
    search path's) and a value holding a placeholder are not."""
    data, project = tmp_path / "data", tmp_path / "project"
    (data / "lib").mkdir(parents=True)
    project.mkdir()
    for name in ("cluster.xml", "a.jar", "b.jar", "sim.conf"):
        (data / name).write_text(name)
    (project / "sim.py").write_text(textwrap.dedent(SIM))
    env = {
        "SIMGRID_PLATFORM": f"{data}/cluster.xml",
        "CLASSPATH": f"{data}/a.jar:{data}/b.jar",
        "JAVA_TOOL_OPTIONS": f"-Xmx1g -Dconf={data}/sim.conf",
        "LD_LIBRARY_PATH": f"{data}/lib:/usr/lib",
        "OUT": "{dir}/out.txt",
        "LD_PRELOAD": f"{data}/a.jar",  # a library: digested as the program's
    }
    model = {"command": ["python3", "sim.py", "{seed}"], "inputs": ["sim.py"], "env": env}
    spec = project / "spec.yaml"
    spec.write_text(yaml.safe_dump({"name": "env", "model": model, "replicates": 1, "seed": 1}))
    code = command_sources(load_spec(spec).command).code
    read = sorted(str(data / name) for name in ("cluster.xml", "a.jar", "b.jar", "sim.conf"))
    assert sorted(name for name in code if name.startswith("/")) == read
    assert code[str(data / "a.jar")] == file_digest(data / "a.jar")


def test_files_a_template_names_by_absolute_path_are_digested(tmp_path):
    """A path of an existing file written literally in a template (``platform =
    /data/cluster.xml``, a JSON string, an XML attribute) is digested with the program: it
    was not, and an edited platform the template names kept the stored numbers current. A
    folder, a path a placeholder is part of, a kernel file and a missing file are not."""
    data, project = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    project.mkdir()
    for name in ("cluster.xml", "deploy.xml", "jobs.swf"):
        (data / name).write_text(name)
    (project / "sim.py").write_text(textwrap.dedent(SIM))
    (project / "options.ini").write_text(
        f"platform = {data}/cluster.xml\n"
        f'{{"deploy": "{data}/deploy.xml", "size": "{data}/{{size}}.xml"}}\n'
        f'<trace file="{data}/jobs.swf"/> <out>{data}</out> {data}/missing.txt\n'
        f"seed = {{seed}}; cpus in /proc/cpuinfo; see {data}/jobs.swf.\n"
    )
    model = {"command": ["python3", "sim.py"], "inputs": ["sim.py"], "templates": ["options.ini"]}
    spec = project / "spec.yaml"
    text = {"name": "template", "model": model, "params": {"size": "small"}, "seed": 1}
    spec.write_text(yaml.safe_dump({**text, "replicates": 1}))
    code = command_sources(load_spec(spec).command).code
    read = sorted(str(data / name) for name in ("cluster.xml", "deploy.xml", "jobs.swf"))
    assert sorted(name for name in code if name.startswith("/")) == read


def test_files_an_input_that_is_data_names_by_absolute_path_are_digested(tmp_path):
    """A ``platform.xml`` among the inputs (no template) whose ``<trace file="/data/jobs.swf"/>``
    the program follows: the trace is digested with the program, as a template's paths are;
    it was not, and `run` kept the numbers computed from the old trace as current. Code (a
    script, a Python module: it may name files it writes), an input over 1 MiB, a binary
    one and a path holding braces (no placeholder is filled in an input) are not read for it."""
    data, project = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    project.mkdir()
    for name in ("jobs.swf", "deploy.xml", "log.txt", "big.txt", "blob.txt", "run.txt"):
        (data / name).write_text(name)
    (project / "sim.py").write_text(f"LOG = '{data}/log.txt'\n" + textwrap.dedent(SIM))
    (project / "platform.xml").write_text(
        f'<platform>\n  <trace file="{data}/jobs.swf"/> <deploy>{data}/deploy.xml</deploy>\n'
        f"  <out>{data}</out> <cell>{data}/{{size}}.xml</cell>\n</platform>\n"
    )
    (project / "run.sh").write_text(f"#!/bin/sh\ncat {data}/run.txt\n")
    (project / "big.txt").write_text(f"{data}/big.txt\n" + "x" * 2**20)
    (project / "blob.bin").write_bytes(f"\0{data}/blob.txt".encode())
    inputs = ["sim.py", "platform.xml", "run.sh", "big.txt", "blob.bin"]
    model = {"command": ["python3", "sim.py", "{seed}"], "inputs": inputs}
    spec = project / "spec.yaml"
    spec.write_text(yaml.safe_dump({"name": "data", "model": model, "replicates": 1, "seed": 1}))
    code = command_sources(load_spec(spec).command).code
    read = sorted(str(data / name) for name in ("jobs.swf", "deploy.xml"))
    assert sorted(name for name in code if name.startswith("/")) == read
    assert code[str(data / "jobs.swf")] == file_digest(data / "jobs.swf")
    shown = f"  files by path: {', '.join(read)} (digested; read on each worker)"
    assert shown in describe_spec(load_spec(spec)).splitlines()


def test_a_file_named_by_a_path_a_placeholder_is_part_of_is_digested_per_cell(tmp_path):
    """``/data/{size}.xml`` in the command, an ``env`` value or a template names one file per
    cell: digested per cell, as a param's value naming a file is (it was not digested at
    all, and an edited small.xml kept the small cell's numbers current). A path holding a
    task's placeholder (``{seed}``) names no file of the cell's."""
    data, project = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    project.mkdir()
    for size in ("small", "large"):
        for suffix in ("xml", "swf", "cfg", "out"):
            (data / f"{size}.{suffix}").write_text(f"{size} {suffix}")
    (data / "1.out").write_text("an earlier task's output")
    (project / "sim.py").write_text(textwrap.dedent(SIM))
    (project / "options.ini").write_text(f"config = {data}/{{size}}.cfg\nseed = {{seed}}\n")
    model = {
        "command": ["python3", "sim.py", f"--platform={data}/{{size}}.xml", f"{data}/{{seed}}.out"],
        "inputs": ["sim.py"],
        "templates": ["options.ini"],
        "env": {"TRACE": f"{data}/{{size}}.swf"},
    }
    spec = project / "spec.yaml"
    factors = {"size": ["small", "large"]}
    text = {"name": "cells", "model": model, "factors": factors, "replicates": 1, "seed": 1}
    spec.write_text(yaml.safe_dump(text))
    command = load_spec(spec).command
    sources = command_sources(command, [("a", {"size": "small"}), ("b", {"size": "large"})])
    for cell, size in (("a", "small"), ("b", "large")):
        read = tuple(sorted(str(data / f"{size}.{suffix}") for suffix in ("xml", "swf", "cfg")))
        assert sources.cell_inputs[cell] == read
        assert all(sources.inputs[path] == file_digest(path) for path in read)
    assert not any(name.startswith("/") for name in sources.code)  # no file of every cell
    shown = f"  files by path: {data}/{{size}}.cfg, {data}/{{size}}.swf, {data}/{{size}}.xml"
    assert shown + " (digested; read on each worker)" in describe_spec(load_spec(spec))
    (project / "options.ini").unlink()  # as on a worker, which has no template to read
    assert str(data / "small.cfg") in outside_values(command, {"size": "small"})
