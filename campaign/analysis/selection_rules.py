"""The allocation and elimination rules of ranking-and-selection procedures, as pure functions.

Every function takes sample statistics (arrays) and returns a number or a decision; none
knows a campaign, a stage or a group: `campaign.analysis.selection` applies them stage by
stage. Means are in the *larger is better* convention (a ``goal: min`` metric is negated
before it gets here). Each rule names its source and, where a constant is solved for, the
equation solved; the tests check each against a worked example.

Sources:

- KN: S.-H. Kim and B. L. Nelson (2001), "A fully sequential procedure for
  indifference-zone selection in simulation", ACM TOMACS 11(3):251-273.
- KN++: S.-H. Kim and B. L. Nelson (2006), "On the asymptotic validity of fully sequential
  selection procedures for steady-state simulation", Operations Research 54(3):475-488.
- OCBA: C.-H. Chen and L. H. Lee (2011), "Stochastic Simulation Optimization: An Optimal
  Computing Budget Allocation", World Scientific, ch. 3.
- GSP: E. C. Ni, D. F. Ciocan, S. G. Henderson and S. R. Hunter (2017), "Efficient ranking
  and selection in parallel computing environments", Operations Research 65(3):821-836.
- Rinott: Y. Rinott (1978), "On two-stage selection procedures and related
  probability-inequalities", Communications in Statistics A7:799-811.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

QUADRATURE_NODES = 256  # Gauss-Legendre nodes per chi-square integral (Rinott's h)


def kn_eta(k: int, alpha: float, n0: int) -> float:
    """KN's eta for c = 1 (Kim & Nelson 2001, section 3): the root of

        g(eta) = (1/2) (1 + 2 eta)^(-(n0 - 1)/2) = alpha / (k - 1),

    that is eta = (1/2) [(2 alpha / (k - 1))^(-2/(n0 - 1)) - 1]. With g(eta) the chance that
    the sum of differences of a system at least delta worse than the best crosses the wrong
    side of the triangular continuation region (Fabian 1974), the Bonferroni sum over the
    k - 1 others is at most alpha.

    Worked example: k = 10, alpha = 0.05, n0 = 10: 2 alpha/(k-1) = 1/90, so
    eta = (90^(2/9) - 1)/2 = 0.85908 and h^2 = 2 eta (n0 - 1) = 15.4635.
    """
    return 0.5 * ((2 * alpha / (k - 1)) ** (-2.0 / (n0 - 1)) - 1)


def kn_h2(k: int, alpha: float, n0: int) -> float:
    """KN's h^2 = 2 c eta (n0 - 1), c = 1."""
    return 2 * kn_eta(k, alpha, n0) * (n0 - 1)


def knpp_h2(k: int, alpha: float, degrees: int, common: bool = False) -> float:
    """KN++'s h^2 = 2 eta f after each update (Kim & Nelson 2006, procedure KN++, c = 1), with
    beta = 1 - (1 - alpha)^(1/(k - 1)) in place of alpha/(k - 1) when the systems are
    simulated independently, and beta = alpha/(k - 1) when they share common random numbers
    (``common``: the product bound needs independent systems; Bonferroni's holds either way),
    and f the degrees of freedom of the updated variances (r - 1 for r replicates):
    eta = (1/2) [(2 beta)^(-2/f) - 1].

    Worked example: k = 10, alpha = 0.05, f = 9: beta = 0.0056830, (2 beta)^(-2/9) = 2.7045,
    eta = 0.85225, h^2 = 15.3405 (a little below KN's 15.4635 at the same n0); with common
    random numbers beta = 0.05/9 = 0.0055556 and h^2 = 15.4635, KN's.
    """
    beta = alpha / (k - 1) if common else 1 - (1 - alpha) ** (1.0 / (k - 1))
    eta = 0.5 * ((2 * beta) ** (-2.0 / degrees) - 1)
    return 2 * eta * degrees


def kn_allowance(h2: float, variance: np.ndarray, delta: float, r: int) -> np.ndarray:
    """W_il(r) = max(0, (delta / (2 c r)) (h^2 S_il^2 / delta^2 - r)), c = 1: how far a
    system's mean over r replicates may fall below another's before it is eliminated
    (``variance``: S_il^2, the variance of the paired differences)."""
    return np.maximum(0.0, (delta / (2.0 * r)) * (h2 * np.asarray(variance) / delta**2 - r))


def kn_eliminated(means: np.ndarray, allowance: np.ndarray) -> np.ndarray:
    """KN's screening: system i is out when mean_i < mean_l - W_il for some other l. Where the
    region has closed (W_il = 0) and two means are equal, the later system goes (a tie the
    triangle's end must break; it has probability 0 with continuous outputs)."""
    means = np.asarray(means, dtype=float)
    below = means[:, None] < means[None, :] - allowance
    k = means.size
    later = np.arange(k)[:, None] > np.arange(k)[None, :]
    tied = (allowance == 0) & (means[:, None] == means[None, :]) & later
    out = below | tied
    np.fill_diagonal(out, False)
    return out.any(axis=1)


