"""The package's shape, read from the source so it stays true (issue 41): no function over 60
lines, and the two modules every command passes through stay small: cli.py only parses and
renders (the answers are commands/'s), hosts/mcptools.py only renders the same answers as
MCP tools."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "council"
LONGEST = 60  # lines of a function, from its `def` to its last line (methods, nested too)
UNDER = {"cli.py": 400, "hosts/mcptools.py": 450}  # lines of the module, at most this less 1


def functions(source: str) -> dict[str, int]:
    """`line name` → its lines, for every function of `source` (its decorators not counted)."""
    return {f"{node.lineno} {node.name}": (node.end_lineno or node.lineno) - node.lineno + 1
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def lengths() -> dict[str, int]:
    """`module.py:line name` → its lines, for every function in council/."""
    return {f"{path.relative_to(PACKAGE)}:{where}": n
            for path in sorted(PACKAGE.rglob("*.py"))
            for where, n in functions(path.read_text(encoding="utf-8")).items()}


def test_no_function_is_over_60_lines() -> None:
    found = lengths()
    assert len(found) > 500  # the walk reads the package (it has that many functions)
    assert {where: n for where, n in found.items() if n > LONGEST} == {}


def test_a_function_is_measured_from_its_def_to_its_last_line() -> None:
    source = ('@wraps\n'
              'def f(\n    a: int,\n) -> int:\n    """doc"""\n\n'
              '    async def g() -> None:\n        pass\n    return a\n'
              '\n\nclass C:\n    def m(self) -> None:\n        pass\n')
    assert functions(source) == {"2 f": 8, "7 g": 2, "13 m": 2}


def test_the_command_line_and_the_mcp_tools_stay_small() -> None:
    sizes = {name: len((PACKAGE / name).read_text(encoding="utf-8").splitlines())
             for name in UNDER}
    assert {name: n for name, n in sizes.items() if n >= UNDER[name]} == {}
