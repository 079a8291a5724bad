"""The import graph of the installed package: no cycles, and dependencies that point one way.

docs/ARCHITECTURE.md ("Packages"): `voiced` wires everything; `frames` uses `rules`; `robot` and
`audio` know nothing of frames, of each other or of `voiced`'s own modules; each subpackage of
`voiced/` imports only what its docstring (and MAY_IMPORT) names; the leaf modules (LEAVES) may
be imported by every package and import nothing from the project themselves.

grimp builds the graph from the source: every import statement counts, at module level, inside
functions and under `if TYPE_CHECKING:` (an import moved into a function still depends on its
module; it only hides the cycle from the interpreter). grimp finds a package's modules by walking
its directory and cannot follow setuptools' package-dir mapping (voiced.robot is robot/ at the
repository root), so the installed layout is laid out as symlinks, as .ci/typecheck does for
mypy, and the graph is built in a child process that finds `voiced` there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

LEAVES = frozenset({"voiced.errors", "voiced.configschema"})
"""Leaf modules every package may import: the error types, and the schema that settings
dataclasses (audio's as well as the daemon's) are declared with. They import nothing but each
other."""

MAY_IMPORT: Mapping[str, frozenset[str]] = {
    "rules": frozenset({"rules"}),
    "frames": frozenset({"frames", "rules"}),
    "robot": frozenset({"robot", "rules"}),
    "audio": frozenset({"audio", "rules"}),
    "leaf": frozenset({"leaf"}),
    # The subpackages of voiced/ (each one's docstring says the same): their own modules, the
    # parts and the few modules of voiced/ named, never the command pipeline.
    "mqtt": frozenset({"mqtt", "robot", "rules", "voiced", "voiced.config", "voiced.events",
                       "voiced.eventtypes", "voiced.service.cellstatus"}),
    "link": frozenset({"link", "robot", "rules", "voiced.config", "voiced.paths",
                       "voiced.history", "voiced.events", "voiced.eventtypes"}),
    "words": frozenset({"words", "robot", "rules", "interpreter", "voiced.history"}),
    "commands": frozenset({"commands", "robot", "rules", "interpreter", "words", "link",
                           "targets", "voiced.config", "voiced.history", "voiced.events",
                           "voiced.eventtypes", "voiced.logs"}),
    "checks": frozenset({"checks", "robot", "rules", "interpreter", "inputs", "link", "mqtt",
                         "voiced.config", "voiced.page.server"}),
    "inputs": frozenset({"inputs", "audio", "rules", "robot", "interpreter", "frames", "commands",
                         "targets", "voiced.config", "voiced.events", "voiced.eventtypes",
                         "voiced.service.cellstatus"}),
    "interpreter": frozenset({"interpreter", "llm", "robot", "rules", "words", "audio", "frames",
                              "voiced.paths", "voiced.eventtypes"}),
    "llm": frozenset({"llm", "interpreter", "robot", "rules", "targets", "voiced.paths",
                      "voiced.eventtypes"}),
    "targets": frozenset({"targets", "voiced.config", "voiced.events", "voiced.eventtypes",
                          "voiced.notes", "voiced.paths"}),
}  # fmt: skip
"""Part -> the parts (and modules of voiced/ itself) its modules may import besides the leaves;
`voiced` itself may import all."""

_BUILD_GRAPH = """
import json, sys
import grimp

graph = grimp.build_graph(sys.argv[1], cache_dir=None, exclude_type_checking_imports=False)
edges = []
for importer in sorted(graph.modules):
    for imported in sorted(graph.find_modules_directly_imported_by(importer)):
        for detail in graph.get_import_details(importer=importer, imported=imported):
            edges.append([importer, imported, detail["line_number"], detail["line_contents"]])
json.dump({"modules": sorted(graph.modules), "edges": edges}, sys.stdout)
"""


@dataclass(frozen=True)
class Import:
    """One import statement between two modules of the package."""

    importer: str
    """The module whose source holds the statement."""
    imported: str
    """The module it imports."""
    line: int
    """Where in the importer's file."""
    text: str
    """The statement as written."""

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} -> {self.imported}  ({self.text})"


@dataclass(frozen=True)
class Graph:
    """What grimp found."""

    modules: frozenset[str]
    """Every module of the package, packages included."""
    imports: tuple[Import, ...]
    """Every import statement from one of them to another."""

    def imported_by(self) -> dict[str, set[str]]:
        """Module -> the modules it imports."""
        edges: dict[str, set[str]] = {module: set() for module in self.modules}
        for imp in self.imports:
            edges[imp.importer].add(imp.imported)
        return edges


