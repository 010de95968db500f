"""Every ready spec in specs/ is valid: its keys, its factor levels and every cell's params."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from campaign.design.tasks import Design
from campaign.plan.plan import check_model
from campaign.spec.load import load_spec

SPECS = sorted((Path(__file__).resolve().parents[1] / "specs").glob("*.yaml"))
# Specs whose program is built first, each checked (and run) by a test that builds it once:
BUILT = {"simgrid-masterworker.yaml": "tests/programs/test_simgrid_masterworker.py"}
READY = [path for path in SPECS if path.name not in BUILT]


@pytest.mark.parametrize("path", READY, ids=[p.stem for p in READY])
def test_ready_spec_validates(path, workloads):
    spec = load_spec(path)
    check_model(spec)
    design = Design(spec)
    assert design.size == spec.tasks > 0
    assert len(set(design.keys())) == design.size


def test_demo_is_a_small_scheduling_campaign():
    spec = load_spec(Path(__file__).resolve().parents[1] / "specs" / "demo.yaml")
    assert spec.model == "jobs" and spec.params["workload"] == "synthetic"
    assert spec.tasks <= 200


@pytest.mark.parametrize("path", READY, ids=[p.stem for p in READY])
def test_ready_spec_names_the_source_design_it_reproduces(path, workloads):
    """A study's spec names its source and what differs; the others say they reproduce none."""
    description = " ".join(load_spec(path).description.split())
    if not re.search(r"reproduces no (source study|single table)", description, re.IGNORECASE):
        assert re.search(r"\bseed 00[0-4]\b", description), path.name
        assert "What differs" in description, path.name


def test_the_reference_lists_every_ready_spec():
    page = Path(__file__).resolve().parents[1] / "docs" / "reference" / "ready-specs.md"
    rows = [line for line in page.read_text().splitlines() if line.startswith("| `")]
    named = set(re.findall(r"`([\w-]+\.yaml)`", "\n".join(rows)))
    assert named == {path.name for path in SPECS}


def test_a_spec_built_first_is_run_by_its_own_test():
    root = Path(__file__).resolve().parents[1]
    for name, test in BUILT.items():
        assert (root / "specs" / name).is_file(), name
        assert name in (root / test).read_text(), test
