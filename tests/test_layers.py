"""The engine's packages import one another in the direction of the data flow.

A package may import the packages before it in `ORDER`, `errors` and `models` (the contract
and the registry): the stages of the data flow, then `pipelines` (each ties the stages
together for one command), `api` (every command as a function, and the `Campaign` handle) and
`cli`, which only parses arguments, calls the API and prints what the renderers write. The
imports against that direction that are left are listed, each with why, so that a new one
fails here and a removed one is struck from the list."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[1] / "campaign"
ORDER = [
    "spec",
    "design",
    "store",
    "plan",
    "cluster",
    "execute",
    "results",
    "analysis",
    "render",
    "pipelines",
    "api",
    "cli",
]
EVERYWHERE = {"errors", "models"}
AGAINST_THE_FLOW = {
    ("design", "store"): "a shard's folder name comes from store/folder.py, which names every "
    "file of an output folder",
    ("spec", "design"): "a spec's design key names the kinds of design points.py defines",
    ("spec", "results"): "a spec's metric and factor names are checked against the names a "
    "results file reserves (results/names.py)",
    ("plan", "analysis"): "precision rounds run the stopping rule of analysis/stats.py, a "
    "selection's stages the procedures of analysis/selection.py",
    ("plan", "results"): "the run state reads the status codes and the task table of results/",
    ("execute", "render"): "the driver draws the progress bar (render/progress.py)",
    ("execute", "results"): "a worker checks a task's metric values as results/names.py "
    "says a results file can hold them, and a program's against its declare: as stored "
    "records are checked (results/check.py)",
    ("results", "analysis"): "assembly writes the per-cell summaries of analysis/stats.py "
    "and a selection's states (analysis/selection.py)",
}


def runtime_nodes(tree: ast.AST):
    """The nodes of a module that run: those under `if TYPE_CHECKING:` are for type
    checkers only and import nothing when the module is loaded."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            continue
        yield node
        yield from runtime_nodes(node)


def unit_of(path: Path) -> str:
    return path.relative_to(ENGINE).parts[0].removesuffix(".py")


def imports() -> set[tuple[str, str]]:
    """Every (package, package it imports) pair of the engine, models aside."""
    found = set()
    for path in ENGINE.rglob("*.py"):
        unit = unit_of(path)
        if unit == "models":
            continue
        tree = ast.parse(path.read_text())
        nodes = list(runtime_nodes(tree))
        names = {n.module for n in nodes if isinstance(n, ast.ImportFrom) and n.module}
        names |= {a.name for n in nodes if isinstance(n, ast.Import) for a in n.names}
        names |= {  # from campaign import api
            f"campaign.{a.name}"
            for n in nodes
            if isinstance(n, ast.ImportFrom) and n.module == "campaign" and not n.level
            for a in n.names
        }
        for name in names:
            parts = name.split(".")
            if parts[0] == "campaign" and len(parts) > 1 and parts[1] != unit:
                found.add((unit, parts[1]))
    return found


def against_the_flow(pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
    rank = {name: i for i, name in enumerate(ORDER)}
    return {
        (unit, target)
        for unit, target in pairs
        if unit in rank
        and target not in EVERYWHERE
        and target in rank
        and rank[target] >= rank[unit]
    }


def test_packages_import_in_the_direction_of_the_data_flow():
    assert against_the_flow(imports()) == set(AGAINST_THE_FLOW)


def test_the_command_line_imports_nothing_but_the_api_and_the_renderers():
    """A command parses its arguments, calls the API and prints what a renderer writes of its
    result: no work of its own, so `campaign.run(...)` and `campaign run` cannot drift."""
    assert {target for unit, target in imports() if unit == "cli"} == {"api", "render", "errors"}


def test_nothing_imports_the_command_line():
    assert {unit for unit, target in imports() if target == "cli"} <= {"__main__"}


def test_the_check_sees_an_import_against_the_flow():
    assert against_the_flow({("spec", "render"), ("render", "spec")}) == {("spec", "render")}
