"""The package's shape: no import cycle between modules or between packages, counting every import statement
(deferred ones inside functions and type-only ones included), so the layers read from the bottom up."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "gluster_model"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the gluster_model modules it imports anywhere in its text."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])  # gluster_model.campaign, or a top-level module such as gluster_model.cli


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert cycles(import_graph()) == []


def test_packages_form_layers_without_a_loop() -> None:
    graph = import_graph()
    packages: dict[str, set[str]] = {}
    for m, targets in graph.items():
        packages.setdefault(_package(m), set()).update(_package(t) for t in targets if _package(t) != _package(m))
    packages = {p: {t for t in ts if t != "gluster_model"} for p, ts in packages.items()}  # __version__ only
    assert cycles(packages) == []


def test_the_checks_see_a_cycle_when_there_is_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = import_graph()
    assert "gluster_model.campaign.progress" in graph["gluster_model.campaign.collector"]
    assert "gluster_model.campaign.adaptive" in graph["gluster_model.campaign.plan_run"]


# The layers of DESIGN.md's data flow, bottom up: a package imports only from its own layer or below. A new
# package or top-level module must be placed here, which is the point: where it stands is a decision.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "units", "text", "outputs", "processes", "stats"),
    ("config",),
    ("remote",),
    ("hardware", "gluster", "design"),
    ("bench", "lab", "preflight"),
    ("plan",),
    ("store",),
    ("dataset",),
    ("model", "campaign", "compare"),
    ("predict",),
    ("verify",),
    ("api",),
    ("present",),  # terminal output and the report: above the library they render
    ("cli",),
)


def _layer(package: str) -> int:
    name = package.split(".")[1] if "." in package else ""
    for i, names in enumerate(LAYERS):
        if name in names:
            return i
    raise AssertionError(f"{package} stands in no layer of test_layout.LAYERS: place it there")


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs where a module imports from a higher layer than its own."""
    out = []
    for m, targets in graph.items():
        for t in targets:
            if _package(t) in ("gluster_model", _package(m)):
                continue
            if _layer(_package(t)) > _layer(_package(m)):
                out.append((m, t))
    return sorted(out)


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    assert upward_imports(import_graph()) == []


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = {"gluster_model.remote.executor": {"gluster_model.hardware.group"},
             "gluster_model.hardware.group": {"gluster_model.remote.executor"}}
    assert upward_imports(graph) == [("gluster_model.remote.executor", "gluster_model.hardware.group")]
