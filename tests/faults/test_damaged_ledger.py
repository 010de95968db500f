"""A ledger damaged between runs (a torn last line, stray bytes, a record stripped of its
metrics) and a damaged results.nc: `plan` and `status` count the damage without a traceback,
`run` computes exactly the tasks whose records were lost, and the results equal an undisturbed
run's, bit for bit."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

from campaign.cli import main
from campaign.store.ledger import Ledger

FIELDS = {"levels": [1, 2], "replicates": 10}  # 20 tasks
COMMANDS = ("plan", "status", "query")


def command_output(capsys, *args: str) -> tuple[int, str, str]:
    """`campaign ARGS` run in this process: its exit status, what it printed and said."""
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_torn_stray_and_stripped_records_rerun_their_tasks_alone_to_the_undisturbed_results(
    runner, same_results, capsys, monkeypatch
):
    spec = runner.spec("ledger", **FIELDS)
    done = runner.run(spec, "--workers", "2")
    assert done.returncode == 0, done.stderr
    clean = runner.results(spec)  # the undisturbed run of the spec, before any damage
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

    # plan, status and query read files alone: run in this process, as `campaign` runs them
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    shown = {command: command_output(capsys, command, str(spec)) for command in COMMANDS}
    for name in ("plan", "status"):
        code, out, err = shown[name]
        assert code == 0 and err == "", err
        assert "ledger: 3 damaged records skipped in" in out, out
    assert (
        "plan: 18 done, 0 failed (will be retried), 2 missing; 2 tasks would run"
        in (shown["plan"][1])
    )
    assert "20 tasks: 18 done, 0 failed, 2 missing" in shown["status"][1]
    code, _, err = shown["query"]
    assert code == 2 and err.count("\n") == 1, err
    assert "Traceback" not in err

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
    _, status, _ = command_output(capsys, "status", str(spec))
    assert "20 tasks: 20 done, 0 failed, 0 missing" in status
    assert "damaged record" not in status
