"""Kept outputs: stored in one archive per batch before the records that name them, read back
checked, findable after a compaction, carried by a merge and set aside with their campaign."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile

import pytest

from campaign.errors import CampaignError
from campaign.store.ledger import Ledger
from campaign.store.lock import remove_leftovers
from campaign.store.outputs import Archives, keep_outputs, reference, write_folder

STDOUT = b'{"mean_wait": 1.5}\n'
SCHEDULE = b"job,start\n1,0.0\n2,3.25\n"


def finished(key, outputs, status="ok"):
    record = {"key": key, "status": status, "cell": {}, "replicate": 0, "seed": 1}
    if status == "ok":
        record["metrics"] = {"mean_wait": 1.5}
    else:
        record.update(error="RuntimeError: exit 3", traceback="")
    record["outputs"] = outputs
    return record


def store(output, records):
    """What the runner's storing callback does: outputs first, then the records."""
    keep_outputs(output, records)
    Ledger(output).append(records)


def test_outputs_come_back_bit_for_bit_and_the_record_holds_only_a_reference(tmp_path):
    big = os.urandom(200_000) + b"x" * 800_000  # 1 MB, 80 % of it compressible
    store(
        tmp_path,
        [
            finished("a", {"stdout": STDOUT, "stderr": b"", "files/out/schedule.csv": SCHEDULE}),
            finished("b", {"stdout": big}),
            finished("c", {"stderr": b"segfault\n"}, status="failed"),
            {"key": "d", "status": "ok", "metrics": {"mean_wait": 2.0}},  # kept nothing
        ],
    )
    (archive,) = (tmp_path / "outputs").iterdir()
    assert archive.name == hashlib.sha256(archive.read_bytes()).hexdigest()[:32] + ".zip"
    assert archive.stat().st_size < 300_000  # compressed
    records = Ledger(tmp_path).load()
    assert records["a"]["outputs"] == {
        "archive": archive.name,
        "members": {
            "files/out/schedule.csv": {"size": 23, "sha256": hashlib.sha256(SCHEDULE).hexdigest()},
            "stderr": {"size": 0, "sha256": hashlib.sha256(b"").hexdigest()},
            "stdout": {"size": 19, "sha256": hashlib.sha256(STDOUT).hexdigest()},
        },
    }
    assert reference(records["d"]) is None
    ledger_bytes = sum(path.stat().st_size for path in Ledger(tmp_path).files())
    assert ledger_bytes < 2_000  # a reference, not the bytes
    with Archives(tmp_path) as archives:
        assert archives.read(records["a"]) == {
            "stdout": STDOUT,
            "stderr": b"",
            "files/out/schedule.csv": SCHEDULE,
        }
        assert archives.read(records["b"]) == {"stdout": big}
        assert archives.read(records["c"]) == {"stderr": b"segfault\n"}
        with pytest.raises(CampaignError, match="^task d kept no outputs$"):
            archives.read(records["d"])
        with pytest.raises(CampaignError, match=r"task a kept no output 'files/x' \(it kept: "):
            archives.read(records["a"], ["files/x"])


def test_the_same_outputs_make_the_same_archive_whatever_the_order_of_the_batch(tmp_path):
    first = [finished("a", {"stdout": STDOUT}), finished("b", {"files/s.csv": SCHEDULE})]
    second = [finished("b", {"files/s.csv": SCHEDULE}), finished("a", {"stdout": STDOUT})]
    one, two = keep_outputs(tmp_path / "one", first), keep_outputs(tmp_path / "two", second)
    assert one.name == two.name and one.read_bytes() == two.read_bytes()
    with zipfile.ZipFile(one) as archive:
        assert archive.namelist() == ["a/stdout", "b/files/s.csv"]
        assert archive.testzip() is None


def test_archives_stay_findable_after_a_compaction_moves_the_records(tmp_path, monkeypatch):
    monkeypatch.setattr("campaign.store.outputs.OPEN_ARCHIVES", 2)  # some closed and reopened
    for index in range(5):
        store(tmp_path, [finished(f"k{index}", {"stdout": f"run {index}\n".encode()})])
    assert len(list((tmp_path / "outputs").iterdir())) == 5
    ledger = Ledger(tmp_path)
    ledger.compact(min_files=2)
    assert len(ledger.files()) == 1
    records = ledger.load()
    with Archives(tmp_path) as archives:
        for index in [0, 1, 2, 3, 4, 0, 4, 2]:
            assert archives.read(records[f"k{index}"]) == {"stdout": f"run {index}\n".encode()}
            assert len(archives.open) <= 2


def test_a_rerun_that_replaces_a_failed_task_reads_the_new_outputs(tmp_path):
    store(tmp_path, [finished("a", {"stderr": b"crash\n"}, status="failed")])
    store(tmp_path, [finished("a", {"stdout": STDOUT})])
    record = Ledger(tmp_path).load()["a"]
    assert record["status"] == "ok"
    with Archives(tmp_path) as archives:
        assert archives.read(record) == {"stdout": STDOUT}
    assert len(list((tmp_path / "outputs").iterdir())) == 2  # the old one is left, unread


