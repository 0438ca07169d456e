"""What every host's install.py shares: the plugin's name, the steps of a plan and how one
fails, where this council's host files are, and the fixes every host's doctor line can
name."""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from council.errors import CouncilError

PLUGIN = "council"
PLUGIN_ID = f"{PLUGIN}@{PLUGIN}"  # the plugin, in the marketplace of the same name


class SetupError(CouncilError):
    """A host cannot be set up as things are; the message names the fix."""


@dataclass(frozen=True)
class Step:
    argv: tuple[str, ...]
    # gemini's --consent trusts the folder it runs in: the extension's own, never the user's
    cwd: Path | None = None
    env: dict[str, str] = field(default_factory=dict)  # added to council's own


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]  # the host CLI's commands, in order; none when already set up
    did: str  # what the steps do, said once they ran


def hostfiles() -> Path | None:
    """This council's host files: council/hostfiles in an installed wheel (pyproject's
    force-include copies them there), or else the checkout an editable install runs from,
    whose root holds them in the same layout: the Claude Code plugin and its marketplace,
    the Codex marketplace, extensions/gemini and extensions/codex. None when neither has
    them (a broken install)."""
    package = Path(__file__).resolve().parents[1]
    for root in (package / "hostfiles", package.parent):
        if (root / ".claude-plugin" / "plugin.json").is_file() and \
                (root / "extensions" / "gemini" / "gemini-extension.json").is_file():
            return root
    return None


def setup_fix(host: str) -> str:
    return f"run `council setup {host}`"


def council_on_path() -> str | None:
    return shutil.which("council")


def path_fix() -> str:
    return (f"`council` is not on PATH, so no host's hooks can run it: add "
            f"{Path(sys.executable).parent} to PATH, or pip install council into an "
            "environment that is")


def json_object(path: Path) -> dict[str, Any]:
    """A JSON object file, or {} when it is missing or not plain JSON (gemini also accepts
    comments; such a file reads as no rule here)."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
