"""The grader's layers, read from its imports (every import, including those inside functions):
each package imports only its own layer's or lower ones, packages do not import each other in a
circle, and no module takes part in an import cycle. docs/architecture.md draws the layers.

An upward import or a cycle is how a module ends up needing what it serves (the engine once
imported the cluster code, whose worker imported the engine's private grading function back)."""

from __future__ import annotations

import ast
from collections import defaultdict

from core.script_output import REPO

# Lowest first. A module belongs to the longest name below that prefixes it.
LAYERS = (
    ("autograder", "autograder.errors", "autograder.atomic"),          # shared by all
    ("autograder.sandbox",),                                             # runs student code
    ("autograder.engine",),                                              # grades one / a batch
    ("autograder.lec01_codesign", "autograder.build", "autograder.cluster", "autograder.gradescope",
     "autograder.nbgrader_bridge", "autograder.similarity", "autograder.views"),  # assignments, adapters, reports
    ("autograder.api",),                                                 # the library: grade, pregrade, ...
    ("autograder.commands", "autograder.cli", "autograder.__main__", "autograder.gradescope.__main__",
     "autograder.gradescope.runtime"),                                   # command-line shims
)
# Import cycles inside one package that are known and not yet taken apart, with the reason.
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def modules() -> dict[str, object]:
    found = {}
    for path in sorted((REPO / "autograder").rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the kit modules it imports (`from package import module` names the module)."""
    mods = modules()

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for target in targets:
                if target.startswith("autograder") and (hit := known(target)) and hit != name:
                    graph[name].add(hit)
    return graph


def layer(module: str) -> tuple[int, str]:
    """(layer index, the package name it belongs to)."""
    best = (-1, "")
    for index, names in enumerate(LAYERS):
        for prefix in names:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best[1]):
                best = (index, prefix)
    return best


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected parts with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(frozenset(part))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer():
    assert [m for m in modules() if layer(m)[0] < 0] == []


def test_no_module_imports_a_higher_layer():
    upward = [f"{a} -> {b}" for a, targets in import_graph().items() for b in targets if layer(b)[0] > layer(a)[0]]
    assert upward == []


def test_packages_do_not_import_each_other_in_a_circle():
    packages: dict[str, set[str]] = defaultdict(set)
    for a, targets in import_graph().items():
        for b in targets:
            if layer(a)[1] != layer(b)[1]:
                packages[layer(a)[1]].add(layer(b)[1])
    assert cycles(packages) == []


def test_no_module_takes_part_in_an_import_cycle():
    found = cycles(import_graph())
    assert [sorted(c) for c in found if c not in KNOWN_CYCLES] == []
    assert [sorted(c) for c in KNOWN_CYCLES if c not in found] == []   # a cycle taken apart leaves the list


def test_the_check_sees_an_upward_import_and_a_cycle():
    graph = import_graph()
    graph["autograder.engine.batch"].add("autograder.cluster.client_side")
    graph["autograder.cluster.client_side"].add("autograder.engine.batch")
    assert layer("autograder.cluster.client_side")[0] > layer("autograder.engine.batch")[0]
    assert any({"autograder.engine.batch", "autograder.cluster.client_side"} <= c for c in cycles(graph))