def test_a_missing_or_damaged_archive_is_said_in_one_line(tmp_path):
    store(tmp_path, [finished("a", {"stdout": STDOUT * 50}), finished("b", {"stdout": b"b"})])
    records = Ledger(tmp_path).load()
    (archive,) = (tmp_path / "outputs").iterdir()
    data = bytearray(archive.read_bytes())
    start = data.index(b"a/stdout") + len(b"a/stdout")
    data[start + 5] ^= 0xFF  # a flipped bit in a's compressed bytes
    archive.write_bytes(bytes(data))
    with Archives(tmp_path) as archives:
        problem = archives.problem(records["a"])
        assert problem.startswith("task a: kept output 'stdout' ")
        assert "damaged" in problem or "not what was stored" in problem
        assert archives.problem(records["b"]) is None
    archive.unlink()
    with Archives(tmp_path) as archives:
        assert archives.problem(records["b"]) == (
            f"task b: its kept outputs cannot be read: its archive {archive} is missing"
        )


def test_an_output_name_that_cannot_be_stored_fails_its_task_alone_and_the_rest_is_stored(
    tmp_path,
):
    names = [
        "files/../../etc/passwd",
        "files//x",
        "/etc/passwd",
        "log.txt",
        "files/",
        "files/r\udce9sum\udce9.csv",  # a name read from a folder that is not UTF-8
    ]
    records = [finished(f"t{i}", {name: b"x", "stdout": STDOUT}) for i, name in enumerate(names)]
    records.append(finished("sound", {"files/r%E9sum%E9.csv": b"y"}))
    store(tmp_path, records)  # no error: the run goes on
    stored = Ledger(tmp_path).load()
    for index, name in enumerate(names):
        record = stored[f"t{index}"]
        assert record["status"] == "failed" and "metrics" not in record
        assert record["error"] == (
            f"ValueError: kept output {name!r}: not an output name (stdout, stderr or "
            "files/PATH, a path inside the task's folder, in UTF-8)"
        )
    with Archives(tmp_path) as archives:
        assert archives.read(stored["t0"]) == {"stdout": STDOUT}  # what could be stored is
        assert archives.read(stored["sound"]) == {"files/r%E9sum%E9.csv": b"y"}
    assert stored["sound"]["status"] == "ok"


KILLED_WRITER = """
import os, sys
from pathlib import Path
from campaign.store import durable
from campaign.store.outputs import keep_outputs

real_replace = os.replace
def killed(*args):  # the process dies after the archive's bytes, before its rename
    os._exit(9)
durable.os.replace = killed
keep_outputs(Path(sys.argv[1]), [{"key": "a", "status": "ok", "metrics": {"m": 1.0},
                                  "outputs": {"stdout": b"x" * 1000}}])
"""


def test_a_writer_killed_mid_archive_leaves_no_archive_no_record_and_a_temporary_removed(tmp_path):
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(tmp_path)], check=False)
    assert done.returncode == 9
    (temporary,) = (tmp_path / "outputs").iterdir()
    assert temporary.name.startswith(".") and temporary.name.endswith(".tmp")
    assert not Ledger(tmp_path).load()  # the task is not done: it runs again
    assert remove_leftovers(tmp_path) == [temporary]
    assert not any((tmp_path / "outputs").iterdir())


def test_a_new_campaign_sets_the_kept_outputs_aside_with_their_records(tmp_path):
    store(tmp_path, [finished("a", {"stdout": STDOUT})])
    (archive,) = (tmp_path / "outputs").iterdir()
    aside = Ledger(tmp_path).set_aside()
    assert not (tmp_path / "outputs").exists()
    assert (aside / "outputs" / archive.name).read_bytes()
    (line,) = (aside / name for name in os.listdir(aside) if name.endswith(".jsonl"))
    assert json.loads(line.read_text())["outputs"]["archive"] == archive.name


def test_a_copy_of_records_carries_their_archives_and_names_a_missing_one(tmp_path):
    store(tmp_path / "s1", [finished("a", {"stdout": b"one"})])
    store(tmp_path / "s2", [finished("b", {"stdout": b"two"})])
    store(tmp_path / "s2", [finished("c", {"stdout": b"three"})])
    lost = tmp_path / "s2" / "outputs" / Ledger(tmp_path / "s2").load()["c"]["outputs"]["archive"]
    lost.unlink()
    target, notes = Ledger(tmp_path / "merged"), []
    assert target.copy_from(Ledger(tmp_path / "s1"), notes) == 1
    assert target.copy_from(Ledger(tmp_path / "s2"), notes) == 2
    assert notes == [f"kept outputs: {lost} is missing"]
    records = target.load()
    with Archives(tmp_path / "merged") as archives:
        assert archives.read(records["a"]) == {"stdout": b"one"}
        assert archives.read(records["b"]) == {"stdout": b"two"}
        assert "is missing" in archives.problem(records["c"])


def test_a_stream_stored_twice_before_extracts_as_one_file_and_a_real_clash_is_refused(tmp_path):
    # what `keep: [stdout]` with a metrics parser stored before: the stream and its link
    written = write_folder(tmp_path / "a", {"stdout": STDOUT, "files/stdout": STDOUT})
    assert written == [tmp_path / "a" / "stdout"] and written[0].read_bytes() == STDOUT
    with pytest.raises(CampaignError, match="would be one file; rename it in keep:"):
        write_folder(tmp_path / "b", {"stdout": STDOUT, "files/stdout": b"other"})
