"""Designs: two-level fractions (runs, defining relation, aliases, the standard table) and
Latin hypercube and Sobol points (stratified, nested, seeded)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import qmc

from campaign.designs import (
    STANDARD,
    DesignError,
    check_sizes,
    is_stratified,
    latin_hypercube,
    parse_generators,
    standard_fraction,
    unit_points,
)

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
        ({"d": "a*b", "e": "a*b"}, "alias the main effects of d and e (the defining relation "
         "holds de)"),
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
