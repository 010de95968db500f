"""One metric, one definition per campaign: once `campaign remetric --parse` redefined a
metric, the tasks a later run computes, the records a merge brings in and the reruns of
`verify` are computed with the same parser (the one campaign.json records), never with the
program's own; a recorded parser that changed or cannot be loaded is refused in one line
before anything runs (a helper module the parser imports is its code too)."""

from __future__ import annotations

import json
import sys
import textwrap

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.pipelines.remetric import remetric
from campaign.pipelines.verify import verify
from campaign.spec.command_model import MetricsSource
from campaign.store.ledger import Ledger

SIM = """
import json, sys
print(json.dumps({"y": float(sys.argv[1])}))
"""

SPEC = """
name: tenfold
model:
  command: [python3, sim.py, "{x}", "{seed}"]
  inputs: [sim.py]
  keep: [stdout]
factors:
  x: [1, 2, 3]
replicates: 2
seed: 4
output: out
"""

TENFOLD = """
import json
from pathlib import Path


def y10(folder):
    return {"y": 10 * json.loads(Path(folder, "stdout").read_text())["y"]}%s
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A program campaign's folder, and the parser module fix.py importable from here."""
    (tmp_path / "sim.py").write_text(textwrap.dedent(SIM))
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "fix.py").write_text(TENFOLD % "")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def stamps_of(output) -> list:
    return [record.get("metrics_from") for _, record in sorted(Ledger(output).load().items())]


def test_tasks_run_after_a_remetric_get_the_recorded_definition(site, scheduler_address):
    spec = site / "spec.yaml"
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    done = remetric(spec, MetricsSource("parse", "fix:y10"))
    assert done.dataset["y"].values.tolist() == [[10, 10], [20, 20], [30, 30]]
    spec.write_text(SPEC.replace("replicates: 2", "replicates: 4"))
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results["y"].values.tolist() == [[10] * 4, [20] * 4, [30] * 4]
    assert results["y_std"].values.tolist() == [0, 0, 0]
    (stamp,) = json.loads(results.attrs["metrics_recomputed"])
    assert (stamp["parser"], stamp["metrics"], stamp["tasks"]) == ("parse: fix:y10", ["y"], 12)
    assert len({json.dumps(s, sort_keys=True) for s in stamps_of(site / "out")}) == 1
    verdict = verify(site / "out", count=12, scheduler=scheduler_address)
    assert (verdict.reproduced, verdict.mismatches) == (12, [])
    # the parser's code changed since: new tasks would mean something else, refused
    (site / "fix.py").write_text(TENFOLD % "\n# now tidied")
    spec.write_text(SPEC.replace("replicates: 2", "replicates: 5"))
    with pytest.raises(CampaignError) as refused:
        campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert str(refused.value) == (
        f"{site / 'out'}: metrics y were recomputed by `campaign remetric` with parse: fix:y10, "
        "whose code has changed since: new tasks would get another y than the stored ones; "
        "give the same parser to `campaign remetric` (every finished task recomputed with it "
        "as it is now), then run again"
    )
    assert len(Ledger(site / "out").load()) == 12  # nothing ran
    # as told: recomputed with the parser as it is, the run goes on
    remetric(spec, MetricsSource("parse", "fix:y10"))
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results["y"].values.tolist() == [[10] * 5, [20] * 5, [30] * 5]
    # the program's own parser again: y is the program's, for every task old and new
    remetric(spec, MetricsSource("stdout"))
    assert "metric_definitions" not in json.loads((site / "out" / "campaign.json").read_text())
    spec.write_text(SPEC.replace("replicates: 2", "replicates: 6"))
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results["y"].values.tolist() == [[1] * 6, [2] * 6, [3] * 6]


