"""Test doubles for the ``claude``, ``codex`` and ``gemini`` CLIs.

Put :data:`FAKES_BIN` first on ``PATH``; script behaviour with ``COUNCIL_FAKE_SCRIPT``
(see :func:`write_script`) and read what the fakes did with :func:`read_fake_log`.
The contract is documented in ``tests/fakes/README.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FAKES_BIN: Path = Path(__file__).resolve().parent / "bin"
MARKER = "<!-- RESEARCH_COMPLETE -->"

# Variables that change the fakes' (and the real CLIs') behaviour; dropped by fake_env().
_HERMETIC_DROP = (
    "COUNCIL_FAKE_SCRIPT", "COUNCIL_FAKE_LOG", "IS_SANDBOX", "CLAUDE_CODE_BUBBLEWRAP",
    "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "CLAUDECODE", "GEMINI_CLI_TRUST_WORKSPACE",
    "GEMINI_CLI_NO_RELAUNCH", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GEMINI_MODEL",
)  # fmt: skip


def write_script(path: str | os.PathLike[str], mapping: Mapping[str, Any]) -> Path:
    """Write a behaviour mapping (key -> behaviour dict) for ``COUNCIL_FAKE_SCRIPT``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(mapping, indent=2), encoding="utf-8")
    return target


def read_fake_log(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Parse the JSON-lines log written by the fakes (``COUNCIL_FAKE_LOG``); [] if absent."""
    source = Path(path)
    if not source.exists():
        return []
    lines = source.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def fake_env(
    home: str | os.PathLike[str],
    *,
    script: str | os.PathLike[str] | None = None,
    log: str | os.PathLike[str] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """An environment with the fakes first on PATH and throwaway homes under ``home``."""
    root = Path(home)
    env = dict(os.environ if base is None else base)
    for key in _HERMETIC_DROP:
        env.pop(key, None)
    env["PATH"] = f"{FAKES_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(root)
    env["CODEX_HOME"] = str(root / ".codex")
    env["GEMINI_CLI_HOME"] = str(root)
    for key, value in (("COUNCIL_FAKE_SCRIPT", script), ("COUNCIL_FAKE_LOG", log)):
        if value is not None:
            env[key] = str(value)
    return env
