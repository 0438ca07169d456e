"""The package's layers go one way: cli → supervisor → pipeline → phases → runner → agents →
workspace/state/progress. Read from the source (every import, lazy ones included), so a
cycle or a climb back up fails here rather than in a newcomer's head."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "council"


def imports() -> dict[str, set[str]]:
    """module → the council modules it imports, anywhere in its source."""
    out: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                base = node.module
                if base == "council":  # from council import x, y: each is a module
                    found |= {f"council.{a.name}" for a in node.names}
                elif base.startswith("council."):
                    found.add(base)
                    found |= {f"{base}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("council")}
        out[name] = found
    modules = set(out)
    return {name: {m for m in found if m in modules and m != name}
            for name, found in out.items()}


def test_there_are_no_import_cycles() -> None:
    graph = imports()
    state: dict[str, int] = {}  # 1: on the current path, 2: finished

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                cycle = [*path[path.index(dep):], dep] if dep in path else [name, dep]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if dep not in state:
                visit(dep, [*path, dep])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_lower_layers_never_climb_back_up() -> None:
    graph = imports()
    above = {
        "council.runner": ("council.phases", "council.pipeline", "council.supervisor"),
        "council.agents": ("council.runner", "council.phases", "council.pipeline",
                           "council.supervisor"),
        "council.phases": ("council.pipeline", "council.supervisor", "council.handover",
                           "council.cli", "council.hosts"),
        "council.pipeline": ("council.supervisor", "council.cli", "council.hosts"),
        "council.supervisor": ("council.hosts", "council.cli"),  # hosts drive the supervisor
        "council.state": ("council.runner", "council.phases", "council.supervisor"),
    }
    for name, deps in graph.items():
        for layer, forbidden in above.items():
            if name == layer or name.startswith(layer + "."):
                climbs = sorted(d for d in deps if d.startswith(forbidden))
                assert not climbs, f"{name} imports {climbs}"


def test_only_the_cli_imports_click() -> None:
    users = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                   if "import click" in p.read_text(encoding="utf-8"))
    assert users == ["cli.py"]
