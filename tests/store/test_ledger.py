"""The ledger: atomic batch files, precedence of records, identity checks, set-aside, compaction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from campaign.errors import CampaignError
from campaign.store.ledger import Ledger


def record(key, status="ok", value=1.0):
    return {"key": key, "status": status, "metrics": {"m": value} if status == "ok" else {}}


def test_append_and_load_round_trip_floats_exactly(tmp_path):
    ledger = Ledger(tmp_path)
    values = [0.1 + 0.2, 1e-310, float("nan"), 12345.678901234567]
    ledger.append([record(f"k{i}", value=v) for i, v in enumerate(values)])
    loaded = ledger.load()
    for i, v in enumerate(values):
        got = loaded[f"k{i}"]["metrics"]["m"]
        assert (got == v) or (got != got and v != v)
    assert not list(tmp_path.glob("ledger/.*.tmp"))


def test_success_beats_failure_and_later_beats_earlier(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append([record("a", "failed"), record("b", value=1.0)])
    ledger.append([record("a", value=2.0), record("b", "failed"), record("c", value=3.0)])
    ledger.append([record("c", value=4.0)])
    loaded = ledger.load()
    assert loaded["a"]["metrics"] == {"m": 2.0}
    assert loaded["b"]["metrics"] == {"m": 1.0}
    assert loaded["c"]["metrics"] == {"m": 4.0}


def test_identity_change_is_refused_with_the_difference_and_a_hint(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.write_identity({"model": "mm1", "params": {"customers": 10}, "seed": 1})
    ledger.append([record("a")])
    ledger.check_identity({"model": "mm1", "params": {"customers": 10}, "seed": 1})
    with pytest.raises(CampaignError) as info:
        ledger.check_identity({"model": "mm1", "params": {"customers": 20}, "seed": 1})
    assert "param 'customers' was 10, now 20" in str(info.value)
    assert "rerun with new=True to set them aside" in str(info.value)
    with pytest.raises(CampaignError, match="seed was 1, now 2"):
        ledger.check_identity({"model": "mm1", "params": {"customers": 10}, "seed": 2})


def test_set_aside_moves_records_without_deleting_them(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.write_identity({"model": "mm1", "params": {}, "seed": 1})
    ledger.append([record("a")])
    aside = ledger.set_aside()
    assert aside is not None and aside.name.startswith("ledger.old-")
    assert ledger.load() == {}
    kept = [json.loads(line) for f in aside.glob("*.jsonl") for line in f.read_text().splitlines()]
    assert [r["key"] for r in kept] == ["a"]
    assert (aside / "campaign.json").exists()


def test_records_kept_beside_those_set_aside_do_not_beat_later_records_of_their_tasks(tmp_path):
    # a file holding set-aside records is stored again without them; the records stored again
    # keep their place: a later record of the same task (a remetric's, a retry's) still wins
    ledger = Ledger(tmp_path)
    ledger.append([record("a", value=1.0), record("b", value=1.0), record("c", "failed")])
    ledger.append([record("b", value=2.0), record("c", value=3.0)])
    ledger.append([record("d", value=4.0)])
    moved, folder = ledger.set_records_aside({"a"}.__contains__)
    assert moved == 1
    aside = [
        json.loads(line) for f in folder.glob("*.jsonl") for line in f.read_text().splitlines()
    ]
    assert [r["key"] for r in aside] == ["a"]  # the folder holds what was set aside, alone
    loaded = ledger.load()
    assert sorted(loaded) == ["b", "c", "d"]
    assert [loaded[key]["metrics"]["m"] for key in "bcd"] == [2.0, 3.0, 4.0]
    ledger.set_records_aside({"d"}.__contains__)  # the last file: the order is kept again
    assert {key: r["metrics"]["m"] for key, r in ledger.load().items()} == {"b": 2.0, "c": 3.0}


def test_compaction_keeps_every_record(tmp_path):
    ledger = Ledger(tmp_path)
    for i in range(70):
        ledger.append([record(f"k{i}", value=float(i))])
    before = ledger.load()
    ledger.compact(min_files=64)
    assert len(ledger.files()) == 1
    assert ledger.load() == before


def test_copying_counts_only_records_new_to_the_target_even_after_a_compaction(tmp_path):
    source, target = Ledger(tmp_path / "shard"), Ledger(tmp_path / "merged")
    for i in range(70):
        source.append([record(f"k{i}", value=float(i))])
    source.append([record("k0", "failed")])  # beaten by the success: it would change nothing
    assert target.copy_from(source) == 70
    target.compact(min_files=64)
    assert len(target.files()) == 1
    held = target.load()
    assert target.copy_from(source) == 0  # every record is already here, in the merged file
    assert target.copy_from(source) == 0 and len(target.files()) == 1
    source.append([record("k70", value=70.0), record("k3", value=3.0)])  # one new, one held
    assert target.copy_from(source) == 1
    assert target.load() == {**held, "k70": source.load()["k70"]}


def test_the_holder_of_the_lock_removes_what_killed_writers_left(tmp_path):
    """Temporary files of results.nc, campaign.json and ledger batches whose writer process
    is gone (killed mid-write) are removed by the next holder of the folder's lock; those of
    a live process and other files stay."""
    ledger = Ledger(tmp_path)
    ledger.append([record("a")])
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    gone, alive = int(dead.stdout), os.getpid()
    stale = [
        tmp_path / f".results.nc.{gone}.0badf00d.tmp",
        tmp_path / f".results.nc.{gone}.12345678.tmp",
        tmp_path / f".campaign.json.{gone}.tmp",
        tmp_path / "ledger" / f".00000000000000000001-{gone}-000001.jsonl.{gone}.tmp",
    ]
    kept = [
        tmp_path / f".results.nc.{alive}.0badf00d.tmp",  # a writer at work
        tmp_path / f".notes.txt.{gone}.tmp",  # not a file campaign writes
        tmp_path / "results.nc",
    ]
    for path in stale + kept:
        path.write_bytes(b"partial")
    with ledger.lock():
        assert [path for path in stale if path.exists()] == []
    assert all(path.exists() for path in kept)
    assert ledger.load().keys() == {"a"}


# -- damaged records -------------------------------------------------------------------------
def one_file(ledger):
    (path,) = ledger.files()
    return path


def test_a_torn_last_line_is_skipped_reported_and_not_counted_done(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append([record("a"), record("b"), record("c")])
    path = one_file(ledger)
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b"metrics") + 9])  # the last line ends mid-record
    assert ledger.statuses() == {"a": True, "b": True}
    assert ledger.damage_note() == (
        f"ledger: 1 damaged record skipped in {ledger.folder}/ ({path.name}); "
        "their tasks count as not done and run again"
    )
    assert sorted(ledger.load()) == ["a", "b"]
    assert ledger.damaged == {path: 1}


def test_stray_bytes_and_garbage_files_are_skipped_and_counted(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append([record("a"), record("b")])
    path = one_file(ledger)
    first, second = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(first + b"\x00\xff\xfe stray \x80 bytes\n" + second)
    (ledger.folder / "garbage.jsonl").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    assert ledger.statuses() == {"a": True, "b": True}
    assert ledger.damaged == {path: 1, ledger.folder / "garbage.jsonl": 3}
    assert "4 damaged records skipped" in ledger.damage_note()
    assert sorted(ledger.load()) == ["a", "b"]


def test_a_changed_digit_breaks_the_checksum_rather_than_giving_a_wrong_number(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append([record("a", value=1.25), record("b", value=2.5)])
    path = one_file(ledger)
    path.write_bytes(path.read_bytes().replace(b"1.25", b"1.75"))
    assert ledger.statuses() == {"b": True}
    assert list(ledger.load()) == ["b"]
    assert ledger.damaged == {path: 1}


def test_hand_made_lines_without_checksum_are_checked_field_by_field(tmp_path):
    """Lines of ledgers written before checksums are read if sound, skipped if not."""
    ledger = Ledger(tmp_path)
    ledger.folder.mkdir()
    lines = [
        {"key": "good", "status": "ok", "metrics": {"m": 1.5}},
        {"key": "failed", "status": "failed", "error": "ValueError: x"},
        {"key": "no-metrics", "status": "ok"},
        {"key": "text-metric", "status": "ok", "metrics": {"m": "1.5"}},
        {"status": "ok", "metrics": {"m": 1.0}},
        ["not", "a", "record"],
    ]
    (ledger.folder / "old.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert ledger.statuses() == {"good": True, "failed": False}
    assert ledger.load() == {"good": lines[0], "failed": lines[1]}
    assert ledger.damaged == {ledger.folder / "old.jsonl": 4}


def test_a_success_without_metrics_under_a_sound_checksum_counts_as_not_done(tmp_path):
    """`plan` and `status` read a checksummed line's key and status without its JSON: a success
    without metrics must not count as done there while `load` (the results) skips it, or the
    task would never run again and its result stay missing."""
    ledger = Ledger(tmp_path)
    ledger.append([record("a"), record("failed", status="failed")])
    lines = []
    for fields in ({"key": "b", "status": "ok", "seed": 3}, {"key": "c", "status": "ok"}):
        body = json.dumps(fields)[:-1]
        lines.append(f'{body}, "crc": "{zlib.crc32(body.encode()):08x}"}}\n')
    (ledger.folder / "sealed.jsonl").write_text("".join(lines))
    assert ledger.statuses() == {"a": True, "failed": False}
    assert ledger.damaged == {ledger.folder / "sealed.jsonl": 2}
    assert sorted(ledger.load()) == ["a", "failed"]


def test_damaged_files_are_moved_aside_keeping_their_sound_records(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append([record("a", value=1.0), record("b", value=2.0)])
    path = one_file(ledger)
    data = path.read_bytes()
    path.write_bytes(data[:-5])
    ledger.statuses()
    kept = ledger.set_damaged_aside()
    assert kept == tmp_path / "ledger.damaged"
    assert (kept / path.name).read_bytes() == data[:-5]
    assert ledger.load() == {"a": {"key": "a", "status": "ok", "metrics": {"m": 1.0}}}
    assert ledger.damage_note() is None


def test_sound_records_of_a_damaged_file_do_not_beat_later_records_of_their_tasks(tmp_path):
    ledger = Ledger(tmp_path)
    damaged = ledger.append([record("a", value=1.0), record("b", value=1.0)])
    ledger.append([record("a", value=2.0)])  # a later result of task a (a remetric's)
    damaged.write_bytes(damaged.read_bytes()[:-5])  # b's line torn
    ledger.statuses()
    ledger.set_damaged_aside()
    assert {key: r["metrics"]["m"] for key, r in ledger.load().items()} == {"a": 2.0}


def test_compaction_moves_files_with_damaged_records_aside_instead_of_deleting_them(tmp_path):
    ledger = Ledger(tmp_path)
    for i in range(70):
        ledger.append([record(f"k{i}", value=float(i))])
    damaged = ledger.files()[5]
    damaged.write_bytes(damaged.read_bytes() + b"{torn\n")
    ledger.compact(min_files=64)
    assert len(ledger.files()) == 1
    assert sorted(ledger.load()) == sorted(f"k{i}" for i in range(70))
    assert (tmp_path / "ledger.damaged" / damaged.name).exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "\xff\xfe"])
def test_a_damaged_campaign_json_gives_one_line_saying_what_to_do(tmp_path, text):
    ledger = Ledger(tmp_path)
    ledger.append([record("a")])
    ledger.manifest_path.write_bytes(text.encode("latin-1"))
    with pytest.raises(CampaignError) as info:
        ledger.check_identity({"model": "mm1", "params": {}, "seed": 1})
    message = str(info.value)
    assert message.startswith(f"{ledger.manifest_path} is damaged (")
    assert "restore it, or rerun with new=True" in message and "\n" not in message


# -- readers during compaction ---------------------------------------------------------------
# Splits the ledger into many files and compacts them again, round after round, until the stop
# file exists and at least the given number of rounds ran (readers run meanwhile, however slow
# the machine is).
SPLIT_AND_COMPACT = """
import os, sys
from campaign.store.ledger import Ledger
ledger = Ledger(sys.argv[1])
records = ledger.load()
stop, least = sys.argv[2], int(sys.argv[3])
rounds = 0
while rounds < least or not os.path.exists(stop):
    for r in records.values():
        ledger.append([r])
    ledger.compact(min_files=2)
    rounds += 1
