"""The plugin flow with the real claude as the main session (and the real sub-agents), offline
against the scripted model server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .server import ScriptedServer

pytestmark = pytest.mark.realcli
REPO = Path(__file__).resolve().parents[2]


def test_claude_validates_the_plugin(cli_env: dict[str, str], tmp_path: Path) -> None:
    proc = subprocess.run(["claude", "plugin", "validate", str(REPO)], env=cli_env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_deep_research_with_the_real_claude_as_main_session(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {**cli_env, "PATH": f"{Path(sys.executable).parent}:{cli_env['PATH']}"}
    proc = subprocess.run(
        ["claude", "-p", "/council:deep-research --test How do tides work?",
         "--plugin-dir", str(REPO), "--permission-mode", "acceptEdits",
         "--output-format", "stream-json", "--verbose", "--include-hook-events"],
        env=env, cwd=project, capture_output=True, text=True, timeout=280,
        stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    init = events[0]
    assert "council:deep-research" in init["slash_commands"]
    research = project / "research"
    (run,) = [p for p in research.iterdir() if p.name[0].isdigit()]
    st: dict[str, Any] = yaml.safe_load((run / "state.yaml").read_text())
    assert st["phase"] == "done", st.get("error")
    assert st["topic"] == "How do tides work?"
    assert st["synthesizer"] == "main-session"
    final = (run / "final-report.md").read_text()
    assert "3 of 3 agents contributed" in final
    # The main session wrote the report after the hook's block, in its own conversation.
    main = [r for r in server.records("anthropic")
            if str(r.get("report_path") or "").endswith("/final-report.md")]
    assert main, "the main session never saw the synthesis instructions"