def test_a_late_shard_merged_into_a_remetric_folder_gets_its_definition(
    site, scheduler_address, capsys
):
    spec = site / "spec.yaml"
    for shard in ("1/3", "2/3"):
        campaign.run(spec, scheduler=scheduler_address, shard=shard, progress=False)
    merged = site / "merged"
    campaign.merge([site / "out" / "shard-1-of-3", site / "out" / "shard-2-of-3"], merged)
    assert main(["remetric", str(merged), "--parse", "fix:y10"]) == 0
    campaign.run(spec, scheduler=scheduler_address, shard="3/3", progress=False)
    capsys.readouterr()
    assert main(["merge", str(site / "out" / "shard-3-of-3"), "-o", str(merged)]) == 0
    said = capsys.readouterr().out
    assert (
        f"{site / 'out' / 'shard-3-of-3'}: 2 tasks' metrics computed with parse: fix:y10 (remetric)"
        in said
    )
    with xr.open_dataset(merged / "results.nc") as results:
        assert results["y"].values.tolist() == [[10, 10], [20, 20], [30, 30]]
    verdict = verify(merged, count=6, scheduler=scheduler_address)
    assert (verdict.reproduced, verdict.mismatches) == (6, [])
    # a shard remetric'ed another way is refused, nothing written
    other = site / "other"
    campaign.run(spec, scheduler=scheduler_address, shard="3/3", output=other, progress=False)
    campaign.merge([other], site / "other-merged")
    remetric(site / "other-merged", MetricsSource("stdout"))  # the program's own: none recorded
    (site / "fix2.py").write_text((TENFOLD % "").replace("10 *", "100 *"))
    remetric(site / "other-merged", MetricsSource("parse", "fix2:y10"))
    files = sorted(path.name for path in (merged / "ledger").iterdir())
    with pytest.raises(CampaignError) as refused:
        campaign.merge([site / "other-merged"], merged)
    assert str(refused.value).startswith(
        f"merge: {site / 'other-merged'} and {merged} hold metrics recomputed by `campaign "
        "remetric` in other ways (parse: fix2:y10 against parse: fix:y10): "
    )
    assert sorted(path.name for path in (merged / "ledger").iterdir()) == files
    assert np.isfinite(xr.load_dataset(merged / "results.nc")["y"].values).all()


def test_tasks_beyond_the_spec_at_a_remetric_come_back_with_its_definition(
    site, scheduler_address, capsys
):
    spec = site / "spec.yaml"
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    # a smaller spec for a while: x=3 and each cell's second replicate lie beyond it
    spec.write_text(
        SPEC.replace("x: [1, 2, 3]", "x: [1, 2]").replace("replicates: 2", "replicates: 1")
    )
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    capsys.readouterr()
    assert main(["remetric", str(spec), "--parse", "fix:y10"]) == 0
    said = capsys.readouterr().out
    # brought back, they are stored already, with the definition of every other task
    spec.write_text(SPEC)
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results["y"].values.tolist() == [[10, 10], [20, 20], [30, 30]]
    assert results["y_mean"].values.tolist() == [10, 20, 30]
    assert results.attrs["tasks_ok"] == 6
    assert len(Ledger(site / "out").load()) == 6  # nothing ran again
    assert said == (
        "remetric: 2 tasks recomputed with parse: fix:y10: y\n"
        "remetric: 4 more finished tasks of levels or replicates the spec no longer has "
        "recomputed too, so that a spec that brings them back keeps them\n"
        f"results: {site / 'out' / 'results.nc'}\n"
    )


def test_tasks_beyond_the_spec_that_a_remetric_cannot_recompute_are_set_aside(
    site, scheduler_address, capsys
):
    spec = site / "spec.yaml"
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    (site / "fix3.py").write_text(
        (TENFOLD % "").replace(
            "def y10(folder):",
            "def y10(folder):\n    assert '3' not in "
            "Path(folder, 'stdout').read_text(), 'no x=3 here'",
        )
    )
    spec.write_text(SPEC.replace("x: [1, 2, 3]", "x: [1, 2]"))
    capsys.readouterr()
    assert main(["remetric", str(spec), "--parse", "fix3:y10"]) == 0
    said = capsys.readouterr().out.splitlines()
    aside = sorted(site.glob("out/ledger.unkept-*"))
    assert len(aside) == 1
    assert "(x=3, replicate " in said[1]
    assert said[1].startswith(
        "remetric: 2 finished tasks of levels or replicates the spec no longer has cannot be "
        "recomputed (task "
    )
    assert said[1].endswith(
        "): AssertionError: no x=3 here): their records are set aside in "
        f"{aside[0]}; a spec that brings them back computes them again"
    )
    stored = Ledger(site / "out").load()
    assert sorted(record["cell"]["x"] for record in stored.values()) == [1, 1, 2, 2]
    # brought back, x=3 is computed again, as in a fresh output folder with that remetric
    spec.write_text(SPEC)
    results = campaign.run(spec, scheduler=scheduler_address, progress=False, keep_going=True)
    assert results["y"].values[:2].tolist() == [[10, 10], [20, 20]]
    assert results.attrs["tasks_failed"] == 2


def test_a_merge_gives_the_definition_to_tasks_beyond_the_spec_too(site, scheduler_address):
    spec = site / "spec.yaml"
    campaign.run(spec, scheduler=scheduler_address, progress=False)  # 2 replicates, into out
    # shards of a one-replicate spec, merged elsewhere and recomputed there
    smaller = site / "smaller.yaml"
    smaller.write_text(SPEC.replace("replicates: 2", "replicates: 1"))
    for shard in ("1/2", "2/2"):
        campaign.run(smaller, scheduler=scheduler_address, shard=shard, progress=False)
    merged = site / "merged"
    campaign.merge([site / "out" / "shard-1-of-2", site / "out" / "shard-2-of-2"], merged)
    remetric(merged, MetricsSource("parse", "fix:y10"))
    # merged into the first folder: its second replicates lie beyond the merged spec
    campaign.merge([merged], site / "out")
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results["y"].values.tolist() == [[10, 10], [20, 20], [30, 30]]
    assert results["y_mean"].values.tolist() == [10, 20, 30]
    assert len({json.dumps(s, sort_keys=True) for s in stamps_of(site / "out")}) == 1


