"""Kept outputs of superseded attempts: a task run again leaves its earlier attempt's outputs
in that attempt's archive; a compaction drops them (an archive holding some is written again
without them, one holding only them is removed, as is one no record names), keeps every
archive a record set aside names, and a crash at any step of it loses no archive a record
names."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from campaign.store.aside import set_records_aside
from campaign.store.ledger import Ledger
from campaign.store.outputs import Archives, keep_outputs, reference

REPO = Path(__file__).resolve().parents[2]


def attempt(key, status, text):
    record = {"key": key, "status": status, "cell": {}, "replicate": 0, "seed": 1}
    if status == "ok":
        record["metrics"] = {"m": 1.0}
    else:
        record.update(error="RuntimeError: exit 3", traceback="")
    record["outputs"] = {"stdout": text.encode(), "files/out.csv": (text * 40).encode()}
    return record


def store(output, records):
    """What the runner's storing callback does: outputs first, then the records."""
    keep_outputs(output, records)
    Ledger(output).append(records)


def campaign_with_superseded_attempts(output: Path) -> str:
    """Tasks a, b, c, d, e: a failed then ran again (its first archive, shared with b, is
    mixed); c failed alone then ran again (its first archive holds nothing current); d's
    record was set aside (its sources changed) and it ran again; e's archive was written but
    the run died before its record. Returns the archive the record set aside names."""
    store(output, [attempt("a", "failed", "a1"), attempt("b", "ok", "b1")])
    store(output, [attempt("c", "failed", "c1")])
    aside = [attempt("d", "ok", "d1")]
    store(output, aside)
    keep_outputs(output, [attempt("e", "ok", "e1")])  # a crash before the record
    set_records_aside(Ledger(output).records, {"d"}.__contains__, "changed")
    store(output, [attempt("a", "ok", "a2"), attempt("c", "ok", "c2"), attempt("d", "ok", "d2")])
    return reference(aside[0])["archive"]


CURRENT = {"a": "a2", "b": "b1", "c": "c2", "d": "d2"}


def outputs_of(text):
    return {"stdout": text.encode(), "files/out.csv": (text * 40).encode()}


def by_hand(output: Path, skip: set[str] = frozenset()) -> dict[str, list[str]]:
    """What unzip finds in the outputs folder: per task, the archives holding its stdout."""
    found: dict[str, list[str]] = {}
    for path in sorted((output / "outputs").glob("*.zip")):
        if path.name in skip:
            continue
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                key, _, name = member.partition("/")
                if name == "stdout":
                    found.setdefault(key, []).append(archive.read(member).decode())
    return found


def check_current(output: Path) -> None:
    records = Ledger(output).load()
    assert {key: r["status"] for key, r in records.items()} == dict.fromkeys(CURRENT, "ok")
    with Archives(output) as archives:
        for key, text in CURRENT.items():
            assert archives.read(records[key]) == outputs_of(text)


def test_a_compaction_drops_the_outputs_of_superseded_attempts_only(tmp_path):
    aside = campaign_with_superseded_attempts(tmp_path)
    assert len(list((tmp_path / "outputs").glob("*.zip"))) == 5
    assert sorted(by_hand(tmp_path)["a"]) == ["a1", "a2"]
    Ledger(tmp_path).compact()  # a few files: the superseded outputs are dropped all the same
    check_current(tmp_path)
    # by hand: each task once, as it is now; d's attempt set aside in its archive, whole
    assert by_hand(tmp_path, skip={aside}) == {key: [text] for key, text in CURRENT.items()}
    assert sorted(by_hand(tmp_path)["d"]) == ["d1", "d2"]
    archives = sorted(p.name for p in (tmp_path / "outputs").glob("*.zip"))
    named = {reference(r)["archive"] for r in Ledger(tmp_path).load().values()} | {aside}
    assert archives == sorted(named) and len(archives) == 3
    assert len(Ledger(tmp_path).files()) == 1
    Ledger(tmp_path).compact()  # nothing left to drop: nothing changes
    assert sorted(p.name for p in (tmp_path / "outputs").glob("*.zip")) == archives
    assert len(Ledger(tmp_path).files()) == 1


CRASHING = """
import os, sys
from pathlib import Path
import campaign.store.records as records
import campaign.store.superseded as superseded

step = sys.argv[2]
if step == "archive written":
    real = superseded.write_archive
    def write_archive(*args):
        real(*args)
        os._exit(9)
    superseded.write_archive = write_archive
elif step == "records merged":
    real_append = records.RecordFiles.append
    def append(self, records_):
        real_append(self, records_)
        os._exit(9)
    records.RecordFiles.append = append
elif step == "files removed":
    def remove_unnamed(self, current):
        os._exit(9)
    superseded.Pruning.remove_unnamed = remove_unnamed
records.RecordFiles(Path(sys.argv[1])).compact()
"""


@pytest.mark.parametrize("step", ["archive written", "records merged", "files removed"])
def test_a_compaction_killed_at_any_step_loses_no_archive_a_record_names(tmp_path, step):
    aside = campaign_with_superseded_attempts(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", CRASHING, str(tmp_path), step],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 9, done.stderr
    check_current(tmp_path)
    Ledger(tmp_path).compact()  # the next compaction finishes the work
    check_current(tmp_path)
    assert by_hand(tmp_path, skip={aside}) == {key: [text] for key, text in CURRENT.items()}
    assert len(list((tmp_path / "outputs").glob("*.zip"))) == 3
