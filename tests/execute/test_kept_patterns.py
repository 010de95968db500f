"""What `keep:` keeps of a program's task: stdout and stderr once, as the streams; files by
shell globs (``*`` within a folder, ``**`` across); never the inputs placed in the task's
folder, nor a link to a file outside it; a name that is not UTF-8 stored by a mapping; and a
pattern that matches nothing said at the end of the run and by `campaign outputs`."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.execute.keep import glob_regex, stored_name
from campaign.plan.plan import make_plan
from campaign.store.ledger import Ledger
from campaign.store.outputs import Archives

SIM = r"""
import os, sys
load = sys.argv[1]
open("result.csv", "w").write(f"load,{load}\n")
os.makedirs("out/deep")
open("out/deep/trace.csv", "w").write("t,1\n")
open("out/other.csv", "w").write("o,1\n")
named = os.open(b"r\xe9sum\xe9.csv", os.O_WRONLY | os.O_CREAT)  # a Latin-1 name
os.write(named, b"latin-1 name\n")
os.close(named)
os.symlink(sys.executable, "python-link")  # a file outside the task's folder
os.symlink("result.csv", "same.csv")  # one inside it
print("load", load)
print('{"value": %s}' % load)
"""

PARSER = """
import json

def metrics(folder):
    return json.loads((folder / "stdout").read_text().splitlines()[-1])
"""

SPEC = """
name: patterns
model:
  command: [python3, sim.py, "{load}", "{seed}"]
  inputs: [sim.py, data.csv]
  metrics: {parse: "keepparser:metrics"}
  keep: [stdout, "*.csv", "**/trace.csv", python-link, "nothing-*.txt"]
factors:
  load: [1, 2]
replicates: 2
seed: 5
output: out
"""

OUTSIDE = "a link to a file outside the task's folder"


@pytest.fixture
def patterns(tmp_path, monkeypatch):
    (tmp_path / "sim.py").write_text(textwrap.dedent(SIM))
    (tmp_path / "data.csv").write_text("an,input\n")
    (tmp_path / "keepparser.py").write_text(textwrap.dedent(PARSER))
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(SPEC))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path / "spec.yaml"


def expected(load: int) -> dict[str, bytes]:
    return {
        "files/out/deep/trace.csv": b"t,1\n",
        "files/r%E9sum%E9.csv": b"latin-1 name\n",
        "files/result.csv": f"load,{load}\n".encode(),
        "files/same.csv": f"load,{load}\n".encode(),
        "stdout": f"load {load}\n{json.dumps({'value': load})}\n".encode(),
    }


def test_keep_patterns_keep_the_streams_once_and_the_files_a_shell_would_match(
    patterns, capsys, tmp_path
):
    said = []
    data = campaign.run(patterns, workers=1, progress=False, say=said.append)
    assert data.value.values.ravel().tolist() == [1.0, 1.0, 2.0, 2.0]
    assert said[-2:] == [
        "keep: 'nothing-*.txt' matched nothing in 4 of 4 finished tasks",
        f"keep: python-link not kept in 4 of 4 finished tasks: {OUTSIDE}",
    ]
    records = Ledger(patterns.parent / "out").load()
    with Archives(patterns.parent / "out") as archives:
        for record in records.values():
            assert archives.read(record) == expected(record["cell"]["load"])
            assert record["keep_unmatched"] == ["nothing-*.txt"]
            assert record["keep_refused"] == {"files/python-link": OUTSIDE}
    assert main(["outputs", str(patterns)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 7
    for line in lines[:4]:
        load = line.split("load=")[1].split()[0]
        size = len(f"load,{load}\n")
        assert line.endswith(
            f"  load={load}  files/out/deep/trace.csv 4 B, files/r%E9sum%E9.csv 13 B, "
            f"files/result.csv {size} B, files/same.csv {size} B, stdout 20 B  "
            "(keep: 'nothing-*.txt' matched nothing; not kept: python-link)"
        )
    assert lines[4] == "4 tasks kept outputs (" + lines[4].split("(")[1]
    assert lines[5:] == said[-2:]
    assert main(["outputs", str(patterns), "--extract", str(tmp_path / "kept")]) == 0
    key = min(records)
    written = {
        path.relative_to(tmp_path / "kept" / key).as_posix(): path.read_bytes()
        for path in (tmp_path / "kept" / key).rglob("*")
        if path.is_file()
    }
    load = records[key]["cell"]["load"]
    assert written == {name.removeprefix("files/"): data for name, data in expected(load).items()}


ALL = """
name: everything
model:
  command: [/bin/sh, -c, "echo kept > note.txt; echo value=1", sh]
  inputs: [big.dat]
  keep: ["*"]
  keep_limit: 1kB
  labels: [x]