print(rounds)
"""


def while_compacting(output: Path, stop: Path, check) -> tuple[int, int]:
    """Call ``check`` again and again while another process splits and compacts the ledger
    of ``output`` (told to stop by ``stop`` after three checks): how many checks ran, and
    how many rounds of compaction the other process made."""
    writer = subprocess.Popen(
        [sys.executable, "-c", SPLIT_AND_COMPACT, str(output), str(stop), "3"],
        stdout=subprocess.PIPE,
        text=True,
    )
    checks = 0
    try:
        while writer.poll() is None:
            check()
            checks += 1
            if checks == 3:
                stop.touch()
    finally:
        stop.touch()
        writer.wait()
    assert writer.returncode == 0
    return checks, int(writer.stdout.read())


def test_readers_see_every_record_while_another_process_compacts(tmp_path):
    ledger = Ledger(tmp_path)
    expected = {f"k{i:03d}": i % 3 != 0 for i in range(150)}
    ledger.append(
        [
            record(key, "ok" if ok else "failed", float(i))
            for i, (key, ok) in enumerate(expected.items())
        ]
    )

    def read() -> None:
        assert ledger.statuses() == expected
        assert ledger.damage_note() is None
        assert {k: r["status"] == "ok" for k, r in ledger.load().items()} == expected

    reads, rounds = while_compacting(tmp_path, tmp_path / "stop", read)
    assert rounds >= 3 and reads >= 3


def test_status_command_during_compaction_reports_every_task(tmp_path, write_spec):
    spec = write_spec(
        """
        name: s
        model: mm1
        params: {service_rate: 1.0, customers: 10}
        factors:
          arrival_rate: [0.1, 0.2, 0.3, 0.4, 0.5]
        replicates: 30
        seed: 1
        output: out
        """
    )
    from campaign.plan.plan import identity, make_plan

    plan = make_plan(spec)
    keys = list(plan.design.keys())
    plan.ledger.write_identity(identity(plan.spec))
    plan.ledger.append([record(key) for key in keys])

    def status() -> None:
        result = subprocess.run(
            [sys.executable, "-m", "campaign", "status", str(spec)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert "150 tasks: 150 done, 0 failed, 0 missing" in result.stdout

    calls, _ = while_compacting(plan.spec.output, tmp_path / "stop", status)
    assert calls >= 3
