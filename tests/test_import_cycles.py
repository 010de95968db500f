"""No module of `campaign/` imports itself through others.

Every import counts, wherever it stands: at the top, inside a function, under
`if TYPE_CHECKING:` (a module imported only for its annotations still ties the two together).
Relative imports are resolved, and `from package import name` ties the module to the
submodule `name` where there is one, else to the package. A package's `__init__.py` running
before its submodules is Python's doing, not an import the code makes, and draws no tie.
The imports that close the cycles left are listed, each with why, so that a new cycle fails
here and a removed one is struck from the list."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "campaign"

KNOWN_CYCLES: dict[tuple[str, str], str] = {
    # (module, module it imports): each import that closes a cycle of the engine, with why;
    # strike its line when the cycle is gone. Only these may close a cycle: no model module,
    # and no other import, may join this list. Empty: the last one (a result's engine identity
    # took the version from the package's face, which imported the pipelines) went with the
    # Python API's own package, campaign/api/, which the face names on first use.
}


def modules(package: Path) -> dict[str, Path]:
    """Every module of ``package`` by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def known(name: str, names: dict[str, Path]) -> str | None:
    """The module ``name`` stands for: itself, or the nearest enclosing one of ours."""
    while name and name not in names:
        name = name.rpartition(".")[0]
    return name or None


def targets(node: ast.Import | ast.ImportFrom, module: str, names: dict[str, Path]):
    """The modules of ours one import statement of ``module`` names."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield known(alias.name, names)
        return
    base = node.module or ""
    if node.level:
        package = module if names[module].name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield submodule if submodule in names else known(base, names)


def import_graph(package: Path) -> dict[str, dict[str, int]]:
    """Per module of ``package``: each module of ours it imports, with the first line."""
    names = modules(package)
    graph: dict[str, dict[str, int]] = {}
    for module, path in names.items():
        edges = graph.setdefault(module, {})
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in targets(node, module, names):
                    if target is not None and target != module:
                        edges.setdefault(target, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = {stack.pop()}
            while node not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def described(cycle: frozenset[str], graph: dict[str, dict[str, int]]) -> str:
    """The imports that tie a cycle, one per line: module -> module (line)."""
    lines = [
        f"  {module} -> {target} (line {line})"
        for module in sorted(cycle)
        for target, line in sorted(graph[module].items())
        if target in cycle
    ]
    return "\n".join([f"cycle of {len(cycle)} modules:", *lines])


def without(graph: dict[str, dict[str, int]], imports) -> dict[str, dict[str, int]]:
    """``graph`` less the ``imports`` ((module, module it imports) pairs)."""
    return {
        module: {target: line for target, line in edges.items() if (module, target) not in imports}
        for module, edges in graph.items()
    }


def test_no_module_imports_itself_through_others():
    graph = without(import_graph(PACKAGE), KNOWN_CYCLES)
    new = sorted(cycles(graph), key=sorted)
    assert not new, "\n".join(described(cycle, graph) for cycle in new)


def test_the_known_cycles_are_still_there():
    """An import of ``KNOWN_CYCLES`` that the code no longer makes, or that no longer closes
    a cycle, is struck from it."""
    graph = import_graph(PACKAGE)
    closing = {
        (module, target)
        for cycle in cycles(graph)
        for module in cycle
        for target in graph[module]
        if target in cycle
    }
    assert set(KNOWN_CYCLES) <= closing, set(KNOWN_CYCLES) - closing


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_every_kind_of_import_ties_modules(tmp_path):
    """Relative imports, submodules imported from their package, imports under
    TYPE_CHECKING and inside functions: each is one tie; a package's name and a name that is
    not a submodule tie to the package."""
    package = write(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.sub import VALUE\n",
            "pkg/a.py": "from . import b\nimport numpy\n",
            "pkg/b.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub.c import C\n"
            ),
            "pkg/sub/__init__.py": "VALUE = 1\n",
            "pkg/sub/c.py": "def f():\n    from .. import a, sub\n    import pkg.sub.d\n",
            "pkg/sub/d.py": "from ..sub import VALUE\n",
        },
    )
    assert import_graph(package) == {
        "pkg": {"pkg.sub": 1},
        "pkg.a": {"pkg.b": 1},
        "pkg.b": {"pkg.sub.c": 3},
        "pkg.sub": {},
        "pkg.sub.c": {"pkg.a": 2, "pkg.sub": 2, "pkg.sub.d": 3},
        "pkg.sub.d": {"pkg.sub": 1},
    }
    assert cycles(import_graph(package)) == {frozenset({"pkg.a", "pkg.b", "pkg.sub.c"})}


def test_a_new_cycle_is_reported_with_what_ties_it(tmp_path):
    package = write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/left.py": "from pkg.right import R\nL = 1\n",
            "pkg/right.py": "R = 2\n\n\ndef g():\n    from pkg.left import L\n    return L\n",
            "pkg/alone.py": "from pkg import left\n",
        },
    )
    graph = import_graph(package)
    assert cycles(graph) == {frozenset({"pkg.left", "pkg.right"})}
    assert described(frozenset({"pkg.left", "pkg.right"}), graph) == (
        "cycle of 2 modules:\n  pkg.left -> pkg.right (line 1)\n  pkg.right -> pkg.left (line 5)"
    )
