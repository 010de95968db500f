"""The rules of the selection procedures, each against a worked example of its procedure:
KN's and KN++'s constants and screening, OCBA's allocation, GSP's constant and screening,
Rinott's h; and the stage machine's decisions on small hand-made groups."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from campaign.analysis import selection_rules as rules
from campaign.analysis.selection import STATES, SelectionRule, select_group
from campaign.spec.selection import systems_share_seeds
from campaign.spec.types import Selection


def test_kn_eta_and_h2_of_kim_and_nelson():
    """KN (Kim & Nelson 2001), c = 1: eta = ((2 alpha/(k-1))^(-2/(n0-1)) - 1)/2, here
    k = 10, alpha = 0.05, n0 = 10: (90^(2/9) - 1)/2, and h^2 = 2 eta (n0 - 1)."""
    eta = rules.kn_eta(10, 0.05, 10)
    assert eta == pytest.approx((90 ** (2 / 9) - 1) / 2, rel=1e-12)
    assert eta == pytest.approx(0.859083, abs=1e-6)
    assert rules.kn_h2(10, 0.05, 10) == pytest.approx(15.46350, abs=1e-5)
    # eta is the root of g(eta) = (1/2)(1 + 2 eta)^(-(n0-1)/2) = alpha/(k-1)
    for k, alpha, n0 in [(10, 0.05, 10), (2, 0.1, 5), (25, 0.05, 20)]:
        eta = rules.kn_eta(k, alpha, n0)
        assert 0.5 * (1 + 2 * eta) ** (-(n0 - 1) / 2) == pytest.approx(alpha / (k - 1))


def test_knpp_h2_of_kim_and_nelson_2006():
    """KN++: beta = 1 - (1 - alpha)^(1/(k-1)) = 0.0056830 for k = 10, alpha = 0.05;
    eta = ((2 beta)^(-2/f) - 1)/2 with f = 9: 0.85225, h^2 = 2 eta f = 15.3405."""
    beta = 1 - 0.95 ** (1 / 9)
    assert beta == pytest.approx(0.0056830, abs=1e-7)
    assert rules.knpp_h2(10, 0.05, 9) == pytest.approx(18 * ((2 * beta) ** (-2 / 9) - 1) / 2)
    assert rules.knpp_h2(10, 0.05, 9) == pytest.approx(15.3405, abs=1e-4)
    # with more degrees of freedom, h^2 falls towards 2 ln(1 / (2 beta))
    assert rules.knpp_h2(10, 0.05, 10**6) == pytest.approx(2 * math.log(1 / (2 * beta)), rel=1e-4)


def test_knpp_h2_with_common_random_numbers_takes_bonferroni():
    """Systems sharing seeds are not independent, so KN++ takes beta = alpha/(k-1) =
    0.0055556 for k = 10, alpha = 0.05: with f = 9, KN's h^2 = 15.4635, above the 15.3405
    of independent systems."""
    assert rules.knpp_h2(10, 0.05, 9, common=True) == pytest.approx(rules.kn_h2(10, 0.05, 10))
    assert rules.knpp_h2(10, 0.05, 9, common=True) == pytest.approx(15.4635, abs=1e-4)
    assert rules.knpp_h2(10, 0.05, 9, common=True) > rules.knpp_h2(10, 0.05, 9)


def test_systems_share_seeds_when_among_or_any_cell_factor_is_paired():
    chosen = Selection(metric="m", goal="min", indifference=1.0, among="strategy")
    assert systems_share_seeds(chosen, ["strategy", "load"], ["strategy"])
    assert not systems_share_seeds(chosen, ["strategy", "load"], ["load"])
    every_cell = Selection(metric="m", goal="min", indifference=1.0)
    assert systems_share_seeds(every_cell, ["strategy", "load"], ["load"])
    assert not systems_share_seeds(every_cell, ["strategy", "load"], [])
    assert SelectionRule.of(chosen, common=True).common


def test_kn_screening_by_hand():
    """W_il(r) = max(0, (delta/(2r))(h^2 S^2_il/delta^2 - r)): with h^2 = 15.4635, delta 0.5,
    r = 10 and S^2 = 1: 0.025 (61.854 - 10) = 1.29635; past r = h^2 S^2/delta^2 the region is
    closed (0)."""
    h2 = rules.kn_h2(10, 0.05, 10)
    assert rules.kn_allowance(h2, np.array(1.0), 0.5, 10) == pytest.approx(1.296350, abs=1e-6)
    assert rules.kn_allowance(h2, np.array(1.0), 0.5, 62) == 0
    # three systems: the third is 1.4 below the first (> W = 1.296), the second only 1.0
    means = np.array([2.0, 1.0, 0.6])
    allowance = rules.kn_allowance(h2, np.ones((3, 3)), 0.5, 10)
    assert rules.kn_eliminated(means, allowance).tolist() == [False, False, True]
    # the region closed (W = 0): the sign decides, a tie goes to the earlier system
    assert rules.kn_eliminated(np.array([1.0, 1.0, 0.9]), np.zeros((3, 3))).tolist() == [
        False,
        True,
        True,
    ]


def test_paired_variances_are_those_of_the_differences():
    values = np.array([[1.0, 2.0, 4.0], [1.0, 3.0, 2.0]])
    variance = rules.paired_variances(values)
    assert variance[0, 1] == variance[1, 0] == pytest.approx(np.var([0, -1, 2], ddof=1))
    assert variance[0, 0] == 0


def test_ocba_allocation_of_chen_and_lee():
    """OCBA (Chen & Lee 2011): five designs of means 1..5 to minimize with variances 1, 1, 9,
    9, 4: N_i/N_2 = ((mean_1 - mean_2)/(mean_1 - mean_i))^2 var_i/var_2 = 2.25, 1, 0.25 for
    designs 3..5, N_1 = sqrt(var_1 sum N_i^2/var_i) = 1.2997; 50 replications split so:
    11, 9, 19, 9, 2 (the example sim-tools and spotpython reproduce)."""
    means, variances = -np.arange(1.0, 6.0), np.array([1.0, 1, 9, 9, 4])  # larger is better
    ratios = rules.ocba_ratios(means, variances)
    best = math.sqrt(1 + 2.25**2 / 9 + 1 / 9 + 0.25**2 / 4)
    assert ratios == pytest.approx([best, 1, 2.25, 1, 0.25])
    assert best == pytest.approx(1.29971, abs=1e-5)
    assert rules.ocba_allocation(means, variances, np.zeros(5, int), 50).tolist() == [
        11,
        9,
        19,
        9,
        2,
    ]


def test_ocba_never_takes_back_replicates():
    """A system already past its share keeps what it has; the others share the rest, and the
    increment is spent whole."""
    means, variances = -np.arange(1.0, 6.0), np.array([1.0, 1, 9, 9, 4])
    given = np.array([5, 5, 5, 5, 20])  # design 5 already has more than its share
    more = rules.ocba_allocation(means, variances, given, 30)
    assert more.sum() == 30 and more.min() >= 0 and more[4] == 0
    # by hand: 70 in all, design 5's share 70 x 0.25 / 5.7997 = 3 < 20: it keeps 20; the
    # others split 50 as 1.2997 : 1 : 2.25 : 1, i.e. 11.71, 9.01, 20.27, 9.01 -> 12, 9, 20, 9
    assert more.tolist() == [7, 4, 15, 4, 0]


def test_gsp_eta_of_ni_et_al():
    """GSP's eta solves E[2 Phi-bar(eta sqrt(min(Y1, Y2)))] = 1 - (1 - alpha1)^(1/(k-1)),
    Y chi-square(n1 - 1); the values of the authors' EtaFunc (32-node Gauss-Laguerre,
    bisection to 1e-4): 1.31636 (k 5, alpha1 0.025, n1 10), 0.84532 (10, 0.025, 20), 0.58771
    (100, 0.025, 50)."""
    for (k, alpha1, n1), expected in [
        ((5, 0.025, 10), 1.31636),
        ((10, 0.025, 20), 0.84532),
        ((100, 0.025, 50), 0.58771),
    ]:
        assert rules.gsp_eta(k, alpha1, n1) == pytest.approx(expected, abs=2e-4)
    # the defining equation, checked by simulation
    eta, rng = rules.gsp_eta(5, 0.025, 10), np.random.default_rng(3)
    smallest = rng.chisquare(9, (2, 400_000)).min(axis=0)
    chance = np.mean(2 * special.ndtr(-eta * np.sqrt(smallest)))
    assert chance == pytest.approx(1 - 0.975 ** (1 / 4), rel=0.02)


def test_gsp_screening_by_hand():
    """i is out when (mean_i - mean_j)/(S_i^2/n_i + S_j^2/n_j) < -eta sqrt((n1 - 1) /
    (S_i^2/M_i + S_j^2/M_j)): with S^2 = 1, n = 10, M = 60, n1 = 10, eta = 1.3163: the bound
    is 1.3163 sqrt(9 x 30) = 21.63, a gap of -1 gives -5 (kept), a gap of -4.4 gives -22."""
    variances, counts, most = np.ones(3), np.full(3, 10), np.full(3, 60)
    eta = 1.3163
    assert eta * math.sqrt(9 * 30) == pytest.approx(21.63, abs=0.01)
    means = np.array([5.0, 4.0, 0.6])
    out = rules.gsp_eliminated(means, variances, counts, most, eta, 10)
    assert out.tolist() == [False, False, True]
    assert rules.gsp_batches(np.array([1.0, 2.0, 3.0]), 5).tolist() == [3, 5, 8]


def test_rinott_h_of_the_rinott_program():
    """Rinott's h: the values of the RINOTT program of Bechhofer, Santner & Goldsman (1995)
    (32-node Gauss-Laguerre), to 4 decimals, where its quadrature is accurate."""
    table = {
        (2, 0.95, 9): 2.6141,
        (5, 0.95, 9): 3.6926,
        (10, 0.90, 9): 3.7459,
        (4, 0.95, 19): 3.2032,
        (10, 0.95, 19): 3.8753,
        (3, 0.99, 49): 3.7543,
        (20, 0.95, 49): 4.0670,
    }
    for (k, pcs, nu), h in table.items():
        assert rules.rinott_h(k, pcs, nu) == pytest.approx(h, abs=1.5e-4), (k, pcs, nu)


def test_rinott_h_with_two_first_replicates_solves_its_equation():
    """At n0 = 2 the equation's root (41.64 for k = 5, pcs 0.95), by simulation of
    P(Z_i <= h / sqrt(nu (1/X_i + 1/Y)) for all i) with X, Y chi-square(1)."""
    h = rules.rinott_h(5, 0.95, 1)
    rng = np.random.default_rng(1)
    y, x = rng.chisquare(1, 200_000), rng.chisquare(1, (200_000, 4))
    z = rng.standard_normal((200_000, 4))
    chance = np.mean((z <= h / np.sqrt(1 / x + 1 / y[:, None])).all(axis=1))
    assert h == pytest.approx(41.64, abs=0.01)
    assert chance == pytest.approx(0.95, abs=0.003)


def test_rinott_count():
    assert rules.rinott_count(3.0, np.array([0.1, 1.0, 2.0]), 0.5, 10).tolist() == [10, 36, 144]


def rule(procedure="kn", **options):
    settings = dict(goal="max", indifference=0.5, first=4, batch=2, most=40)
    return SelectionRule(procedure=procedure, **{**settings, **options})


def test_a_group_waits_on_a_failed_task_and_runs_on_missing_ones():
    rng = np.random.default_rng(2)
    values = rng.normal(0, 1, (3, 40))
    finished = np.zeros((3, 40), dtype=bool)
    finished[:, :4] = True
    failed = np.zeros_like(finished)
    failed[1, 2] = True
    group = select_group(values, finished, failed, rule())
    assert group.stages == 0 and group.selected == -1
    assert group.state.tolist() == [STATES["waiting"]] * 3
    finished[2, 3] = False  # its first stage incomplete: still running, whatever failed
    group = select_group(values, finished, np.zeros_like(failed), rule())
    assert group.state.tolist() == [STATES["running"]] * 3
    assert group.replicates.tolist() == [4, 4, 4]


def test_a_decision_never_looks_beyond_the_stage_it_closes():
    """Whatever lies beyond each system's replicates (other values, none at all), the
    decisions are the same."""
    rng = np.random.default_rng(4)
    values = rng.normal([[0.0], [0.2], [0.6]], 1.0, (3, 40))
    finished = np.ones((3, 40), dtype=bool)
    for procedure in ("kn", "kn++", "gsp", "ocba"):
        options = {"budget": 60} if procedure == "ocba" else {}
        whole = select_group(values, finished, ~finished, rule(procedure, **options))
        assert whole.ending and whole.selected >= 0
        changed = values.copy()
        beyond = np.arange(40) >= whole.replicates[:, None]
        changed[beyond] = rng.normal(100, 1, beyond.sum())
        again = select_group(changed, ~beyond, np.zeros_like(beyond), rule(procedure, **options))
        assert again.selected == whole.selected, procedure
        assert again.replicates.tolist() == whole.replicates.tolist(), procedure
        assert again.stage.tolist() == whole.stage.tolist(), procedure


def test_max_replicates_ends_without_the_guarantee():
    """Noise far above the zone keeps KN's region open past max_replicates: the best mean is
    taken and the ending says the guarantee does not hold."""
    values = np.random.default_rng(5).normal(0, 10, (2, 12))
    group = select_group(values, np.ones((2, 12), bool), np.zeros((2, 12), bool), rule(most=12))
    assert group.ending == "max_replicates"
    assert group.selected == int(np.argmax(values.mean(axis=1)))
    assert group.replicates.tolist() == [12, 12] and group.stages == 5  # r = 4, 6, ..., 12
