"""The ready specs of the grid model reproduce their source designs."""

from __future__ import annotations

from pathlib import Path

import pytest

from campaign.design import Design, cell_params
from campaign.models.grid import check
from campaign.spec import load_spec

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
