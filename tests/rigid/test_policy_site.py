"""Policies see their site only through ``PolicySite``: it lists exactly what the policies and
the reservation books they hold touch of a site, and a real ``Site`` has all of it."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from campaign.models.rigid.policies import POLICIES, PolicySite
from campaign.models.rigid.site import Site

RIGID = Path(__file__).resolve().parents[2] / "campaign" / "models" / "rigid"
HOLDERS = [*sorted((RIGID / "policies").glob("*.py")), RIGID / "reservations.py"]
HOLDERS.append(RIGID / "compiled_book.py")
"""The modules whose code holds a site: the policies and their reservation books."""


def members() -> set[str]:
    """The names ``PolicySite`` lists: its properties, methods and attributes."""
    names = {name for name, value in vars(PolicySite).items() if not name.startswith("_")}
    return names | set(PolicySite.__annotations__)


def touched(path: Path) -> set[str]:
    """The names a module reads or writes of a site: ``site.NAME``, ``self.site.NAME``, and
    through a local name given ``self.site``."""
    found = set()
    for function in ast.walk(ast.parse(path.read_text())):
        if not isinstance(function, ast.FunctionDef):
            continue
        holders = {"site"}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and is_site(node.value, holders):
                holders |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute) and is_site(node.value, holders):
                found.add(node.attr)
    return found


def is_site(node: ast.AST, holders: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in holders
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "site"
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def test_policy_site_lists_exactly_what_policies_touch():
    used = set().union(*(touched(path) for path in HOLDERS))
    assert used == members()
    assert used == {
        "alarm",
        "ended",
        "ends",
        "estimate",
        "free",
        "index",
        "jobs_backfilled",
        "moves",
        "processors",
        "queue",
        "rng",
        "shadow",
        "size",
        "start_job",
    }


def test_the_check_sees_a_site_read_through_a_local_name(tmp_path):
    path = tmp_path / "policy.py"
    path.write_text(
        "class P:\n"
        "    def select(self, t):\n"
        "        here = self.site\n"
        "        return here.start, self.site.free, self.other.queue\n"
    )
    assert touched(path) == {"start", "free"}


def test_every_site_is_a_policy_site():
    for name, kind in POLICIES.items():
        site = Site(4, name, [1], [1.0], rng=np.random.default_rng(0))
        assert isinstance(site, PolicySite) and type(site.policy) is kind