def build_graph(root: Path, package: str) -> Graph:
    """The import graph of `package` as found under `root` (a directory on a fresh sys.path)."""
    proc = subprocess.run(
        [sys.executable, "-c", _BUILD_GRAPH, package],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    return Graph(frozenset(found["modules"]), tuple(Import(*edge) for edge in found["edges"]))


def lay_out_installed(scratch: Path) -> Path:
    """`voiced` as it installs, as symlinks under `scratch`: voiced/ with pyproject's
    package-dir entries (voiced.robot -> robot/, ...) linked into it."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    package = scratch / "voiced"
    package.mkdir()
    for entry in (REPO / "voiced").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, directory in setuptools["package-dir"].items():
        parent, _, child = name.rpartition(".")
        assert parent == "voiced", f"package-dir maps {name}; only voiced.* is laid out here"
        (package / child).symlink_to(REPO / directory)
    return scratch


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Graph:
    return build_graph(lay_out_installed(tmp_path_factory.mktemp("installed")), "voiced")


def part(module: str) -> str:
    """Which part of the architecture a module belongs to (MAY_IMPORT's keys, or `voiced`)."""
    if module in LEAVES:
        return "leaf"
    names = module.split(".")
    return names[1] if len(names) > 1 and names[1] in MAY_IMPORT else "voiced"


def cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a module importing
    itself): each is one knot of cycles. Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(edges[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1 or module in edges[module]:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def test_the_graph_holds_every_module_of_the_tree(graph: Graph) -> None:
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    tops = {"voiced": "voiced", **setuptools["package-dir"]}
    on_disk = set()
    for name, directory in tops.items():
        for path in (REPO / directory).rglob("*.py"):
            parts = path.relative_to(REPO / directory).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            on_disk.add(".".join((*name.split("."), *parts)))
    assert graph.modules == on_disk


def test_the_graph_counts_imports_in_functions_and_under_type_checking(tmp_path: Path) -> None:
    package = tmp_path / "knot"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from knot.b import B\n"
        "def f():\n"
        "    from . import c\n"
    )
    (package / "b.py").write_text("from knot import a\nB = 1\n")
    (package / "c.py").write_text("")
    found = {(i.importer, i.imported) for i in build_graph(tmp_path, "knot").imports}
    assert found == {("knot.a", "knot.b"), ("knot.a", "knot.c"), ("knot.b", "knot.a")}
    assert cycles(build_graph(tmp_path, "knot").imported_by()) == [["knot.a", "knot.b"]]


def test_no_import_cycles(graph: Graph) -> None:
    knots = cycles(graph.imported_by())
    shown = []
    for knot in knots:
        members = set(knot)
        lines = [str(i) for i in graph.imports if i.importer in members and i.imported in members]
        shown.append("cycle among " + ", ".join(knot) + ":\n    " + "\n    ".join(lines))
    assert not knots, "\n".join(shown)


def against_the_rules(imports: Iterable[Import]) -> list[str]:
    return [
        f"{part(i.importer)} may not import {part(i.imported)}: {i}"
        for i in imports
        if part(i.importer) in MAY_IMPORT
        and not _allowed(MAY_IMPORT[part(i.importer)] | {"leaf"}, i.imported)
    ]


def _allowed(rule: frozenset[str], imported: str) -> bool:
    """A module of voiced/ itself only by its name ("voiced": the package, for __version__);
    any other by its part."""
    return imported in rule or (part(imported) != "voiced" and part(imported) in rule)


def test_dependencies_point_one_way(graph: Graph) -> None:
    wrong = against_the_rules(graph.imports)
    assert not wrong, "\n".join(wrong)


def test_a_subpackage_of_voiced_may_import_only_what_its_rule_names() -> None:
    def imp(importer: str, imported: str) -> Import:
        return Import(importer, imported, 1, f"import {imported}")

    assert against_the_rules([
        imp("voiced.mqtt.service", "voiced.mqtt.topics"),
        imp("voiced.mqtt.service", "voiced.config"),
        imp("voiced.link.keeper", "voiced.robot.link"),
        imp("voiced.link.keeper", "voiced.errors"),
    ]) == []  # fmt: skip
    assert len(against_the_rules([
        imp("voiced.mqtt.service", "voiced.commands.pipeline"),
        imp("voiced.link.keeper", "voiced.commands.faults"),
        imp("voiced.link.keeper", "voiced.mqtt.service"),
    ])) == 3  # fmt: skip


def test_the_leaves_exist() -> None:
    for leaf in LEAVES:
        assert (REPO / Path(*leaf.split("."))).with_suffix(".py").is_file(), leaf
