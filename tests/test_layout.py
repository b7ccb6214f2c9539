"""The source layout shows the architecture: no import cycle, small folders, documented packages.

Imports are read from the source (``ast``), not from a running interpreter, so every import
counts: module level, inside functions, under ``TYPE_CHECKING``, and ``importlib.import_module``
with a literal name (or ``f"{__package__}.name"``).

- *modules*: no cycle among modules;
- *packages*: no cycle among packages. A module belongs to the package of its own folder; each
  module of the top-level ``accelkb/`` folder (the face, and :mod:`accelkb.errors` that every
  package uses) is its own node; a package's ``__init__`` (a facade that re-exports its
  children) is not counted. Imports between a package and its own subpackages are containment,
  not edges (``solver.schedule.api`` runs the constructions, which use ``solver.schedule.model``):
  the module check covers them;
- no source folder holds more than 15 modules; every package opens with a docstring;
- ``pyproject.toml`` lists every package.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import networkx as nx
import pytest
from conftest import REPO

FOLDERS = {"accelkb": "accelkb", "accelkb.ontology": "ontology", "accelkb.rules": "rules",
           "accelkb.solver": "solver", "accelkb.perf": "perf"}
MAX_MODULES = 15


def _modules() -> dict[str, Path]:
    """Dotted name -> file of every source module (``pkg`` for ``pkg/__init__.py``)."""
    out: dict[str, Path] = {}
    for pkg, folder in FOLDERS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([pkg, *parts])] = path
    return out


MODULES = _modules()


def _package(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rsplit(".", 1)[0]


def _resolve(importer: str, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    base = _package(importer).split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _literal_module(node: ast.Call, importer: str) -> str | None:
    """The module named by ``importlib.import_module("...")`` (or ``f"{__package__}.x"``)."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "import_module") or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and len(arg.values) == 2:
        head, tail = arg.values
        if (isinstance(head, ast.FormattedValue) and isinstance(head.value, ast.Name)
                and head.value.id == "__package__" and isinstance(tail, ast.Constant)):
            return _package(importer) + str(tail.value)
    return None


def _imports(name: str) -> set[str]:
    """Project modules that ``name`` imports, each resolved to the most specific module."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, node.module, node.level)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
        elif isinstance(node, ast.Call):
            literal = _literal_module(node, name)
            if literal:
                found.add(literal)
    return {m for m in found if m in MODULES and m != name}


def module_graph() -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(MODULES)
    for name in MODULES:
        g.add_edges_from((name, target) for target in _imports(name))
    return g


def _node(name: str) -> str:
    """A module's node in the package graph."""
    pkg = _package(name)
    return name if pkg == "accelkb" and name != "accelkb" else pkg


def package_graph() -> nx.DiGraph:
    g = nx.DiGraph()
    for name in MODULES:
        if MODULES[name].name == "__init__.py":
            continue
        for target in _imports(name):
            a, b = _node(name), _node(target)
            if a != b and not a.startswith(b + ".") and not b.startswith(a + "."):
                g.add_edge(a, b, example=f"{name} -> {target}")
    return g


def test_the_walker_sees_every_kind_of_import() -> None:
    imports = _imports("accelkb.perf.scheduled")  # importlib.import_module inside functions
    assert "accelkb.solver.schedule.api" in imports
    assert "accelkb.perf.from_kb" in _imports("accelkb.perf.api")  # f"{__package__}.from_kb"
    assert "accelkb.rules.parse" in _imports("accelkb.rules.records")  # relative import
    assert len(module_graph().edges) > 300


def test_no_import_cycle_between_modules() -> None:
    cycles = sorted(sorted(c) for c in nx.simple_cycles(module_graph()))
    assert not cycles, f"import cycles between modules: {cycles[:5]}"


def test_no_import_cycle_between_packages() -> None:
    g = package_graph()
    cycles = sorted(sorted(c) for c in nx.simple_cycles(g))
    detail = [[g.edges[a, b]["example"] for a, b in zip(c, c[1:] + c[:1], strict=True)
               if g.has_edge(a, b)] for c in cycles[:3]]
    assert not cycles, f"import cycles between packages: {cycles[:3]}; e.g. {detail}"


def test_the_schedule_solver_needs_neither_perf_nor_the_configuration_solver() -> None:
    reach = nx.descendants(module_graph(), "accelkb.solver.schedule.api")
    assert not {m for m in reach if m.startswith(("accelkb.perf", "accelkb.solver.config",
                                                  "accelkb.ontology", "accelkb.rules"))}


@pytest.mark.parametrize("folder", sorted({str(p.parent.relative_to(REPO)) for p in MODULES.values()}))
def test_folder_is_small_and_documented(folder: str) -> None:
    path = REPO / folder
    modules = [p for p in path.glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= MAX_MODULES, f"{folder} holds {len(modules)} modules (at most {MAX_MODULES})"
    init = path / "__init__.py"
    assert init.exists(), f"{folder} has no __init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    assert len(doc.strip().splitlines()) >= 2, f"{folder}/__init__.py opens without a docstring"


def test_pyproject_lists_every_package() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    packages = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    assert listed == packages, (f"missing from pyproject.toml: {sorted(packages - listed)}; "
                                f"listed but absent: {sorted(listed - packages)}")
