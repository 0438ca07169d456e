"""The package's floors go one way: cli → hosts → commands/evaluation → run → phases →
views → seat → readiness → agents → evidence → store, and the engine (run, phases, seat)
never imports the views. Read from the source (every import, lazy ones included), so a
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


# The packages, from the top floor down. A module may import its own package and any floor
# below it, never one above: the hosts (their hooks, the MCP server) ask the commands, the
# commands (a question a person or a client asks of a run: status, list, report, cancel, ask,
# adopt, doctor, start, resume) and the eval drive runs, a run drives its phases, the phases
# seats, a seat drives an agent, and everything keeps its files through the store. The
# commands sit below the hosts because a host's hook asks the same questions the command
# line does (hosts/flow.py), and need nothing of a host: what only the MCP tools ask (start
# a run, the record of which request started which run) is a command like the rest. The
# views render what a run wrote, for the cli, the commands and the hosts: they sit below the
# engine so they can read its records (evidence, store), and the engine imports none of
# them (below); the live view is a view, so the figures every surface shows (a run's phase
# word and percent) are the views' own, and the commands hand them on.
FLOORS = ("hosts", "commands evaluation", "run", "phases", "views", "seat", "readiness",
          "agents", "evidence", "store")
# The top-level modules: the command line above every floor (cli.py, its parts that are not
# commands in cliparts.py, `council eval` in clieval.py); what a run is declared as (its
# graph, options and their types, config, topic, errors, paths, prompts) and the process
# helper below them. Of those, config and trust read and write their files through the
# store, so only they may import it; the rest import no package at all.
ENTRY = {"council.cli", "council.cliparts", "council.clieval", "council.__main__"}
ON_THE_STORE = {"council.config", "council.trust"}


def floor(module: str) -> int | None:
    """The floor `module` is on (0 the top), or None for a top-level module."""
    parts = module.split(".")
    for height, names in enumerate(FLOORS):
        if len(parts) > 1 and parts[1] in names.split():
            return height
    return None


def test_every_module_is_on_a_floor_or_a_declared_top_level_one() -> None:
    top = sorted(m for m in imports() if floor(m) is None)
    assert top == sorted({"council", "council.errors", "council.paths", "council.graph",
                          "council.options", "council.runoptions", "council.topic",
                          "council.prompts", "council.domains", "council.clis",
                          "council.spawn", *ENTRY, *ON_THE_STORE})


def test_no_floor_imports_one_above_it() -> None:
    climbs = []
    for name, deps in imports().items():
        here = floor(name)
        if here is None:
            continue
        climbs += [f"{name} → {dep}" for dep in sorted(deps)
                   if ((there := floor(dep)) is not None and there < here)
                   or dep in ENTRY]
    assert climbs == []


# The engine: what runs a run. The views are a leaf for it: whatever it wants rendered (the
# page at a run's end) is handed down by the cli or the hosts (supervisor.execute's publish).
ENGINE = {"run", "phases", "seat"}


def test_the_engine_imports_no_view() -> None:
    found = {f"{name} → {dep}" for name, deps in imports().items()
             if name.split(".")[1:2] and name.split(".")[1] in ENGINE
             for dep in deps if dep.split(".")[1:2] == ["views"]}
    assert found == set()


def test_the_declarations_sit_below_every_floor() -> None:
    """What a run is declared as imports no package (config and trust, only the store), so
    any floor can read it."""
    wrong = []
    for name, deps in imports().items():
        if floor(name) is not None or name in ENTRY:
            continue
        allowed = {"store"} if name in ON_THE_STORE else set()
        wrong += [f"{name} → {dep}" for dep in sorted(deps) if dep in ENTRY or
                  (floor(dep) is not None and dep.split(".")[1] not in allowed)]
    assert wrong == []


def test_only_the_cli_imports_click() -> None:
    """The command line is three modules, not a package, and they are the only click ones:
    cli.py (each command: parse, ask commands/, render), which must stay under 400 lines
    (tests/test_shape.py); cliparts.py, its parts that are not commands (the error handler,
    the declared options as click options, output); clieval.py, `council eval`, the one
    module outside council/evaluation that imports it (tests/test_lean.py). Not a `cli/`
    package: the bound is on cli.py itself (issue 41), and the hooks' fast path
    (__main__.py) and the tests import `council.cli` as it is."""
    users = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                   if "import click" in p.read_text(encoding="utf-8"))
    assert users == ["cli.py", "clieval.py", "cliparts.py"]


def test_every_import_is_one_the_floors_can_see() -> None:
    """imports() reads absolute imports only: a relative one would slip past every floor."""
    relative = sorted(f"{path.relative_to(PACKAGE)}:{node.lineno}"
                      for path in PACKAGE.rglob("*.py")
                      for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                      if isinstance(node, ast.ImportFrom) and node.level > 0)
    assert relative == []
