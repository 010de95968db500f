"""results.nc read after its spec file was edited, and before the edited spec ran: every table,
export and figure of it says its numbers are the earlier spec's; an edit that changes no
value (a comment, the layout, the description) says nothing."""

from __future__ import annotations

import numpy as np
import xarray as xr

import campaign
from campaign.cli.main import main

SPEC = "name: x\nmodel: mm1\nfactors: {arrival_rate: [0.5, 0.7]}\nreplicates: 3\nseed: 1\n"


def results_of(spec_file) -> xr.Dataset:
    """Results of two cells, 3 replicates, made from ``SPEC`` written at ``spec_file``."""
    dims = ("arrival_rate", "replicate")
    values = np.random.default_rng(1).normal(1.0, 0.1, (2, 3))
    return xr.Dataset(
        {
            "mean_wait": (dims, values),
            "status": (dims, np.ones((2, 3), "i1")),
            "seed": (dims, np.arange(6).reshape(2, 3)),
        },
        {"arrival_rate": [0.5, 0.7], "replicate": np.arange(3)},
        attrs={"confidence": 0.95, "spec": SPEC, "spec_file": str(spec_file)},
    )


def test_results_of_an_edited_spec_say_they_are_the_earlier_specs(tmp_path, capsys):
    spec, path = tmp_path / "s.yaml", tmp_path / "results.nc"
    spec.write_text(SPEC)
    results_of(spec).to_netcdf(path)
    spec.write_text("# the same spec, laid out otherwise\n" + SPEC.replace(": ", ":  "))
    spec.write_text(spec.read_text() + "description: what it reproduces\n")
    assert "incomplete" not in campaign.open_results(path).attrs
    spec.write_text(SPEC.replace("replicates: 3", "replicates: 2"))
    note = (
        f"results.nc was written from {spec} as it was before an edit: these numbers are the "
        f"earlier spec's (the one results.nc keeps), not the file's now; `campaign run {spec}` "
        "writes the edited spec's"
    )
    assert note in campaign.table(campaign.query(path, "mean_wait")).splitlines()
    compared = campaign.compare(path, "arrival_rate", 0.5, "mean_wait")
    assert note in campaign.table(compared).replace("\n  ", " ")
    assert main(["export", str(path), "-o", str(tmp_path / "tasks.csv")]) == 0
    assert capsys.readouterr().err.splitlines() == [f"campaign: {note}"]
    assert main(["plot", str(path), "--metric", "mean_wait", "--out", str(tmp_path / "w.png")]) == 0
    assert capsys.readouterr().err.splitlines() == [f"campaign: {note}"]
    spec.write_text("name: [x\n")  # no longer a spec at all: not the one results.nc keeps
    assert campaign.open_results(path).attrs["incomplete"] == note.removeprefix("results.nc ")
    spec.unlink()  # nothing to compare with: nothing said
    assert "incomplete" not in campaign.open_results(path).attrs


def test_status_says_when_results_nc_is_not_of_the_spec_given(tmp_path, capsys):
    """`status` of a spec points at its results.nc, and says (as `plan` does) when that holds
    another spec's numbers: the spec given is not the one results.nc keeps, or results.nc's
    spec file was edited since (status of the output folder, which reads the spec results.nc
    keeps)."""
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC + "output: out\n")
    (tmp_path / "out").mkdir()
    results = results_of(spec).assign_attrs(spec=SPEC + "output: out\n")
    results.to_netcdf(tmp_path / "out" / "results.nc")
    assert main(["status", str(spec)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"results: {tmp_path / 'out/results.nc'}"
    spec.write_text(SPEC.replace("replicates: 3", "replicates: 2") + "output: out\n")
    for target, words in (
        (spec, "was written from another spec than the one given: its numbers are not this "
               "spec's; `campaign run SPEC` writes this spec's"),
        (tmp_path / "out", f"was written from {spec} as it was before an edit"),
    ):  # fmt: skip
        assert main(["status", str(target)]) == 0
        last = capsys.readouterr().out.splitlines()[-1]
        assert last.startswith(f"  results.nc {words}"), last
    assert main(["plan", str(spec)]) == 0  # however few tasks would run, results.nc is not this
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].startswith("plan: 0 done") and lines[-1].startswith(
        "  results.nc was written from another spec than the one given"
    )


def test_a_run_of_the_output_folder_says_its_spec_file_was_edited_since(tmp_path):
    """`campaign run FOLDER` runs the spec results.nc keeps: after an edit of its spec file,
    the end of the run says that its numbers are not the file's."""
    from campaign.render.outcomes import run_lines
    from campaign.spec.load import load_spec

    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    counts = {"tasks_ok": 0, "tasks_failed": 0, "tasks_missing": 6}
    written = results_of(spec).assign_attrs(counts)
    assert run_lines(written, load_spec(spec), 0.95)[-1].startswith("results: ")
    spec.write_text(SPEC.replace("replicates: 3", "replicates: 2"))
    last = run_lines(written, load_spec(spec), 0.95)[-1]
    assert last.startswith(f"  results.nc was written from {spec} as it was before an edit")
