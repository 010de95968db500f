"""Saltelli and Morris designs (SALib's samples from the campaign seed, growing by keeping the
stored points), and ranges on a log scale or of integers."""

from __future__ import annotations

import numpy as np
import pytest
from SALib.sample import morris as morris_sample
from SALib.sample import sobol as sobol_sample

import campaign
from campaign.cli.main import main
from campaign.design.points import _generator, scale
from campaign.design.tasks import Design
from campaign.plan.plan import make_plan
from campaign.spec.load import load_spec

SPEC = """
name: sampled
model: mm1
params: {{{params}}}
factors:
  arrival_rate: {{low: 0.2, high: 0.8}}
  service_rate: {{low: 1.0, high: 4.0, scale: log}}
{extra}design: {design}
replicates: 2
seed: 17
output: out
"""


def spec(write_spec, design: str, params: str = "customers: 50", extra: str = ""):
    return write_spec(SPEC.format(design=design, params=params, extra=extra))


def test_a_saltelli_design_is_salibs_sample_scaled_on_each_range(write_spec):
    loaded = load_spec(spec(write_spec, "{saltelli: {points: 4, second_order: true}}"))
    problem = {"num_vars": 2, "names": ["a", "s"], "bounds": [[0, 1]] * 2}
    unit = sobol_sample.sample(problem, 4, calc_second_order=True, seed=_generator(17, 0))
    assert loaded.design.points == 4 * (2 * 2 + 2) == loaded.cells
    np.testing.assert_allclose(loaded.factor("arrival_rate").values, 0.2 + 0.6 * unit[:, 0])
    # log scale: uniform in log(value)
    np.testing.assert_allclose(loaded.factor("service_rate").values, 4.0 ** unit[:, 1])


def test_morris_trajectories_step_one_factor_at_a_time_on_the_grid(write_spec):
    loaded = load_spec(spec(write_spec, "{morris: {trajectories: 6, levels: 4}}"))
    assert loaded.design.points == 6 * 3
    problem = {"num_vars": 2, "names": ["a", "s"], "bounds": [[0, 1]] * 2}
    unit = morris_sample.sample(problem, 6, 4, seed=_generator(17, 0))
    np.testing.assert_allclose(loaded.factor("arrival_rate").values, 0.2 + 0.6 * unit[:, 0])
    steps = np.diff(unit.reshape(6, 3, 2), axis=1)
    assert ((steps != 0).sum(axis=2) == 1).all()  # one factor moves at each step


def test_integer_log_ranges_give_integers_spread_over_decades():
    unit = np.linspace(0, 1, 100_001)
    values = scale(unit, 1, 64, log=True, integer=True)
    assert values.dtype == np.int64 and values.min() == 1 and values.max() == 64
    # each integer k takes [k, k + 1) of the log range: k = 1 a sixth (log 2 / log 65)
    assert np.mean(values == 1) == pytest.approx(np.log(2) / np.log(65), abs=1e-4)
    assert np.mean(values == 64) == pytest.approx(np.log(65 / 64) / np.log(65), abs=1e-4)


def test_repeated_points_keep_seeds_and_keys_of_their_own_and_pairing_is_kept(write_spec):
    extra = "  customers: {low: 10, high: 12, integer: true}\n  fail_above: [40.0, 50.0]\n"
    path = spec(
        write_spec,
        "{morris: {trajectories: 8, levels: 2}}",
        params="",
        extra=extra + "paired: [fail_above]\n",
    )
    loaded = load_spec(path)
    design = Design(loaded)
    labels = [tuple(design.cell_label(cell).values()) for cell in design.cells]
    assert len(set(labels)) < len(labels)  # a grid of 2 levels repeats points
    assert len(set(design.keys())) == design.size
    seeds = design.seeds.reshape(2, loaded.design.points, 2)
    assert (seeds[0] == seeds[1]).all()  # the paired levels still share seeds at every point
    assert len(np.unique(seeds[0])) == seeds[0].size


