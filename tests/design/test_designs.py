"""Designs: two-level fractions (runs, defining relation, aliases, the standard table) and
Latin hypercube and Sobol points (stratified, nested, seeded)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import qmc

import campaign
from campaign.cli.main import main
from campaign.design.points import (
    STANDARD,
    DesignError,
    check_sizes,
    is_stratified,
    latin_hypercube,
    parse_generators,
    standard_fraction,
    unit_points,
)
from campaign.design.tasks import Design
from campaign.plan.plan import make_plan
from campaign.render.export import tidy
from campaign.spec.describe import describe_spec
from campaign.spec.load import load_spec
from campaign.store.ledger import Ledger

SEVEN = list("abcdefg")
TEXTBOOK_III = {"d": "a*b", "e": "a*c", "f": "b*c", "g": "a*b*c"}


def test_the_textbook_2_7_4_fraction_has_the_textbook_runs_relation_and_aliases():
    fraction = parse_generators(TEXTBOOK_III, SEVEN)
    assert fraction.title == "2^(7-4) fraction, 8 runs, resolution III"
    # the eight runs: a, b, c in full, d = ab, e = ac, f = bc, g = abc (0 low, 1 high)
    signs = 2 * fraction.runs - 1
    for a, b, c, d, e, f, g in signs:
        assert (d, e, f, g) == (a * b, a * c, b * c, a * b * c)
    assert sorted(map(tuple, signs[:, :3])) == sorted(itertools.product((-1, 1), repeat=3))
    assert fraction.relation_text() == (
        "I = abd = ace = afg = bcf = beg = cdg = def = abcg = abef = acdf = adeg = bcde = "
        "bdfg = cefg = abcdefg"
    )
    # Montgomery's alias structure of the 2^(7-4) III design, main effects with 2FIs
    assert fraction.alias_lines() == [
        "a = bd = ce = fg",
        "b = ad = cf = eg",
        "c = ae = bf = dg",
        "d = ab = cg = ef",
        "e = ac = bg = df",
        "f = ag = bc = de",
        "g = af = be = cd",
    ]


def test_signs_and_long_names_are_carried_into_the_words():
    fraction = parse_generators({"load": "-rate*size"}, ["rate", "size", "load"])
    assert fraction.relation_text() == "I = -rate*size*load"
    assert fraction.alias_lines() == ["rate = -size*load", "size = -rate*load", "load = -rate*size"]
    signs = 2 * fraction.runs - 1
    assert (signs[:, 2] == -signs[:, 0] * signs[:, 1]).all()


def test_a_resolution_iv_fraction_aliases_two_factor_interactions_with_each_other():
    fraction = parse_generators({"d": "a*b*c"}, list("abcd"))
    assert fraction.relation_text() == "I = abcd"
    assert fraction.alias_lines() == ["ab = cd", "ac = bd", "ad = bc"]


@pytest.mark.parametrize(
    ("generators", "message"),
    [
        ({"d": "a*b", "e": "a*b"}, "alias the main effects of d and e with each other (the "
         "defining relation holds de)"),
        ({"d": "a"}, "alias the main effects of a and d"),
        ({"z": "a*b"}, "'z' is not a factor; factors: a, b, c, d, e"),
        ({"d": "a*x"}, "d: 'x' in 'a*x' is not a factor"),
        ({"d": "a*a*b"}, "d: 'a' appears twice in 'a*a*b'"),
        ({"d": "a*e", "e": "a*b"}, "d: 'e' is itself generated"),
        ({"d": 3}, "d: expected a product of factors such as a*b*c, got 3"),
    ],
)  # fmt: skip
def test_bad_generators_are_one_line(generators, message):
    with pytest.raises(DesignError) as caught:
        parse_generators(generators, list("abcde"))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_every_standard_fraction_has_its_resolution_and_the_fewest_runs_it_can():
    # the largest k a resolution allows in n runs: III n-1, IV n/2, V per the known maxima
    most = {3: lambda n: n - 1, 4: lambda n: n // 2, 5: {16: 5, 32: 6, 64: 8, 128: 11}.get}
    for k in STANDARD:
        names = [f"x{i}" for i in range(k)]
        for resolution in (3, 4, 5):
            fraction = standard_fraction(names, resolution)
            runs = len(fraction.runs)
            assert len(np.unique(fraction.runs, axis=0)) == runs
            assert (fraction.resolution or 99) >= resolution
            if fraction.generators:  # no fraction of half as many runs has the resolution
                assert (most[resolution](runs // 2) or 0) < k
    for k, table in STANDARD.items():
        for resolution, text in table.items():
            fraction = standard_fraction([f"x{i}" for i in range(k)], resolution)
            assert fraction.resolution == resolution, (k, text)


def test_standard_fraction_picks_the_textbook_designs():
    assert standard_fraction(SEVEN, 3).generator_text() == "d = ab, e = ac, f = bc, g = abc"
    assert standard_fraction(list("abcd"), 3).title == "2^(4-1) fraction, 8 runs, resolution IV"
    assert standard_fraction(list("abc"), 4).title == "2^(3-0) fraction, 8 runs, full"
    with pytest.raises(DesignError, match="at most 11 factors, not 12"):
        standard_fraction([f"x{i}" for i in range(12)], 3)


def test_a_latin_hypercube_puts_one_point_in_each_stratum_of_every_factor_at_every_size():
    points = latin_hypercube([6, 12, 36], 4, seed=11)
    assert points.shape == (36, 4)
    for size in (6, 12, 36):
        assert all(is_stratified(points[:size, j]) for j in range(4))
    # a larger size keeps the points before it
    np.testing.assert_array_equal(latin_hypercube([6, 12], 4, seed=11), points[:12])
    np.testing.assert_array_equal(latin_hypercube([6], 4, seed=11), points[:6])
    assert not np.array_equal(latin_hypercube([6], 4, seed=12), points[:6])
    assert not is_stratified(np.array([0.1, 0.2, 0.7]))  # the check can fail


def test_sobol_points_are_a_prefix_of_one_scrambled_sequence_from_the_seed():
    small, large = unit_points("sobol", [8], 3, seed=5), unit_points("sobol", [32], 3, seed=5)
    np.testing.assert_array_equal(small, large[:8])
    assert not np.array_equal(small, unit_points("sobol", [8], 3, seed=6))
    # a scrambled Sobol sequence of 2^m points is a (0, m, d)-net: low discrepancy
    assert qmc.discrepancy(large) < qmc.discrepancy(np.random.default_rng(0).random((32, 3)))
    for column in large.T:  # 32 points, one per stratum of 1/32 in every coordinate
        assert is_stratified(column)


@pytest.mark.parametrize(
    ("kind", "raw", "message"),
    [
        ("sobol", 0, "0 is not allowed; use an integer from 1 to 1,000,000"),
        ("sobol", [8, 16], "[8, 16] is not allowed; use an integer from 1"),
        ("latin_hypercube", [10, 15], "[10, 15]: each size must be a larger multiple"),
        ("latin_hypercube", [10, 10], "[10, 10]: each size must be a larger multiple"),
        ("latin_hypercube", "ten", "or a list of growing sizes"),
    ],
)
def test_bad_point_counts_are_one_line(kind, raw, message):
    with pytest.raises(DesignError) as caught:
        check_sizes(kind, raw)
    assert message in str(caught.value)


LHS = """
name: sampled
model: mm1
{params}factors:
  arrival_rate: {{low: 0.2, high: 0.8}}
  service_rate: {{low: 1.0, high: 2.0}}
{crossed}design: {{{kind}: {{points: {points}}}}}
replicates: 2
seed: 31
output: out
"""


def sampled(write_spec, kind: str, points, crossed: bool = False) -> Path:
    """A Latin hypercube or Sobol design of M/M/1 queues; ``crossed``: with a paired factor
    (the customers per run) crossed with the points."""
    params = "" if crossed else "params: {customers: 200}\n"
    crossing = "  customers: {short: 200, long: 400}\npaired: [customers]\n" if crossed else ""
    return write_spec(LHS.format(params=params, crossed=crossing, kind=kind, points=points))


def unit(results, factor: str, low: float, high: float) -> np.ndarray:
    return (results[factor].values - low) / (high - low)


def test_a_latin_hypercube_campaign_stratifies_every_factor_and_keeps_its_points_when_grown(
    write_spec, scheduler_address, capsys
):
    spec = sampled(write_spec, "latin_hypercube", 6)
    assert main(["validate", str(spec)]) == 0
    printed = capsys.readouterr().out
    assert "  factor arrival_rate: range 0.2 to 0.8\n" in printed
    assert (
        "  latin_hypercube: Latin hypercube, 6 points over arrival_rate, service_rate, drawn "
        "from seed 31\n" in printed
    )
    assert "  design: 6 cells x 2 replicates = 12 tasks; seed 31\n" in printed
    first = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert dict(first.sizes) == {"point": 6, "replicate": 2}
    assert int((first["status"] == 1).sum()) == 12
    # one point in each sixth of each range
    assert is_stratified(unit(first, "arrival_rate", 0.2, 0.8))
    assert is_stratified(unit(first, "service_rate", 1.0, 2.0))
    assert first.attrs["design"] == "latin_hypercube" and first.attrs["design_points"] == "6"
    assert json.loads(first.attrs["design_ranges"]) == {
        "arrival_rate": [0.2, 0.8],
        "service_rate": [1.0, 2.0],
    }
    keys = set(Ledger(spec.parent / "out").load())
    assert len(keys) == 12

    spec.write_text(spec.read_text().replace("points: 6", "points: [6, 18]"))
    plan = make_plan(spec)
    assert (plan.done, len(plan.missing)) == (12, 24)  # the stored points are kept
    grown = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert dict(grown.sizes) == {"point": 18, "replicate": 2}
    assert is_stratified(unit(grown, "arrival_rate", 0.2, 0.8))
    assert is_stratified(unit(grown, "service_rate", 1.0, 2.0))
    kept = grown.isel(point=slice(0, 6))
    for name in ("arrival_rate", "service_rate", "mean_wait", "seed"):
        np.testing.assert_array_equal(kept[name].values, first[name].values)
    assert keys < set(Ledger(spec.parent / "out").load())


def test_sobol_points_grow_as_a_prefix_and_paired_levels_are_crossed_with_them(
    write_spec, scheduler_address
):
    spec = sampled(write_spec, "sobol", 4, crossed=True)
    first = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert dict(first.sizes) == {"customers": 2, "point": 4, "replicate": 2}
    # the paired levels share seeds at every point and replicate, the points do not
    seeds = first["seed"].values
    assert (seeds[0] == seeds[1]).all() and len(np.unique(seeds[0])) == 8
    spec.write_text(spec.read_text().replace("points: 4", "points: 8"))
    assert make_plan(spec).done == 16
    grown = campaign.run(spec, scheduler=scheduler_address, progress=False)
    np.testing.assert_array_equal(
        grown["mean_wait"].isel(point=slice(0, 4)).values, first["mean_wait"].values
    )
    expected = unit_points("sobol", [8], 2, seed=31)
    np.testing.assert_allclose(unit(grown, "arrival_rate", 0.2, 0.8), expected[:, 0])
    np.testing.assert_allclose(unit(grown, "service_rate", 1.0, 2.0), expected[:, 1])


BASE = """
name: bad
model: mm1
factors:
{factors}
design: {design}
replicates: 2
seed: 3
"""


@pytest.mark.parametrize(
    ("factors", "design", "message"),
    [
        ("  a: [1, 2, 3]\n  b: [1, 2]\n  c: [1, 2]", "{fractional: {generators: {c: a*b}}}",
         "design.fractional: factor a has 3 levels; a two-level fraction needs exactly two "
         "levels per factor (low first, then high)"),
        ("  a: [1, 2]\n  b: [1, 2]\n  c: [1, 2]", "{fractional: {generators: {c: a*x}}}",
         "design.fractional.generators: c: 'x' in 'a*x' is not a factor; factors: a, b, c"),
        ("  a: [1, 2]\n  b: [1, 2]\n  c: [1, 2]\n  d: [1, 2]",
         "{fractional: {generators: {c: a*b, d: a*b}}}",
         "design.fractional.generators: these generators alias the main effects of c and d "
         "with each other (the defining relation holds cd), so no analysis could tell them "
         "apart; use longer generator words"),
        ("  a: [1, 2]\n  b: [1, 2]", "{fractional: {}}",
         "design.fractional: give generators (d: a*b*c) or resolution (3, 4, 5, ...), one"),
        ("  a: [1, 2]\n  b: [1, 2]", "{fractional: {resolution: 2}}",
         "design.fractional.resolution: 2 is not allowed; use 3, 4, 5, ..."),
        ("  a: {low: 0, high: 1}", "{latin_hypercube: {}}",
         "design.latin_hypercube: missing key 'points' (how many design points, e.g. points: 20 (a "
         "Latin hypercube grows by sizes, each a multiple of the one before: [20, 40]); integer "
         "from 1 to 1000000, or list of integer from 1 to 1000000)"),
        ("  a: [1, 2]", "{latin_hypercube: {points: 5}}",
         "design.latin_hypercube: no factor is a range; give at least one as {low: number, "
         "high: number}"),
        ("  a: {low: 1, high: 1}", "{sobol: {points: 8}}",
         "factors.a: the range needs low < high, got low 1, high 1"),
        ("  a: {low: 0, high: 1}", "{sobol: {points: 8, seed: 1}}",
         "design.sobol: unknown key 'seed'; allowed: points"),
        ("  a: [1, 2]", "taguchi",
         "design: unknown design 'taguchi'; designs: full, fractional, latin_hypercube, sobol, "
         "saltelli, morris"),
    ],
)  # fmt: skip
def test_design_mistakes_are_one_line(write_spec, capsys, factors, design, message):
    path = write_spec(BASE.format(factors=factors, design=design))
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == f"campaign: error: {path}: {message}\n"


def test_a_range_in_a_full_design_stays_two_labelled_levels(write_spec, capsys):
    factors = "  arrival_rate: {low: 0.3, high: 0.6}"
    path = write_spec(BASE.format(factors=factors, design="full"))
    factor = load_spec(path).factor("arrival_rate")
    assert (factor.labels, factor.values, factor.range) == (("low", "high"), (0.3, 0.6), None)
    assert main(["validate", str(path)]) == 0
    assert (
        "  factor arrival_rate: 2 levels: low = 0.3 (number), high = 0.6 (number) (labelled "
        "levels; a range {low, high} needs "
        "design: latin_hypercube or sobol)\n" in capsys.readouterr().out
    )


def test_a_fraction_from_a_requested_resolution_runs_the_standard_cells(write_spec):
    factors = "\n".join(f"  {name}: [low, high]" for name in "abcdefg")
    spec = load_spec(
        write_spec(BASE.format(factors=factors, design="{fractional: {resolution: 4}}"))
    )
    assert spec.design.fraction.generator_text() == "e = abc, f = bcd, g = acd"
    design = Design(spec)
    assert (design.dims, design.shape, spec.cells) == (["point"], (16,), 16)
    labels = [tuple(f.labels[i] for f, i in zip(spec.factors, cell)) for cell in design.cells]
    # all base factors low: e = abc, f = bcd, g = acd low; d high: f and g high
    assert labels[:2] == [("low",) * 7, ("low", "low", "low", "high", "low", "high", "high")]
    # a cell of a fraction is the same task as in the full factorial: same key and seed
    full = Design(load_spec(write_spec(BASE.format(factors=factors, design="full"), "full.yaml")))
    index = full.cells.index(design.cells[5])
    assert full.task(index * 2 + 1) == design.task(5 * 2 + 1)


def test_failed_tasks_of_design_points_are_listed_with_their_point_and_values(
    write_spec, scheduler_address, tmp_path
):
    text = LHS.format(params="params: {customers: 50, fail_above: 4.0}\n", crossed="",
                      kind="sobol", points=8)  # fmt: skip
    spec = write_spec(text.replace("{low: 0.2, high: 0.8}", "{low: 0.05, high: 0.3}"))
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    failed = np.argwhere(results["status"].values == 2)
    assert 0 < len(failed) < 16
    failures = campaign.open_failures(spec.parent / "out")
    assert sorted(zip(failures["point"].values, failures["failure_replicate"].values)) == sorted(
        map(tuple, failed.tolist())
    )
    np.testing.assert_array_equal(
        failures["arrival_rate"].values, results["arrival_rate"].values[failures["point"].values]
    )
    table = tidy(results, failures)
    assert list(table.columns[:4]) == ["point", "arrival_rate", "service_rate", "replicate"]
    errors = table.loc[table["status"] == "failed", "error"]
    assert len(errors) == len(failed) and errors.str.contains("fail_above").all()
    assert (table.loc[table["status"] == "ok", "error"] == "").all()


def test_a_precision_target_gives_each_design_point_its_own_rounds(write_spec, scheduler_address):
    text = LHS.format(params="params: {customers: 200}\n", crossed="", kind="sobol", points=4)
    precision = (
        "precision: {metrics: [mean_wait], half_width: 0.25, min_replicates: 3, "
        "max_replicates: 12}\n"
    )
    spec = write_spec(text.replace("replicates: 2\n", precision))
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    given = results["precision_replicates"]
    assert given.dims == ("point",) and (given.values >= 3).all()
    assert len(set(given.values.tolist())) > 1  # the points needed different counts
    finished = (results["status"] == 1).sum("replicate")
    np.testing.assert_array_equal(finished.values, given.values)
    met_or_max = (results["precision_state"].values == 1) | (given.values == 12)
    assert met_or_max.all()
    plan = make_plan(spec)
    assert (plan.done, plan.to_run) == (int(given.sum()), [])


def test_validate_says_when_sobol_points_are_not_a_power_of_two(write_spec, capsys):
    for points, note in ((16, ""), (20, " (not a power of 2: a Sobol sequence is balanced at "
                                        "2^m points, not 20)")):  # fmt: skip
        assert main(["validate", str(sampled(write_spec, "sobol", points))]) == 0
        assert (
            f"  sobol: Sobol sequence (scrambled), {points} points over arrival_rate, "
            f"service_rate, drawn from seed 31{note}\n" in capsys.readouterr().out
        )


@pytest.mark.parametrize(
    ("paired", "line"),
    [
        ("[d]", "paired: no two runs of the fraction differ in d alone, so no run shares its "
         "seeds with another"),
        ("[a, b]", "paired: the 8 runs share seeds in 4 groups"),  # I = abcd: ab is a difference
    ],
)  # fmt: skip
def test_validate_says_which_runs_of_a_fraction_share_seeds(write_spec, capsys, paired, line):
    spec = BASE.format(
        factors="\n".join(f"  {name}: [low, high]" for name in "abcd"),
        design="{fractional: {generators: {d: a*b*c}}}",
    ).replace("model: mm1", "model: anything:run")
    path = write_spec(spec + f"paired: {paired}\n")
    assert f"\n    {line}\n" in describe_spec(load_spec(path)) + "\n"
