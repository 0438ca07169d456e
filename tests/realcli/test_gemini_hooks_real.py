"""The real gemini 0.61 and what it takes from around an agent's folder: a project's `.env`
(a trusted gemini loads the first one it finds walking up, into its hooks' environment) and
the user's ~/.bashrc (its `bash -c` hook shell, with a socket on stdin, sources it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .server import MARKER, ScriptedServer

pytestmark = pytest.mark.realcli


def test_a_bashrc_banner_and_a_project_env_leave_gemini_s_loop_alone(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """A .bashrc that prints a banner used to end every gemini phase after one turn (the
    banner came before the hook's JSON); a project .env that points PYTHONPATH at the
    repository's own code ran that code in council's hook, as the user. Neither now."""
    (Path(cli_env["HOME"]) / ".bashrc").write_text("echo 'Welcome back!'\n")
    witness, repo_code = tmp_path / "repository-code-ran", tmp_path / "repo-code"
    repo_code.mkdir()
    (repo_code / "sitecustomize.py").write_text(f"open({str(witness)!r}, 'a').write('x')\n")
    (tmp_path / ".env").write_text(f"PYTHONPATH={repo_code}\nFROM_DOTENV=1\n")
    server.script = {"gemini": {"finish_after": 2}}
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", "--agents", "gemini", "Tides?"],
        env={**cli_env, "COUNCIL_RESEARCH_DIR": str(tmp_path / "research")}, cwd=tmp_path,
        capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = [p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit()]
    state: dict[str, Any] = yaml.safe_load((run / "state.yaml").read_text())
    research = state["agents"]["gemini"]["phases"]["research"]
    assert (research["status"], research["iteration"]) == ("complete", 2), research
    assert (run / "gemini-report.md").read_text().rstrip().endswith(MARKER)
    # The hook's deny went on in the same process: a new user turn after the first write.
    assert any(r["t"] >= 1 and not r["last_is_tool_result"] for r in server.records("gemini"))
    assert not witness.exists()
    stderr = (run / "logs" / "gemini-research.stderr.log").read_text()
    assert "Welcome back!" not in stderr  # gemini says "Hook system message: <banner>"
