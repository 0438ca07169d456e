"""Contained agents: with the real CLIs, an agent whose model asks to write outside its own
folder (the run folder, state.yaml, the user's project root, the temp dir) is refused by the
CLI's own permission mechanism, and the run still completes (issue 13, docs/containment.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .server import HOSTILE, ScriptedServer

pytestmark = pytest.mark.realcli


def test_agents_cannot_write_outside_their_folders(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    temp = Path(cli_env["TMPDIR"])
    targets = {
        "run folder (../../x)": "{dir}/../../x",
        "state.yaml": "{dir}/../../state.yaml",
        "project root": str(project / "x"),
        "temp dir": str(temp / "x"),
    }
    script = {"finish_after": 1, "hostile": list(targets.values())}
    server.script = {"anthropic": script, "openai": script, "gemini": script}
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", "--agents", "claude,codex,gemini",
         "Tides?"], env=cli_env, cwd=project, capture_output=True, text=True, timeout=240,
        stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = [p for p in (project / "research").iterdir() if p.name[0].isdigit()]
    st: dict[str, Any] = yaml.safe_load((run / "state.yaml").read_text())
    assert st["phase"] == "done"
    assert "3 of 3 agents contributed" in (run / "final-report.md").read_text()
    # Every CLI was asked for every hostile write, and none of them landed.
    for api in ("anthropic", "openai", "gemini"):
        asked = [r["answer"] for r in server.records(api)
                 if str(r.get("answer", "")).startswith("hostile write")]
        assert len(asked) >= len(targets), (api, asked)
    written = [p for p in (run / "x", project / "x", temp / "x") if p.exists()]
    assert not written, [(p, p.read_text()) for p in written]
    assert HOSTILE not in (run / "state.yaml").read_text()
