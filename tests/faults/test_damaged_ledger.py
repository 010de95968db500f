"""A ledger damaged between runs (a torn last line, stray bytes, a record stripped of its
metrics) and a damaged results.nc: `plan` and `status` count the damage without a traceback,
`run` computes exactly the tasks whose records were lost, and the results equal an undisturbed
run's, bit for bit."""

from __future__ import annotations

import json
import zlib

from campaign.store.ledger import Ledger

FIELDS = {"levels": [1, 2], "replicates": 10}  # 20 tasks


def test_torn_stray_and_stripped_records_rerun_their_tasks_alone_to_the_undisturbed_results(
    runner, undisturbed, same_results
):
    clean = undisturbed(**FIELDS)
    spec = runner.spec("ledger", **FIELDS)
    done = runner.run(spec, "--workers", "2")
    assert done.returncode == 0, done.stderr
    output = runner.folder / "ledger"
    ledger = Ledger(output)
    before = ledger.load()
    files = ledger.files()
    assert len(before) == 20

    # The last line of the last file torn; stray bytes before the first file's first line;
    # a record of the first file without its metrics, under a checksum that holds (as a
    # faulty writer would leave it).
    last = files[-1].read_bytes().splitlines(keepends=True)
    torn = json.loads(last[-1])["key"]
    files[-1].write_bytes(b"".join(last[:-1]) + last[-1][: len(last[-1]) // 2])
    first = files[0].read_bytes().splitlines(keepends=True)
    stripped = json.loads(first[0])
    stripped.pop("metrics"), stripped.pop("crc")
    assert stripped["key"] != torn and stripped["status"] == "ok"
    body = json.dumps(stripped)[:-1]
    sealed = f'{body}, "crc": "{zlib.crc32(body.encode()):08x}"}}\n'.encode()
    edited = [b"\x00\xff stray \x80 bytes\n", sealed, *first[1:]]
    files[0].write_bytes(b"".join(edited))
    # and results.nc cut short, as a full disk would leave it
    results = output / "results.nc"
    results.write_bytes(results.read_bytes()[:1000])

    shown = {command: runner.command(command, str(spec)) for command in ("plan", "status")}
    for done in shown.values():
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert "ledger: 3 damaged records skipped in" in done.stdout, done.stdout
    assert "plan: 18 done, 0 failed (will be retried), 2 missing; 2 tasks would run" in (
        shown["plan"].stdout
    )
    assert "20 tasks: 18 done, 0 failed, 2 missing" in shown["status"].stdout
    query = runner.command("query", str(spec))
    assert query.returncode == 2 and query.stderr.count("\n") == 1, query.stderr
    assert "Traceback" not in query.stderr

    rerun = runner.run(spec, "--workers", "2")
    assert rerun.returncode == 0, rerun.stderr
    assert "18 already done, 2 to run" in rerun.stdout
    assert "20 tasks ok, 0 failed, 0 missing" in rerun.stdout
    after = ledger.load()
    assert {key: after[key] for key in before if key not in (torn, stripped["key"])} == {
        key: record for key, record in before.items() if key not in (torn, stripped["key"])
    }
    assert after[torn]["run"] == after[stripped["key"]]["run"] != before[torn]["run"]
    damaged = sorted(path.name for path in (output / "ledger.damaged").iterdir())
    assert damaged == sorted({files[0].name, files[-1].name})
    same_results(runner.results(spec), clean)
    status = runner.command("status", str(spec))
    assert "20 tasks: 20 done, 0 failed, 0 missing" in status.stdout
    assert "damaged record" not in status.stdout