factors:
  x: [1, 2]
replicates: 1
seed: 5
output: out
"""


def test_keep_everything_keeps_neither_the_inputs_nor_counts_them_against_the_limit(
    tmp_path, scheduler_address
):
    (tmp_path / "big.dat").write_bytes(b"i" * 5000)  # an input five times the limit
    (tmp_path / "spec.yaml").write_text(ALL)
    data = campaign.run(tmp_path / "spec.yaml", scheduler=scheduler_address, progress=False)
    assert data.value.values.ravel().tolist() == [1.0, 1.0]
    with Archives(tmp_path / "out") as archives:
        for record in Ledger(tmp_path / "out").load().values():
            assert archives.read(record) == {
                "files/note.txt": b"kept\n",
                "stderr": b"",
                "stdout": b"value=1\n",
            }


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("*.csv", ["a.csv", ".hidden.csv"], ["out/a.csv", "a.csv.gz"]),
        ("out/*.csv", ["out/a.csv"], ["out/deep/a.csv", "a.csv", "outer/a.csv"]),
        ("**/*.csv", ["a.csv", "out/a.csv", "out/deep/a.csv"], ["a.txt", "out/a.csv/x"]),
        ("out/**", ["out/a", "out/deep/b.csv"], ["outer/a", "a"]),
        ("out/**/t.csv", ["out/t.csv", "out/a/b/t.csv"], ["t.csv", "out/at.csv"]),
        ("?.log", ["a.log"], ["ab.log", "/.log"]),
        ("[ab]*.txt", ["a1.txt", "b.txt"], ["c.txt", "a/b.txt"]),
        ("[!ab]*.txt", ["c.txt"], ["a.txt"]),
        ("*", ["stdout", "a.csv"], ["out/a.csv"]),
        ("a+b(1).csv", ["a+b(1).csv"], ["aab(1).csv"]),
        ("[x.csv", ["[x.csv"], ["x.csv"]),
    ],
)
def test_keep_patterns_are_shell_globs(pattern, matches, misses):
    regex = glob_regex(pattern)
    assert [bool(regex.fullmatch(name)) for name in matches] == [True] * len(matches)
    assert [bool(regex.fullmatch(name)) for name in misses] == [False] * len(misses)


def test_a_name_that_is_not_utf8_is_stored_with_its_bytes_as_percent_escapes():
    assert stored_name(os.fsdecode(b"r\xe9sum\xe9.csv")) == "r%E9sum%E9.csv"
    assert stored_name(os.fsdecode(b"out/\xff\xfe/x")) == "out/%FF%FE/x"
    assert stored_name("r\u00e9sum\u00e9.csv") == "r\u00e9sum\u00e9.csv"  # UTF-8 as it is
    assert stored_name("a\\b") == "a%5Cb"


@pytest.mark.parametrize("pattern", ["../x.csv", "/etc/passwd", "out//x", "./x"])
def test_a_keep_pattern_outside_the_task_folder_is_refused_before_any_work(
    tmp_path, write_spec, pattern
):
    spec = write_spec(
        f"""
        name: outside
        model:
          command: [/bin/sh, -c, "echo value=1", sh]
          keep: ["{pattern}"]
        replicates: 1
        seed: 1
        output: out
        """
    )
    with pytest.raises(CampaignError) as caught:
        make_plan(spec)
    assert str(caught.value).endswith(
        f"model.keep: {pattern!r} must name files inside the task's folder (a relative path "
        "or glob such as out/*.csv or **/*.log; stdout, stderr)"
    )
