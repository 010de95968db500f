"""The ready specs of the grid model reproduce their source designs."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaign.design.tasks import Design, cell_params
from campaign.models.grid import check
from campaign.spec.load import load_spec

SPECS = Path(__file__).resolve().parents[2] / "specs"


@pytest.mark.parametrize("name", ["grid-multisite.yaml", "grid-multisite-quick.yaml"])
def test_multisite_specs_run_both_placements(name, workloads):
    """The source's placement on arrival and the queue-only EASY variant, paired."""
    spec = load_spec(SPECS / name)
    assert spec.model == "grid" and spec.params["sharing"] == "multisite"
    assert set(spec.factor("place_on_arrival").values) == {True, False}
    assert "place_on_arrival" in spec.paired
    for cell in Design(spec).cells:
        check(cell_params(spec, cell))


@pytest.mark.parametrize("name", ["economic.yaml", "economic-quick.yaml"])
def test_economic_specs_cross_every_owner_and_user_function_with_job_sharing(name, workloads):
    """MF1-MF6 x UF1-UF5 on m128 and m512, each against job sharing with EASY."""
    spec = load_spec(SPECS / name)
    assert spec.model == "grid"
    assert spec.factor("sharing").values == ("economic", "job_sharing")
    assert spec.factor("mf").values == (1, 2, 3, 4, 5, 6)
    assert spec.factor("uf").values == (1, 2, 3, 4, 5)
    assert spec.factor("config").values == ("m128", "m512")
    assert {"sharing", "mf", "uf", "config"} <= set(spec.paired)
    assert "seed 002" in spec.description and "What differs" in spec.description
    for cell in Design(spec).cells:
        check(cell_params(spec, cell))
