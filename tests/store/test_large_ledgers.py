"""A ledger of many records compacted and merged in memory that does not grow with them: the
current lines chosen from arrays of keys and digests, then copied as they are, a chunk at a
time; the same records as `load` resolves them, whatever the order of duplicates."""

from __future__ import annotations

import gc
import json
import random
import shutil
import tracemalloc
import zlib
from collections import Counter

import pytest

from campaign.store import scan
from campaign.store.ledger import Ledger
from campaign.store.line_index import LineIndex
from campaign.store.lines import (
    line_digest,
    line_head,
    line_heads,
    parse_record,
    parse_records,
    read_lines,
    sealed_line,
)

RECORDS = 12_000


def task_key(number: int) -> str:
    """A task key of the usual form: a cell's digest and a seed, 16 hex digits each."""
    return f"{number % 7:016x}{number * 2654435761 % 2**63:016x}"


def record(key: str, ok: bool = True, value: float = 0.5) -> dict:
    base = {"key": key, "status": "ok" if ok else "failed", "cell": {"tag": "t"}, "seed": 7}
    if ok:
        return {**base, "metrics": {"value": value}, "elapsed": 0.001, "worker": "tcp://w:1"}
    return {**base, "error": "RuntimeError: boom", "elapsed": 0.001}


def shuffled_history(seed: int) -> list[list[dict]]:
    """Batches of records with every way a key recurs: failed then ok, ok then failed, two
    successes (the later wins), the same line twice, keys of other forms."""
    rng = random.Random(seed)
    keys = [task_key(n) for n in range(60)] + ["plain", "UPPER" + "0" * 27, "x"]
    lines = []
    for step in range(400):
        key = rng.choice(keys)
        lines.append({**record(key, ok=rng.random() < 0.6, value=float(step % 9)), "run": step})
        if rng.random() < 0.1:
            lines.append(dict(lines[-1]))  # the very same line again
    return [lines[i : i + rng.randint(1, 30)] for i in range(0, len(lines), 30)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_compaction_keeps_the_records_load_resolves_lines_as_they_were(tmp_path, seed):
    ledger = Ledger(tmp_path)
    for batch in shuffled_history(seed):
        ledger.append(batch)
    before = ledger.load()
    lines = {line for path in ledger.files() for line in read_lines(path)}
    ledger.compact(min_files=1)
    assert len(ledger.files()) == 1
    assert ledger.load() == before
    kept = list(read_lines(ledger.files()[0]))
    assert len(kept) == len(before) and set(kept) <= lines  # copied, not written anew


def reference_new_lines(held: list[bytes], given: list[bytes]) -> list[bool]:
    """Which of ``given`` a merge stores, decided line by line with sets (as it was)."""
    digests = {line_digest(line) for line in held}
    succeeded = {r["key"] for r in map(parse_record, held) if r and r["status"] == "ok"}
    taken = []
    for line in given:
        found = parse_record(line)
        if found is None:
            taken.append(False)
            continue
        digest, ok = line_digest(line), found["status"] == "ok"
        new = digest not in digests and (ok or found["key"] not in succeeded)
        if new:
            digests.add(digest)
            if ok:
                succeeded.add(found["key"])
        taken.append(new)
    return taken


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_a_merge_takes_the_lines_a_line_by_line_merge_takes(tmp_path, seed):
    target, source = Ledger(tmp_path / "target"), Ledger(tmp_path / "source")
    history = shuffled_history(seed)
    for batch in history[: len(history) // 3]:
        target.append(batch)
    for batch in history[len(history) // 4 :]:
        source.append(batch)
    with open(source.files()[0], "ab") as handle:
        handle.write(b'{"key": "torn", "status": "ok", "metr\n')
    held = [line for path in target.files() for line in read_lines(path)]
    given = [line for path in source.files() for line in read_lines(path)]
    index = LineIndex()
    index.add(target.files(), Counter())
    index.add(source.files(), Counter())
    assert index.new_lines()[len(held) :].tolist() == reference_new_lines(held, given)
    both = tmp_path / "both" / "ledger"  # every line, as one machine would have stored them
    both.mkdir(parents=True)
    for path in [*target.files(), *source.files()]:
        shutil.copy(path, both / path.name)
    assert target.copy_from(source) == sum(reference_new_lines(held, given))
    assert target.load() == Ledger(both.parent).load()


def peak_traced(action) -> int:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_compaction_merge_and_reads_hold_a_chunk_of_records_not_the_ledger(tmp_path, monkeypatch):
    """12,000 records (4 MB of ledger; held as records, 30 MB): compacting, merging them
    into an empty folder, their statuses and a fold over them stay within 4 MB, a chunk of
    64 kB at a time and arrays of a few tens of bytes a record."""
    monkeypatch.setattr(scan, "CHUNK_BYTES", 2**16)
    ledger = Ledger(tmp_path / "a")
    keys = [task_key(n) for n in range(RECORDS)]
    for first in range(0, RECORDS, 500):
        ledger.append(record(key) for key in keys[first : first + 500])
    bound = 4 * 2**20
    assert peak_traced(lambda: ledger.compact(min_files=1)) < bound
    assert len(ledger.files()) == 1
    merged = Ledger(tmp_path / "b")
    assert peak_traced(lambda: merged.copy_from(ledger)) < bound
    assert peak_traced(lambda: ledger.fold_records(lambda chunks: sum(map(len, chunks)))) < bound
    counted = merged.fold_heads(lambda chunks: sum(int(chunk.ok.sum()) for chunk in chunks))
    assert counted == RECORDS and set(merged.load()) == set(keys)


def tricky_lines() -> list[bytes]:
    """Lines as a run writes them among lines of every other kind: unsealed (written before
    checksums), damaged, not ASCII, an escaped key, a sealed line holding two records, a
    sealed success without metrics or with a text for a number, NaN and infinities."""
    sealed = [sealed_line(record(task_key(n), ok=n % 3 > 0, value=n / 7)) for n in range(40)]
    lines = [line.rstrip("\n").encode() for line in sealed]
    odd = [
        {**record("a\\u0041" * 6), "metrics": {"value": float("nan"), "x": float("-inf")}},
        {**record(task_key(1)), "metrics": {"value": "1.5"}},
        {"key": task_key(2), "status": "ok"},
        {**record(task_key(3)), "metrics": {"value": 2**70, "n": 3}},
    ]
    lines += [line.rstrip("\n").encode() for line in map(sealed_line, odd)]
    two = sealed[0][:-1] + ", " + sealed[1][: -len(', "crc": "00000000"}\n')]
    lines.append(two.encode() + f', "crc": "{zlib.crc32(two.encode()):08x}"}}'.encode())
    lines += [
        json.dumps(record(task_key(4))).encode(),  # unsealed
        json.dumps(record(task_key(5))).encode().replace(b"tcp", "t\u00e9p".encode()),
        lines[5][:-3] + b'x"}',  # a checksum that does not hold
        lines[6][:40],  # torn
        b"[1, 2]",
        b"not json",
    ]
    random.Random(4).shuffle(lines)
    return lines


def test_records_and_heads_read_a_chunk_at_once_as_line_by_line():
    lines = tricky_lines()
    assert parse_records(lines) == [parse_record(line) for line in lines]
    assert line_heads(lines) == [line_head(line) for line in lines]
    sound = [line for line in lines if parse_record(line) is not None]
    assert parse_records(sound) == [parse_record(line) for line in sound]


def test_chunks_of_lines_are_those_read_line_by_line(tmp_path):
    """Carriage returns, blank lines and lines of blanks, wherever a chunk ends."""
    rng = random.Random(2)
    pieces = [b"{}", b"", b" ", b"\t", b"a\r", b"\r", b" b ", b"\x0c"]
    for trial in range(200):
        lines = [rng.choice(pieces) for _ in range(rng.randint(0, 12))]
        path = tmp_path / "batch.jsonl"
        path.write_bytes(b"\n".join(lines) + rng.choice([b"", b"\n", b"\r\n"]))
        for size in (1, 2, 5, 100):
            chunked = [line for chunk in scan.chunked_lines(path, size) for line in chunk]
            assert chunked == list(read_lines(path)), (trial, size)


def test_a_read_of_the_ledger_holds_off_the_garbage_collector_only_while_it_reads(tmp_path):
    """A read makes a dict or more per record, none in a cycle: the collector's passes over
    them took a quarter of the read's time."""
    ledger = Ledger(tmp_path)
    ledger.append([record(task_key(n)) for n in range(10)])
    seen = []

    def fold(chunks):
        seen.append(gc.isenabled())
        return sum(1 for _ in chunks)

    assert gc.isenabled()
    assert ledger.fold_records(fold) == ledger.fold_heads(fold) == 1
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:  # held off by the caller: still so after the read
        ledger.fold_records(fold)
        assert not gc.isenabled()
    finally:
        gc.enable()
