"""Everything council knows of a CLI is in its adapter (council/agents/<cli>.py) or in its
facts (council/clis.py): no other module branches on a CLI's name. Read from the source, so
an `if cli == "gemini": … else:` that would hand a new CLI another vendor's behaviour fails
here rather than in the toy CLI's run (tests/test_adding_a_cli.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from council.clis import REGISTRY

PACKAGE = Path(__file__).parents[1] / "council"
NAMES = frozenset(REGISTRY)
# Where a CLI's name may be compared, or key a table.
OWNERS = {"agents/claude.py", "agents/codex.py", "agents/gemini.py", "clis.py",
          # The static registry of adapters: one entry per CLI, each naming its own.
          "agents/__init__.py"}
# Host names, which happen to be CLI names: what council knows of Claude Code, Gemini CLI
# and Codex as the hosts it is started from (their hooks, setup and install plans), not as
# the CLIs it drives: each host's hook adapter, setup and install plan, in its own folder.
HOSTS = ("hosts/",)


def _names_in(node: ast.AST) -> set[str]:
    """The CLI names a comparison's operand holds: a string, or a tuple, list or set of them."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return {i.value for i in items if isinstance(i, ast.Constant) and i.value in NAMES}


def branches(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each comparison with a CLI's name, each `case "<cli>"` and each table
    keyed by one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found += [(node.lineno, f"compares with {n!r}") for n in _names_in(operand)]
        elif isinstance(node, ast.MatchValue):
            found += [(node.lineno, f"matches {n!r}") for n in _names_in(node.value)]
        elif isinstance(node, ast.Dict):
            found += [(node.lineno, f"a table keyed by {k.value!r}") for k in node.keys
                      if isinstance(k, ast.Constant) and k.value in NAMES]
    return found


def test_no_module_but_the_adapters_and_the_facts_branches_on_a_cli_name() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in OWNERS or rel.startswith(HOSTS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"council/{rel}:{line}: {what}" for line, what in branches(tree)]
    assert found == []


def test_the_walk_sees_a_branch() -> None:
    """The check above can fail: each shape it looks for is found."""
    source = ('if cli == "gemini": pass\n'
              'if x in ("claude", "other"): pass\n'
              'match cli:\n    case "codex": pass\n'
              'TABLE = {"claude": 1}\n')
    assert sorted(line for line, _ in branches(ast.parse(source))) == [1, 2, 4, 5]
