"""Every public function of the Python API, and every method of `Campaign`, says in numpydoc
sections what it takes and what it returns (the reference page is written from them)."""

from __future__ import annotations

import inspect

import pytest
from numpydoc.validate import validate

import campaign.api as api

CHECKS = {"GL08", "PR01", "PR02", "RT01"}  # no docstring; a parameter undocumented or unknown;
# no Returns section


def public_names() -> list[str]:
    names = [
        f"{getattr(api, name).__module__}.{name}"
        for name in api.__all__
        if inspect.isfunction(getattr(api, name)) and name != "model_command"
    ]
    methods = [
        f"campaign.api.handle.Campaign.{name}"
        for name, member in vars(api.Campaign).items()
        if inspect.isfunction(member) and not name.startswith("_")
    ]
    return names + methods


@pytest.mark.parametrize("name", public_names())
def test_the_api_documents_its_parameters_and_what_it_returns(name):
    found = [f"{code}: {text}" for code, text in validate(name)["errors"] if code in CHECKS]
    assert found == []


def test_every_command_is_checked():
    assert len(public_names()) >= 30  # the functions and the handle's methods
