"""What README and the packaging say about the project itself (issue 43, item 6): no
repository address the project does not have, and how long the test command takes."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Where the project speaks of itself: README, docs, the packaging, the plugin manifests and
# the examples a user copies.
OWN = [ROOT / "README.md", ROOT / "pyproject.toml", *sorted((ROOT / "docs").glob("*.md")),
       *sorted(p for folder in (".claude-plugin", ".agents", "extensions", "examples")
               for p in (ROOT / folder).rglob("*") if p.is_file())]
# A code host's address of a repository called council: the project names none.
ADDRESS = re.compile(r"(?:github|gitlab|codeberg|bitbucket)\.(?:com|org)[/:]"
                     r"[\w.-]+/council\b|council-dev", re.IGNORECASE)


def test_no_repository_address_is_named() -> None:
    named = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in OWN
             for m in ADDRESS.finditer(p.read_text(encoding="utf-8", errors="replace"))]
    assert not named
    assert "urls" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_readme_says_how_long_the_test_command_takes() -> None:
    test = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Test\n", 1)[1]
    found = re.search(r"The whole suite takes about (\d+) minutes on 2 cores", test)
    assert found is not None
    assert int(found.group(1)) < 6
