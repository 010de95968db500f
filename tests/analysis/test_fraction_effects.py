"""Main effects of a two-level fraction: a real campaign of a model with known linear effects
recovers them, and an interaction shows up in the main effect it is aliased with."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import xarray as xr

from campaign.analysis.anova import effects
from campaign.cli.main import main
from campaign.design.tasks import Design, cell_params
from campaign.render.effects import render_effects
from campaign.render.report import design_note
from campaign.results.assemble import assemble
from campaign.results.netcdf import open_results, write_netcdf
from campaign.spec.load import load_spec
from tests.conftest import run_with_model

LINEAR = '''
import numpy as np


def run(params, seed):
    """Known effects (high - low, levels -1 and 1): a +6, b -4, c +3, g +1, the rest 0."""
    noise = np.random.default_rng(seed).standard_normal()
    exact = 10 + 3 * params["a"] - 2 * params["b"] + 1.5 * params["c"] + 0.5 * params["g"]
    return {"exact": exact, "noisy": exact + noise}
'''

SPEC = """
name: screening
model: linear_model:run
factors: {a: [-1, 1], b: [-1, 1], c: [-1, 1], d: [-1, 1], e: [-1, 1], f: [-1, 1], g: [-1, 1]}
design: {fractional: {generators: {d: a*b, e: a*c, f: b*c, g: a*b*c}}}
replicates: 4
seed: 15
output: out
"""
TRUE = {"a": 6.0, "b": -4.0, "c": 3.0, "d": 0.0, "e": 0.0, "f": 0.0, "g": 1.0}
ALIASES = {
    "a": "bd ce fg",
    "b": "ad cf eg",
    "c": "ae bf dg",
    "d": "ab cg ef",
    "e": "ac bg df",
    "f": "ag bc de",
    "g": "af be cd",
}


def test_a_2_7_4_campaign_recovers_known_main_effects_and_names_their_aliases(
    tmp_path, capsys, monkeypatch
):
    (tmp_path / "linear_model.py").write_text(LINEAR)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = tmp_path / "screening.yaml"
    spec.write_text(textwrap.dedent(SPEC))
    assert main(["validate", str(spec)]) == 0
    printed = capsys.readouterr().out
    assert "fractional: 2^(7-4) fraction, 8 runs, resolution III\n" in printed
    assert "    generators: d = ab, e = ac, f = bc, g = abc\n" in printed
    assert "    defining relation: I = abd = ace = afg = bcf = beg = cdg = def = abcg" in printed
    assert "      a = bd = ce = fg\n" in printed and "      g = af = be = cd\n" in printed
    assert "design: 8 cells x 4 replicates = 32 tasks; seed 15\n" in printed

    done = run_with_model(tmp_path, spec)
    assert done.returncode == 0, done.stderr
    assert "32 tasks ok, 0 failed, 0 missing" in done.stdout

    results = xr.open_dataset(tmp_path / "out" / "results.nc")
    assert dict(results.sizes) == {"point": 8, "replicate": 4}
    runs = np.stack([results[f].values for f in "abcdefg"], axis=1)
    assert sorted(map(tuple, runs[:, :3])) == sorted(
        (a, b, c) for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)
    )
    a, b, c, d, e, f, g = runs.T
    assert (d == a * b).all() and (e == a * c).all() and (f == b * c).all()
    assert (g == a * b * c).all()
    assert results.attrs["design"] == "fractional"
    assert results.attrs["design_generators"] == "d = ab, e = ac, f = bc, g = abc"
    assert results.attrs["design_resolution"] == "3"
    assert results.attrs["design_aliases"].startswith("a = bd = ce = fg; b = ad = cf = eg")
    assert design_note(results) == (
        "<p>2^(7-4) fraction, 8 runs, resolution III: generators d = ab, e = ac, f = bc, g = abc; "
        f"defining relation {results.attrs['design_defining_relation']}; aliases "
        f"{results.attrs['design_aliases']}.</p>"
    )  # the report's design section says which fraction ran
    table = results[["exact", "a", "g"]].to_dataframe()  # one row per task, factors as columns
    assert len(table) == 32 and list(table.index.names) == ["point", "replicate"]

    exact = effects(results, "exact")
    assert exact["effect"].values == pytest.approx([TRUE[f] for f in "abcdefg"], abs=1e-12)
    assert dict(zip(exact["term"].values, exact["aliases"].values)) == ALIASES
    noisy = effects(results, "noisy")
    truth = np.array([TRUE[f] for f in "abcdefg"])
    assert ((noisy["ci_low"].values <= truth) & (truth <= noisy["ci_high"].values)).all()
    assert (noisy["n"].values == 4).all()
    # the significant effects are the true ones; the others' intervals cover 0
    assert list(noisy["term"].values[noisy["p_value"].values < 0.01]) == ["a", "b", "c"]

    assert main(["effects", str(tmp_path / "out"), "--metric", "exact"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("exact: main effects on the 2^(7-4) fraction, 8 runs, resolution")
    assert lines[1].startswith("defining relation: I = abd = ace = afg")
    assert lines[2].split() == ["factor", "low", "high", "effect", "interval", "p", "aliased",
                                "with", "(up", "to", "2FI)"]  # fmt: skip
    assert lines[4].split()[:4] == ["a", "-1", "1", "+6"]
    assert lines[4].endswith("bd, ce, fg") and lines[7].endswith("ab, cg, ef")
    assert lines[-1].startswith("each effect estimates the sum of the effects aliased with it")
    assert main(["effects", str(tmp_path / "out"), "--metric", "exact", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["factor"], round(r["effect"], 9), r["aliases"]) for r in rows] == [
        (f, TRUE[f], ALIASES[f]) for f in "abcdefg"
    ]

    # a rerun runs nothing: every task of the fraction is stored
    again = run_with_model(tmp_path, spec)
    assert again.returncode == 0 and "0 to run" in again.stdout


def interaction(params):
    """No main effect of d at all, but an a x b interaction: d's column is ab, so the
    fraction cannot tell them apart."""
    return {"y": 5.0 + 2.0 * params["a"] * params["b"] + 1.0 * params["e"]}


def test_an_interaction_shows_up_in_the_main_effect_it_is_aliased_with(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC.replace("linear_model:run", "m:run")))
    design = Design(load_spec(path))
    records = {
        task.key: {
            "key": task.key,
            "status": "ok",
            "metrics": interaction(cell_params(design.spec, task.cell)),
        }
        for task in design.tasks()
    }
    result = effects(assemble(design, records, 0.95), "y")
    found = dict(zip(result["term"].values, result["effect"].values))
    assert found == pytest.approx({"a": 0, "b": 0, "c": 0, "d": 4, "e": 2, "f": 0, "g": 0})
    text = render_effects(result)
    row = next(line for line in text.splitlines() if line.startswith("d "))
    assert row.split()[3] == "+4" and row.endswith("ab, cg, ef")


def test_a_fraction_refuses_where(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC.replace("linear_model:run", "m:run")))
    design = Design(load_spec(path))
    records = {t.key: {"key": t.key, "status": "ok", "metrics": {"y": 1.0}} for t in design.tasks()}
    from campaign.errors import CampaignError

    with pytest.raises(CampaignError, match="a fraction's factors vary together"):
        effects(assemble(design, records, 0.95), "y", ["a=1"])


MIXED = """
name: mixed
model: m:run
factors: {a: [0.5, 2], b: [false, true], c: ["1", "10"]}
design: {fractional: {generators: {c: a*b}}}
replicates: 3
seed: 4
output: out
"""


def test_levels_of_mixed_kinds_give_effects_from_the_runs_at_each_level(tmp_path):
    """An integer level beside a float one lies along the points as a float (2 as 2.0), a
    boolean level as a boolean, a numeric-looking string as a string: each factor's high
    runs are found by value, so every effect is high - low (a's was NaN, with p = 0)."""
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(MIXED))
    design = Design(load_spec(path))

    def metric(params, replicate):
        numbers = {"0.5": 1.0, "2": 4.0, "False": 0.0, "True": -3.0, "1": 2.0, "10": 2.5}
        return sum(numbers[str(params[f])] for f in "abc") + replicate

    records = {
        task.key: {
            "key": task.key,
            "status": "ok",
            "metrics": {"y": metric(cell_params(design.spec, task.cell), task.replicate)},
        }
        for task in design.tasks()
    }
    write_netcdf(assemble(design, records, 0.95), tmp_path / "results.nc")
    reopened = open_results(tmp_path / "results.nc")
    assert list(reopened["a"].values) == [0.5, 0.5, 2.0, 2.0]
    result = effects(reopened, "y")
    assert list(result["term"].values) == ["a", "b", "c"]
    assert result["effect"].values == pytest.approx([3.0, -3.0, 0.5], abs=1e-12)
    assert (result["n"].values == 3).all()
    assert list(result["high"].values) == ["2", "True", "10"]
    row = next(line for line in render_effects(result).splitlines() if line.startswith("a "))
    assert row.split()[1:4] == ["0.5", "2", "+3"]


def test_csv_and_json_say_the_intervals_level_and_the_replicates_left_out(tmp_path, capsys):
    """The text says the intervals are 95% ones and that a replicate was left out; CSV and
    JSON carried neither: no ci_level, and the note nowhere."""
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(MIXED))
    design = Design(load_spec(path))
    records, failed = {}, False
    for task in design.tasks():
        value = {"y": float(task.replicate + len(str(cell_params(design.spec, task.cell))))}
        records[task.key] = {"key": task.key, "status": "ok", "metrics": value}
        if task.replicate == 2 and not failed:  # a run of replicate 2 fails: it is left out
            records[task.key] = {"key": task.key, "status": "failed", "error": "ValueError: x"}
            failed = True
    write_netcdf(assemble(design, records, 0.9), tmp_path / "results.nc")
    assert main(["effects", str(tmp_path / "results.nc"), "--metric", "y"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert "90% interval over them" in text[0]
    assert text[2] == "1 replicates left out: some run of the fraction has no value in them"
    assert main(["effects", str(tmp_path), "--metric", "y", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].endswith(",aliases,ci_level,ci_method")
    assert lines[1].endswith(",0.9,Student t over complete replicates")
    assert captured.err == f"campaign: {text[2]}\n"