SCALED = """
import json
from pathlib import Path

from scale import FACTOR


def y_scaled(folder):
    return {"y": FACTOR * json.loads(Path(folder, "stdout").read_text())["y"]}
"""

REFUSED = (
    "{output}: metrics y were recomputed by `campaign remetric` with parse: {parser}, whose "
    "code has changed since: new tasks would get another y than the stored ones; give the "
    "same parser to `campaign remetric` (every finished task recomputed with it as it is "
    "now), then run again"
)


def forget(*modules: str) -> None:
    """Drop modules imported from a test's folder: the next import reads the code as it is
    now, as a new process does."""
    for name in modules:
        sys.modules.pop(name, None)


@pytest.fixture
def scaled(site):
    """The campaign's folder with a parser module scaled.py that imports FACTOR from the
    helper module scale.py beside it."""
    (site / "scaled.py").write_text(SCALED)
    (site / "scale.py").write_text("FACTOR = 10\n")
    forget("scaled", "scale")
    yield site
    forget("scaled", "scale")


def test_an_edited_helper_of_a_recorded_parser_is_refused_as_an_edited_parser(
    scaled, scheduler_address
):
    spec = scaled / "spec.yaml"
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    done = remetric(spec, MetricsSource("parse", "scaled:y_scaled"))
    assert done.dataset["y"].values.tolist() == [[10, 10], [20, 20], [30, 30]]
    # the helper as it was: new tasks get the same definition
    spec.write_text(SPEC.replace("replicates: 2", "replicates: 3"))
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results["y"].values.tolist() == [[10] * 3, [20] * 3, [30] * 3]
    # the helper edited: new tasks would get another y, refused before anything runs
    (scaled / "scale.py").write_text("FACTOR = 1000\n")
    forget("scaled", "scale")
    spec.write_text(SPEC.replace("replicates: 2", "replicates: 4"))
    with pytest.raises(CampaignError) as refused:
        campaign.run(spec, scheduler=scheduler_address, progress=False)
    output = scaled / "out"
    assert str(refused.value) == REFUSED.format(output=output, parser="scaled:y_scaled")
    assert len(Ledger(output).load()) == 9  # nothing ran
    # as told: every task recomputed with the parser as it is now, the run goes on
    remetric(spec, MetricsSource("parse", "scaled:y_scaled"))
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results["y"].values.tolist() == [[1000] * 4, [2000] * 4, [3000] * 4]


def test_remetric_finds_a_parser_in_the_working_folder_and_runs_load_it_there(
    scheduler_address, tmp_path, monkeypatch, capsys
):
    (tmp_path / "sim.py").write_text(textwrap.dedent(SIM))
    (tmp_path / "spec.yaml").write_text(SPEC)
    (tmp_path / "here_scaled.py").write_text(SCALED.replace("from scale ", "from here_scale "))
    (tmp_path / "here_scale.py").write_text("FACTOR = 10\n")
    monkeypatch.chdir(tmp_path)  # not on PYTHONPATH nor sys.path: the working folder only
    monkeypatch.setattr(sys, "path", list(sys.path))
    forget("here_scaled", "here_scale")
    try:
        campaign.run("spec.yaml", scheduler=scheduler_address, progress=False)
        capsys.readouterr()
        assert main(["remetric", "out", "--parse", "here_scaled:y_scaled"]) == 0
        assert capsys.readouterr().out == (
            "remetric: 6 tasks recomputed with parse: here_scaled:y_scaled: y\n"
            f"results: {tmp_path / 'out' / 'results.nc'}\n"
        )
        (tmp_path / "spec.yaml").write_text(SPEC.replace("replicates: 2", "replicates: 3"))
        results = campaign.run("spec.yaml", scheduler=scheduler_address, progress=False)
        assert results["y"].values.tolist() == [[10] * 3, [20] * 3, [30] * 3]
        # its helper, found there too, is its code
        (tmp_path / "here_scale.py").write_text("FACTOR = 1000\n")
        forget("here_scaled", "here_scale")
        (tmp_path / "spec.yaml").write_text(SPEC.replace("replicates: 2", "replicates: 4"))
        with pytest.raises(CampaignError) as refused:
            campaign.run("spec.yaml", scheduler=scheduler_address, progress=False)
        assert str(refused.value) == REFUSED.format(
            output=tmp_path / "out", parser="here_scaled:y_scaled"
        )
        capsys.readouterr()
        assert main(["remetric", "out", "--parse", "nowhere_here:y"]) == 2
        assert capsys.readouterr().err == (
            "campaign: error: metrics parser nowhere_here:y: cannot import nowhere_here (in the "
            "working folder or on PYTHONPATH): No module named 'nowhere_here'\n"
        )
    finally:
        forget("here_scaled", "here_scale")


