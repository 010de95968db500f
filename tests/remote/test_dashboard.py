"""The dashboard link `run` prints opens Dask's live status pages; where a scheduler serves
none, no link is printed and the line says why."""

from __future__ import annotations

import base64
import json
import re
import tomllib
import urllib.error
import urllib.request
from importlib.metadata import version
from pathlib import Path

import pytest

import campaign
from campaign.cluster.dashboard import describe
from tests.conftest import MM1_TWO_LOADS as SPEC

MISSING_BOKEH = "Dask needs bokeh"


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def test_link_printed_by_run_serves_the_bokeh_status_page(write_spec):
    pages = {}

    def say(line: str) -> None:
        # called while the embedded cluster is up: open the link the user would open
        found = re.search(r"; dashboard (http://\S+)$", line)
        if found:
            pages[found.group(1)] = fetch(found.group(1))

    ds = campaign.run(write_spec(SPEC), workers=1, progress=False, say=say)
    assert int(ds.attrs["tasks_ok"]) == 8
    [(url, (status, page))] = pages.items()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/status", url)
    assert status == 200
    assert MISSING_BOKEH not in page
    # the bokeh server application: its client library, and a live session of it whose
    # plots the page places in its own elements
    assert "<title>Dask Diagnostic UI</title>" in page
    assert re.search(r'<script src="static/js/bokeh\.min\.js\?v=\w+"></script>', page)
    [items] = re.findall(r"const render_items = (\[.*?\]);\n", page)
    [item] = json.loads(items)
    payload = item["token"].split(".")[0]
    token = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert token["session_id"]
    assert item["roots"]
    for root, element in item["roots"].items():
        assert f'<div id="{element}" data-root-id="{root}"' in page


def test_scheduler_without_dashboard_gets_no_link(start_cluster):
    from distributed import Client

    from campaign.cluster.open import open_client

    cluster = start_cluster(workers=0)  # `dask scheduler --no-dashboard`
    said: list[str] = []
    with open_client(scheduler=cluster.address, say=said.append):
        pass
    assert said == [
        f"Dask scheduler {cluster.address} (0 workers); no dashboard (the scheduler serves none)"
    ]
    # and indeed the link Dask would give leads nowhere
    with Client(cluster.address, timeout="30s") as client:
        link = client.dashboard_link
    assert link.endswith("/status")
    assert fetch(link)[0] == 404


@pytest.mark.parametrize(
    ("served", "bokeh", "expected"),
    [
        (True, "3.9.2", "dashboard http://h:1/status"),
        (False, None, "no dashboard (the scheduler has no usable bokeh; its live pages need {})"),
        (False, "2.4.3", "no dashboard (the scheduler has bokeh 2.4.3; its live pages need {})"),
        (False, "3.9.2", "no dashboard (the scheduler serves none)"),
    ],
)
def test_the_line_says_why_there_is_no_link(served, bokeh, expected):
    from distributed.versions import BOKEH_REQUIREMENT

    assert describe("http://h:1/status", served, bokeh) == expected.format(BOKEH_REQUIREMENT)


def test_the_project_requires_a_bokeh_that_the_dashboard_accepts():
    from distributed.versions import BOKEH_REQUIREMENT
    from packaging.requirements import Requirement

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    [bokeh] = [r for r in map(Requirement, project["project"]["dependencies"]) if r.name == "bokeh"]
    [lowest] = [s.version for s in bokeh.specifier if s.operator == ">="]
    assert BOKEH_REQUIREMENT.specifier.contains(lowest)
    assert bokeh.specifier.contains(version("bokeh"))  # and the installed one is such a bokeh