def paired_variances(values: np.ndarray) -> np.ndarray:
    """S_il^2: the sample variance of X_ij - X_lj over the replicates j (systems x replicates),
    as KN uses it (common random numbers make it small)."""
    differences = values[:, None, :] - values[None, :, :]
    return np.var(differences, axis=2, ddof=1)


def ocba_ratios(means: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """OCBA's asymptotically optimal allocation ratios (Chen & Lee 2011, theorem 3.1):

        N_i / N_j = (sigma_i / d_bi)^2 / (sigma_j / d_bj)^2   for i, j != b,
        N_b = sigma_b sqrt(sum_{i != b} N_i^2 / sigma_i^2),

    b the best sample mean, d_bi = mean_b - mean_i; scaled so that the second best is 1.
    A difference of 0 is taken as a tiny one (that system then gets most of the budget) and
    a variance of 0 as a tiny one, so the ratios stay finite.

    Worked example (means 1..5 to minimize, variances 1, 1, 9, 9, 4): b = 1, s = 2,
    N_3 = (1/2)^2 9 = 2.25, N_4 = (1/3)^2 9 = 1, N_5 = (1/4)^2 4 = 0.25,
    N_1 = sqrt(1 + 2.25^2/9 + 1/9 + 0.25^2/4) = 1.2997.
    """
    means = np.asarray(means, dtype=float)
    variances = np.asarray(variances, dtype=float)
    scale = max(float(np.max(variances, initial=0.0)), 1.0)
    variances = np.maximum(variances, 1e-12 * scale)
    order = np.argsort(-means, kind="stable")
    best, second = order[0], order[1]
    span = max(float(np.max(np.abs(means))), 1.0)
    gaps = np.maximum(means[best] - means, 1e-12 * span)
    ratios = (variances / gaps**2) / (variances[second] / gaps[second] ** 2)
    others = np.arange(means.size) != best
    ratios[best] = math.sqrt(
        variances[best] * float(np.sum(ratios[others] ** 2 / variances[others]))
    )
    return ratios


def ocba_allocation(
    means: np.ndarray, variances: np.ndarray, given: np.ndarray, add: int
) -> np.ndarray:
    """How many of ``add`` more replicates each system gets (Chen & Lee 2011, the OCBA
    procedure's ALLOCATE step): the total after the step, split by `ocba_ratios` and rounded
    to the nearest whole replicate; a system already past its share keeps what it has and the
    others share the rest again; the rounding's remainder goes to the best. Never negative,
    summing to ``add``."""
    given = np.asarray(given, dtype=np.int64)
    ratios = ocba_ratios(means, variances)
    total = int(given.sum()) + add
    kept = np.zeros(given.size, dtype=bool)
    while True:
        share = total - int(given[kept].sum())
        free = ~kept
        target = given.copy()
        target[free] = np.floor(share * ratios[free] / ratios[free].sum() + 0.5).astype(np.int64)
        short = free & (target < given)
        if not short.any():
            break
        kept |= short
    best = int(np.argmax(means))
    target[best] += total - int(target.sum())
    more = np.maximum(target - given, 0)
    for system in [best, *np.argsort(-more, kind="stable")]:  # rounding past the total
        excess = int(more.sum()) - add
        if excess <= 0:
            break
        more[system] -= min(excess, int(more[system]))
    return more


def approximate_pcs(means: np.ndarray, variances: np.ndarray, counts: np.ndarray) -> float:
    """OCBA's approximate probability of correct selection, its Bonferroni lower bound (Chen &
    Lee 2011, eq. 3.3): 1 - sum_{i != b} Phi(-(mean_b - mean_i) / sqrt(S_b^2/N_b + S_i^2/N_i)).
    An estimate from the sample, not a guarantee."""
    means = np.asarray(means, dtype=float)
    best = int(np.argmax(means))
    spread = np.sqrt(variances[best] / counts[best] + np.asarray(variances) / counts)
    others = np.arange(means.size) != best
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(spread > 0, (means[best] - means) / spread, np.inf)
    return float(1 - np.sum(special.ndtr(-z[others])))


def gsp_eta(k: int, alpha1: float, n1: int) -> float:
    """GSP's screening constant (Ni et al. 2017, section 4): the root of

        E[2 Phi-bar(eta sqrt(min(Y_1, Y_2)))] = 1 - (1 - alpha1)^(1/(k - 1)),

    Y_1, Y_2 independent chi-square with n1 - 1 degrees of freedom: 2 Phi-bar(a / sqrt(t))
    is the chance that a Brownian motion falls below -a before time t, and a pair's boundary
    uses the first-stage variances, whose ratio to the true ones is at least
    min(Y_1, Y_2) / (n1 - 1). The expectation is an integral over the minimum's density
    2 f(t) (1 - F(t)).
    """
    from scipy import integrate, optimize  # here: a command that selects nothing skips them

    target = 1 - (1 - alpha1) ** (1.0 / (k - 1))
    chi2 = n1 - 1

    def excess(eta: float) -> float:
        def integrand(t: float) -> float:
            density = _chi2_pdf(t, chi2)
            return 2 * special.ndtr(-eta * math.sqrt(t)) * 2 * density * special.chdtrc(chi2, t)

        value, _ = integrate.quad(integrand, 0, np.inf, limit=200)
        return value - target

    return float(optimize.brentq(excess, 1e-9, 50.0, xtol=1e-10))


def _chi2_pdf(t: float, degrees: int) -> float:
    if t <= 0:
        return 0.0
    half = degrees / 2.0
    return math.exp((half - 1) * math.log(t) - t / 2 - half * math.log(2) - math.lgamma(half))


def gsp_eliminated(
    means: np.ndarray,
    variances: np.ndarray,
    counts: np.ndarray,
    most: np.ndarray,
    eta: float,
    n1: int,
) -> np.ndarray:
    """GSP's screening (Ni et al. 2017, stage 2): system i is out when for some j

        (mean_i - mean_j) / (S_i^2/n_i + S_j^2/n_j) < -eta sqrt((n1 - 1) / (S_i^2/M_i + S_j^2/M_j)),

    S^2 the first-stage variances, n the replicates so far and M = n1 + rounds x batch the
    most each may get in screening. With both variances 0 the lower mean goes."""
    means = np.asarray(means, dtype=float)
    variances = np.asarray(variances, dtype=float)
    now = variances[:, None] / counts[:, None] + variances[None, :] / counts[None, :]
    later = variances[:, None] / most[:, None] + variances[None, :] / most[None, :]
    gap = means[:, None] - means[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = np.where(now > 0, gap / now, np.sign(gap) * np.inf)
        bound = np.where(later > 0, eta * np.sqrt((n1 - 1) / later), 0.0)
    out = statistic < -bound
    np.fill_diagonal(out, False)
    return out.any(axis=1)


def gsp_batches(std: np.ndarray, batch: int) -> np.ndarray:
    """GSP's batch per system: ceil(batch S_i / mean(S)), at least 1 (Ni et al. 2017: a noisier
    system gets more replicates per round); ``batch`` each when every S is 0."""
    std = np.asarray(std, dtype=float)
    mean = float(std.mean())
    if mean <= 0:
        return np.full(std.size, batch, dtype=np.int64)
    return np.maximum(np.ceil(batch * std / mean - 1e-9), 1).astype(np.int64)


@lru_cache(maxsize=256)
def rinott_h(k: int, pcs: float, degrees: int) -> float:
    """Rinott's constant h (Rinott 1978): the root of

        integral_0^inf [ integral_0^inf Phi(h / sqrt(nu (1/x + 1/y))) f(x) dx ]^(k-1) f(y) dy = pcs,

    f the chi-square density with nu = ``degrees`` (n0 - 1) degrees of freedom: the chance
    that the best's two-stage mean beats k - 1 others at the indifference-zone boundary. Both
    integrals are taken by Gauss-Legendre quadrature over the chi-square's quantiles
    (`chi2_quadrature`). The RINOTT program of Bechhofer, Santner & Goldsman (1995) takes them
    by 32-node Gauss-Laguerre quadrature: the same h to 4 decimals from n0 = 6 on, while below
    that its quadrature misses the chi-square's mass near 0 (n0 = 2, k = 5, pcs 0.95: 14.25
    where the equation's root, checked by simulation, is 41.64).
    """
    from scipy import optimize  # here: a command that selects nothing skips it

    points, weights = chi2_quadrature(degrees)
    spread = np.sqrt(degrees * (1 / points[:, None] + 1 / points[None, :]))

    def chance(h: float) -> float:
        inner = weights @ special.ndtr(h / spread)  # over x, for each y
        return float(weights @ inner ** (k - 1))

    return float(optimize.brentq(lambda h: chance(h) - pcs, 1e-6, 1000.0, xtol=1e-10))


def chi2_quadrature(degrees: int) -> tuple[np.ndarray, np.ndarray]:
    """Points and weights with E[g(X)] ~ sum_i w_i g(x_i), X chi-square(``degrees``): Gauss-Legendre
    nodes on (0, 1) taken through the chi-square's quantile function, so that a bounded g is
    integrated well whatever the degrees of freedom."""
    nodes, weights = legendre_nodes()
    return special.chdtri(degrees, (1 - nodes) / 2), weights / 2


@lru_cache(maxsize=1)
def legendre_nodes() -> tuple[np.ndarray, np.ndarray]:
    return special.roots_legendre(QUADRATURE_NODES)


def rinott_count(h: float, std: np.ndarray, delta: float, n0: int) -> np.ndarray:
    """Rinott's two-stage sample sizes N_i = max(n0, ceil((h S_i / delta)^2)), S_i from the
    first n0 replicates: what a procedure without elimination runs for the same guarantee."""
    need = np.ceil((h * np.asarray(std, dtype=float) / delta) ** 2 - 1e-9)
    return np.maximum(need, n0).astype(np.int64)