def test_a_parser_edited_between_two_remetrics_of_one_process_runs_as_edited(
    site, scheduler_address
):
    """From one Python session: the second remetric runs the parser as it is now, the code
    its digest is read from, not the module the first one imported."""
    spec = site / "spec.yaml"
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    first = remetric(spec, MetricsSource("parse", "fix:y10"))
    assert first.dataset["y"].values.tolist() == [[10, 10], [20, 20], [30, 30]]
    (site / "fix.py").write_text(TENFOLD.replace("10 *", "100.0 *") % "")
    again = remetric(spec, MetricsSource("parse", "fix:y10"))
    assert again.dataset["y"].values.tolist() == [[100, 100], [200, 200], [300, 300]]
    spec.write_text(SPEC.replace("replicates: 2", "replicates: 3"))
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results["y"].values.tolist() == [[100] * 3, [200] * 3, [300] * 3]  # one definition


DOUBLED = """
import json
from pathlib import Path


def z(folder):
    return {"z": 2 * json.loads(Path(folder, "stdout").read_text())["y"]}
"""


def test_a_declared_metric_a_remetric_defines_is_not_asked_of_the_program(site, scheduler_address):
    """With `declare:`, a metric a parser adds must be declared; the tasks a later run
    computed then failed (`declared metric 'z' is missing from the program's output`), the
    program being asked for what the recorded parser computes from its kept outputs."""
    declared = SPEC.replace("  keep: [stdout]", "  keep: [stdout]\n  declare: {y: {}, z: {}}")
    (site / "doubled.py").write_text(textwrap.dedent(DOUBLED))
    spec = site / "spec.yaml"
    spec.write_text(declared.replace("z: {}", ""))
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    spec.write_text(declared)
    assert remetric(spec, MetricsSource("parse", "doubled:z")).dataset["z"].size == 6
    spec.write_text(declared.replace("replicates: 2", "replicates: 3"))
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results.attrs["tasks_failed"] == 0
    assert results["z"].values.tolist() == [[2] * 3, [4] * 3, [6] * 3]


def test_a_recorded_parser_whose_library_changed_is_refused_as_an_edited_parser(
    site, scheduler_address, monkeypatch
):
    """A library a remetric's parser imports (here a package on PYTHONPATH, described by a
    digest of its code; an installed one by its version) is recorded with the parser, as a
    spec's own ``{parse:}`` parser's libraries are: it was not, and after an upgrade of it
    new tasks got another y than the stored ones, both shown as one metric."""
    library = site / "lib"
    library.mkdir()
    (library / "scalelib.py").write_text("FACTOR = 10\n")
    monkeypatch.syspath_prepend(str(library))
    (site / "libscaled.py").write_text(SCALED.replace("from scale ", "from scalelib "))
    forget("libscaled", "scalelib")
    try:
        spec = site / "spec.yaml"
        campaign.run(spec, scheduler=scheduler_address, progress=False)
        remetric(spec, MetricsSource("parse", "libscaled:y_scaled"))
        stored = json.loads((site / "out" / "campaign.json").read_text())
        (definition,) = stored["metric_definitions"]
        assert definition["libraries"]["scalelib"].startswith("code ")
        (library / "scalelib.py").write_text("FACTOR = 1000\n")  # upgraded
        forget("libscaled", "scalelib")
        spec.write_text(SPEC.replace("replicates: 2", "replicates: 3"))
        with pytest.raises(CampaignError) as refused:
            campaign.run(spec, scheduler=scheduler_address, progress=False)
        then, now = definition["libraries"]["scalelib"], "code "
        assert str(refused.value).startswith(
            f"{site / 'out'}: metrics y were recomputed by `campaign remetric` with parse: "
            f"libscaled:y_scaled, whose libraries have changed since (scalelib {then} then, "
            f"{now}"
        )
        assert len(Ledger(site / "out").load()) == 6  # nothing ran
        remetric(spec, MetricsSource("parse", "libscaled:y_scaled"))  # as told
        results = campaign.run(spec, scheduler=scheduler_address, progress=False)
        assert results["y"].values.tolist() == [[1000] * 3, [2000] * 3, [3000] * 3]
    finally:
        forget("libscaled", "scalelib")
