"""A phase's name is spelled, as a phase name, only in the graph's declaration (graph.py):
every other module reads its phase, or the facts it needs about one, from the graph. Read
from the source: every string constant of the package that is exactly a phase's name counts,
f-strings' pieces included, docstrings and comments not (they are prose).

A few modules share a word with a phase without meaning the phase: a JSON key or an option
that bears the same word, the research/ folder. They are listed in ALLOWED, each with why;
a listed word in a listed file is not counted. Run this file as a script to print the count
per file (`python tests/test_phase_names.py`)."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "council"
DECLARATION = "graph.py"
# The names as the graph declares them, written out here on purpose: the test must not take
# its yardstick from the module it measures.
NAMES = frozenset({"scope", "research", "dissent", "refinement", "claims", "gapfill",
                   "recheck", "verification", "antagonist", "synthesis"})
ALLOWED: dict[tuple[str, str], str] = {
    ("evidence/claimcheck.py", "claims"): "claims.json's key (the listed claims)",
    ("evidence/coverage.py", "claims"):
        "the coverage judgement's key (a sub-question's claim ids)",
    ("evidence/score.py", "claims"): "claims.json's key",
    ("config.py", "dissent"): "the option and its config key, --dissent",
    ("runoptions.py", "dissent"): "the option's field of RunOptions, --dissent",
    ("options.py", "dissent"): "the option and its config key, --dissent",
    ("store/events.py", "scope"): "an event's field (run, or the phase it is about)",
    ("store/progress.py", "scope"): "an event's field (run, or the phase it is about)",
    ("paths.py", "research"): "the research/ folder",
    ("hosts/base.py", "research"): "the research/ folder",
    ("evaluation/results.py", "claims"): "a sample's metadata key (the run's claims.json)",
    ("hosts/mcptools.py", "research"): "ask_research's argument, `council ask --research`",
    ("hosts/claude/install.py", "scope"):
        "Claude Code's installed-plugin record's key (user or project scope)",
}


def spellings(package: Path = PACKAGE, allowed: bool = True) -> Counter[str]:
    """File (relative to the package) → string constants that are a phase's name, outside
    the declaration (and, with `allowed`, outside ALLOWED)."""
    found: Counter[str] = Counter()
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if allowed and rel == DECLARATION:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value in NAMES and id(node) not in prose \
                    and not (allowed and (rel, node.value) in ALLOWED):
                found[rel] += 1
    return found


def test_phase_names_are_spelled_only_in_the_graphs_declaration() -> None:
    found = spellings()
    assert not found, ("phase names spelled outside graph.py (read the phase, or its facts, "
                       f"from council.graph): {dict(found)}")


def test_the_measure_sees_a_spelled_name(tmp_path: Path) -> None:
    (tmp_path / "graph.py").write_text('NAME = "research"\n')
    (tmp_path / "other.py").write_text('"""research"""\nX = f"{y!r} {\'gapfill\'}"\n'
                                       'Z = {"synthesis": 1}\n')
    assert spellings(tmp_path) == Counter({"other.py": 2})
    assert spellings(tmp_path, allowed=False) == Counter({"other.py": 2, "graph.py": 1})


if __name__ == "__main__":
    everything = spellings(allowed=False)
    for name, count in everything.most_common():
        print(f"{count:4} {name}")
    print(f"{sum(everything.values())} in {len(everything)} files "
          f"(outside the declaration and the allowed words: {sum(spellings().values())})")
    sys.exit(0)