def test_more_saltelli_samples_keep_the_stored_points(write_spec, scheduler_address):
    path = spec(write_spec, "{saltelli: {points: 4, second_order: false}}")
    first = campaign.run(path, scheduler=scheduler_address, progress=False)
    assert dict(first.sizes) == {"point": 16, "replicate": 2}
    path.write_text(path.read_text().replace("points: 4,", "points: 8,"))
    plan = make_plan(path)
    assert (plan.done, len(plan.missing)) == (32, 32)
    grown = campaign.run(path, scheduler=scheduler_address, progress=False)
    for name in ("arrival_rate", "service_rate", "mean_wait", "seed"):
        np.testing.assert_array_equal(grown[name].values[:16], first[name].values)
    assert grown["service_rate"].attrs["sampling_scale"] == "log"


@pytest.mark.parametrize(
    ("design", "factor", "message"),
    [
        ("{saltelli: {points: 8, second_order: yes please}}", "",
         "design.saltelli.second_order: 'yes please' is not allowed; use true or false"),
        ("{saltelli: {second_order: false}}", "",
         "design.saltelli: missing key 'points' (how many base samples, e.g. points: 32; integer "
         ">= 2)"),
        ("{saltelli: {points: 1}}", "",
         "design.saltelli.points: 1 is not allowed; use an integer of 2 or more"),
        ("{morris: {trajectories: 4, levels: 3}}", "",
         "design.morris.levels: 3 is not allowed; use an even integer of 2 or more"),
        ("{morris: {points: 4}}", "",
         "design.morris: unknown key 'points'; allowed: trajectories, levels"),
        ("{sobol: {points: 8}}", "  customers: {low: 0, high: 64, scale: log}\n",
         "factors.customers: a log scale needs low > 0, got low 0"),
        ("{sobol: {points: 8}}", "  customers: {low: 1.5, high: 64, integer: true}\n",
         "factors.customers: an integer range needs integer bounds, got low 1.5, high 64"),
        ("{sobol: {points: 8}}", "  customers: {low: 1, high: 64, scale: ln}\n",
         "factors.customers: scale 'ln' is not allowed; use linear or log"),
        ("{morris: {trajectories: 4, levels: 4}}",
         "  customers: {low: 0, high: 4, integer: true}\n",
         "factors.customers: on Morris's grid of 4 levels the integer range 0 to 4 takes the "
         "values 0, 1, 3, 4, not evenly spaced, so its elementary effects would be wrong; make "
         "high - low a multiple of levels - 1 (3)"),
        ("{morris: {trajectories: 4, levels: 4}}",
         "  customers: {low: 1, high: 10, scale: log, integer: true}\n",
         "factors.customers: on Morris's grid of 4 levels the integer range 1 to 10 (log scale) "
         "takes the values 1, 2, 4, 10, not evenly spaced, so its elementary effects would be "
         "wrong; give it another range or levels, or leave integer out"),
    ],
)  # fmt: skip
def test_sampled_design_mistakes_are_one_line(write_spec, capsys, design, factor, message):
    path = spec(write_spec, design, params="" if factor else "customers: 50", extra=factor)
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == f"campaign: error: {path}: {message}\n"


def test_validate_describes_the_sample_and_the_scales(write_spec, capsys):
    extra = "  customers: {low: 1, high: 64, scale: log, integer: true}\n"
    path = spec(write_spec, "{saltelli: {points: 6, second_order: true}}", "", extra)
    assert main(["validate", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "  factor service_rate: range 1 to 4 (log scale)\n" in printed
    assert "  factor customers: range 1 to 64 (integer, log scale)\n" in printed
    assert (
        "  saltelli: Saltelli sample of a scrambled Sobol sequence (6 base samples; Sobol "
        "indices of first, total and second order), 48 points over arrival_rate, service_rate, "
        "customers, drawn from seed 17 (not a power of 2: a Sobol sequence is balanced at 2^m "
        "base samples, not 6)\n" in printed
    )
