"""Shared test fixtures: where the real workload traces are."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEFAULT_WORKLOADS = REPO.parent / "shared" / "workloads"


def workloads_folder() -> Path:
    """The folder of real SWF traces: $CAMPAIGN_WORKLOADS, else ../shared/workloads."""
    return Path(os.environ.get("CAMPAIGN_WORKLOADS", DEFAULT_WORKLOADS))


@pytest.fixture(scope="session")
def workloads() -> Path:
    folder = workloads_folder()
    if not any(folder.glob("*.swf*")):
        pytest.skip(f"no SWF traces in {folder} (set CAMPAIGN_WORKLOADS to a folder of traces)")
    os.environ.setdefault("CAMPAIGN_WORKLOADS", str(folder))
    return folder


def trace_path(folder: Path, name: str) -> Path:
    path = folder / name
    if not path.exists():
        pytest.skip(f"trace {name} not found in {folder}")
    return path


@pytest.fixture
def write_spec(tmp_path):
    """Write a spec (dedented) into the test's folder and return its path."""

    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write
