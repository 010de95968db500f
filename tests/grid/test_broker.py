"""Example C of parallel-jobs.md section 4: every strategy's scores and pick, by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from campaign.models.grid.broker import STRATEGIES, Broker
from campaign.models.grid.strategies import REGISTRY
from campaign.models.grid.strategies.lbal import population_std
from campaign.models.rigid.site import Site

# Jobs a..e already at the sites, j the new one: (size, est); all arrive at t = 0.
SIZE = [2, 4, 2, 12, 8, 4]
EST = [40.0, 10.0, 100.0, 30.0, 20.0, 50.0]
J = 5


def example_c(strategy: str, **options) -> tuple[Broker, list[Site]]:
    sites = [Site(m, "easy", SIZE, EST, index=k) for k, m in enumerate((4, 8, 16))]
    for job, site in ((0, 0), (1, 1), (2, 1), (3, 2), (4, 2)):
        sites[site].submit(job, 0.0)
    for site in sites:
        site.schedule(0.0)
    assert sites[2].queue == [4] and set(sites[1].start) == {1, 2}
    broker = Broker(strategy, sites, SIZE, [0.0] * 6, EST, np.random.default_rng(1), **options)
    return broker, sites


def scores(strategy: str, **options) -> list[float]:
    broker, _ = example_c(strategy, **options)
    values = broker.scores(J, 0.0)
    return [values[i] for i in range(3)]


def pick(strategy: str, **options) -> int:
    broker, sites = example_c(strategy, **options)
    return broker.place(J, 0.0, sites) + 1


@pytest.mark.parametrize(
    ("strategy", "options", "expected", "site"),
    [
        ("mlp", {}, [0.5, 0.375, 0.1875], 3),
        ("mpl", {}, [1.5, 1.25, 1.5], 2),
        ("mpl", {"include_new_job": False}, [0.5, 0.75, 1.25], 1),
        ("mlb", {}, [70.0, 55.0, 45.0], 3),
        ("mlb", {"include_new_job": False}, [20.0, 30.0, 32.5], 1),
        ("lbal_s", {}, [0.311805, 0.353553, 0.424918], 1),
        ("mst", {}, [40.0, 10.0, 30.0], 2),
        ("mct", {}, [90.0, 100.0, 80.0], 3),
        ("mwt", {}, [20.0, 10 / 3, 20.0], 2),
        ("mswct_w", {}, [21200.0, 32400.0, 34800.0], 1),
        # Not in the table; computed by hand from the same sites.
        ("mlp", {"include_new_job": False}, [0.25, 0.25, 0.125], 3),
        (
            "lbal_t",
            {},
            [math.sqrt(((22.5 - 13.125) ** 2 + 0.625**2 + 10**2) / 3), None, 9.375**0.5],
            3,
        ),
        ("mwwt_s", {}, [80.0, 40 / 3, 120.0], 2),
        ("mwwt_t", {}, [1000.0, 500 / 3, 700.0], 2),
        ("mwwt_w", {}, [4000.0, 2000 / 3, 3600.0], 2),
    ],
)
def test_example_c(strategy, options, expected, site):
    got = scores(strategy, **options)
    for value, want in zip(got, expected, strict=True):
        if want is not None:
            assert value == pytest.approx(want, rel=1e-9, abs=1e-6)
    assert pick(strategy, **options) == site


def test_lbal_w_counts_every_site_and_the_new_job_once():
    # X = size * est: site loads 80, 40 + 200, 360 + 160; j adds 200.
    base = np.array([80.0, 240.0, 520.0])
    m = np.array([4.0, 8.0, 16.0])
    expected = [float(((base + 200.0 * (np.arange(3) == q)) / m).std()) for q in range(3)]
    assert scores("lbal_w") == pytest.approx(expected)
    assert pick("lbal_w") == 1 + int(np.argmin(expected))


def test_tentative_schedule_of_site_3():
    broker, _ = example_c("mst")
    assert broker.tentative(J, 2, 0.0) == [(3, 0.0, 30.0), (4, 30.0, 50.0), (5, 30.0, 80.0)]


def test_ties_go_to_the_smallest_index():
    broker, sites = example_c("mst")
    for site in sites:  # empty every site: j starts at 0 everywhere
        site.queue.clear()
        site.start.clear()
    assert broker.place(J, 0.0, sites) == 0


def test_admissibility_keeps_the_smallest_sites_first():
    # alpha 0.4: 4 + 8 >= 0.4 * 28 keeps sites 1..2; MLp then picks 2 instead of 3.
    broker, sites = example_c("mlp", admissibility=0.4)
    assert broker.candidates(J) == [0, 1]
    assert broker.place(J, 0.0, sites) == 1
    assert example_c("mlp", admissibility=0.1)[0].candidates(J) == [0]
    assert example_c("mlp", admissibility=0.5)[0].candidates(J) == [0, 1, 2]


def test_random_picks_feasible_sites_only_from_the_policy_stream():
    size = [*SIZE[:5], 10]
    sites = [Site(m, "easy", size, EST, index=k) for k, m in enumerate((4, 8, 16))]
    broker = Broker("random", sites, size, [0.0] * 6, EST, np.random.default_rng(7))
    assert {broker.place(J, 0.0, sites) for _ in range(20)} == {2}
    broker = Broker("random", sites, SIZE, [0.0] * 6, EST, np.random.default_rng(7))
    picks = [broker.place(J, 0.0, sites) for _ in range(60)]
    assert set(picks) == {0, 1, 2}
    again = Broker("random", sites, SIZE, [0.0] * 6, EST, np.random.default_rng(7))
    assert [again.place(J, 0.0, sites) for _ in range(60)] == picks


def test_the_lbal_spread_is_numpys_population_std_bit_for_bit():
    # The fast lbal scores replace numpy.std over a few sites by a loop in numpy's order of
    # operations; any other order changes the last bit of about one row in six.
    rng = np.random.default_rng(11)
    rows = []
    for _ in range(3000):
        length = int(rng.integers(1, 8))
        row = rng.random(length) * 10.0 ** int(rng.integers(-4, 9))
        if rng.random() < 0.3:
            row = np.floor(row)
        rows.append(row.tolist())
    assert [population_std(row) for row in rows] == [float(np.std(row)) for row in rows]


def test_every_strategy_is_a_registered_class_at_its_level():
    """Section 4's table: the name a spec gives each strategy, its class and its level."""
    assert STRATEGIES == tuple(REGISTRY)
    assert {name: kind.level for name, kind in REGISTRY.items()} == {
        "random": 1,
        "mlp": 1,
        "mpl": 1,
        "lbal_s": 1,
        "lbal_t": 2,
        "lbal_w": 2,
        "mlb": 2,
        "mct": 3,
        "mwt": 3,
        "mwwt_s": 3,
        "mwwt_t": 3,
        "mwwt_w": 3,
        "mst": 3,
        "mswct_w": 3,
    }
    for name, kind in REGISTRY.items():
        broker, _ = example_c(name)
        assert type(broker.scorer) is kind and kind.name == name
    with pytest.raises(ValueError) as error:
        example_c("fastest")
    assert str(error.value) == f"unknown strategy 'fastest'; allowed: {', '.join(STRATEGIES)}"
