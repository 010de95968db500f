"""Shared test fixtures: the tests' workloads folder, spec files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
"""Slices of real archive traces, under the traces' own names (scripts/make_test_slices.py)."""


@pytest.fixture
def workloads(monkeypatch) -> Path:
    """The workloads folder of a test: tests/data, whatever CAMPAIGN_WORKLOADS says outside, so
    the numbers a test expects are those of the slices it ships with."""
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(DATA))
    return DATA


@pytest.fixture
def write_spec(tmp_path):
    """Write a spec (dedented) into the test's folder and return its path."""

    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write
