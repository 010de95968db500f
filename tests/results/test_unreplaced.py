"""What reads results.nc more than once reads one file: a run ending in another process
replaces the file whole, and an export made of two files' reads would show the numbers of
one beside the failures of the other."""

from __future__ import annotations

import os
import shutil

import pytest

import campaign
import campaign.api.files
from campaign.errors import CampaignError
from campaign.results.unreplaced import unreplaced
from tests.conftest import finished_campaign
from tests.render.test_export import SPEC

first = finished_campaign("replaced-3", SPEC)  # an M/M/1 campaign where some tasks fail
second = finished_campaign("replaced-4", SPEC.replace("seed: 3", "seed: 4"))


def test_an_export_replaced_midway_is_made_again_from_the_new_file(
    first, second, tmp_path, monkeypatch
):
    folder = tmp_path / "out"
    folder.mkdir()
    shutil.copy(first / "results.nc", folder / "results.nc")
    newer = shutil.copy(second / "results.nc", tmp_path / "newer.nc")
    expected = campaign.export(second / "results.nc", tmp_path / "expected.csv")[0].read_text()
    assert expected != campaign.export(first, tmp_path / "older.csv")[0].read_text()
    read = campaign.api.files.open_failures
    calls = []

    def replaced_first(path):  # the run ends between the root's read and the failures'
        if not calls:
            os.replace(newer, folder / "results.nc")
        calls.append(path)
        return read(path)

    monkeypatch.setattr(campaign.api.files, "open_failures", replaced_first)
    written = campaign.export(folder, tmp_path / "tasks.csv")
    assert written[0].read_text() == expected  # wholly from the new file
    assert len(calls) == 2  # made again once


def test_a_file_replaced_at_every_try_stops_with_one_line(first, tmp_path):
    path = shutil.copy(first / "results.nc", tmp_path / "results.nc")
    tries = []

    def replacing():
        tries.append(1)
        copy = shutil.copy(path, tmp_path / "copy.nc")
        os.replace(copy, path)
        return len(tries)

    with pytest.raises(CampaignError) as stopped:
        unreplaced(path, replacing)
    assert len(tries) == 5
    assert str(stopped.value) == (
        f"{path} was replaced 5 times while it was read (a run writing it in another "
        "process); run this command again once that run has ended"
    )
    assert unreplaced(tmp_path, lambda: "made") == "made"  # the folder names its results.nc


def test_an_export_to_standard_output_replaced_midway_prints_the_new_file_once(
    first, second, tmp_path, monkeypatch, capsys
):
    """Made again from the new file, the CSV on stdout was printed twice: the old file's
    rows, then the new file's, one after the other."""
    folder = tmp_path / "out"
    folder.mkdir()
    shutil.copy(first / "results.nc", folder / "results.nc")
    newer = shutil.copy(second / "results.nc", tmp_path / "newer.nc")
    expected = campaign.export(second / "results.nc", tmp_path / "expected.csv")[0].read_text()
    read = campaign.api.files.open_failures
    calls = []

    def replaced_first(path):
        if not calls:
            os.replace(newer, folder / "results.nc")
        calls.append(path)
        return read(path)

    monkeypatch.setattr(campaign.api.files, "open_failures", replaced_first)
    assert campaign.export(folder, "-") == []
    assert capsys.readouterr().out == expected
    assert len(calls) == 2
