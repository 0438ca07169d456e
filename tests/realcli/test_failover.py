"""The failure kind drives what happens next (council/seat/failover.py), with the real CLIs
offline: an auth failure drops the seat for the rest of the run, a rate limit is retried
after a pause, and a seat with a fallback CLI moves to it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .server import ScriptedServer

pytestmark = pytest.mark.realcli


def council_run(env: dict[str, str], project: Path, *args: str, code: int = 0
                ) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "council", "run", "--test", *args, "Tides?"],
                          env=env, cwd=project, capture_output=True, text=True, timeout=240,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == code, proc.stderr[-3000:]  # 3: done without a seat
    (run,) = [p for p in (project / "research").iterdir() if p.name[0].isdigit()]
    st: dict[str, Any] = yaml.safe_load((run / "state.yaml").read_text())
    st["_run"] = run
    return st


def test_an_auth_failure_is_not_retried_in_later_phases(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    server.script = {"anthropic": {"status": 401}, "openai": {"finish_after": 1},
                     "gemini": {"finish_after": 1}}
    st = council_run(cli_env, tmp_path, "--verify", "--debate", "off", code=3)
    run: Path = st["_run"]
    assert st["phase"] == "done"
    assert st["dropped"]["claude"].startswith("auth: ")
    # Asked once, in the scope phase; never started again.
    assert set(st["agents"]["claude"]["phases"]) == {"scope"}
    asked = len(server.records("anthropic"))
    assert asked <= 2  # one claude process: its request and its own single retry
    log = (run / "progress.log").read_text()
    assert "scope claude dropped for the rest of the run (auth: " in log
    assert "log in with `claude` then /login, or set ANTHROPIC_API_KEY" in log
    assert "2 of 3 agents contributed (codex, gemini)" in (run / "final-report.md").read_text()


def test_a_rate_limit_is_retried_after_a_pause(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    # claude's own retry (one, here) meets the 429 too; council's first retry gets through.
    server.script = {"anthropic": {"status": 429, "status_count": 2, "retry_after": 1,
                                   "finish_after": 1},
                     "openai": {"finish_after": 1}, "gemini": {"finish_after": 1}}
    st = council_run(cli_env, tmp_path)
    run: Path = st["_run"]
    log = (run / "progress.log").read_text()
    # claude's own retry waited the vendor's retry-after: council's retry is the second.
    assert "research claude rate limited by the vendor: retrying in " in log, log
    assert "(retry 2, within the phase's " in log, log
    assert st["agents"]["claude"]["phases"]["research"]["status"] == "complete"
    assert not st.get("dropped")
    assert "3 of 3 agents contributed" in (run / "final-report.md").read_text()


def test_a_seat_moves_to_its_fallback_cli(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    (tmp_path / "council.yaml").write_text(
        "agents:\n  claude: {cli: claude, fallback: codex}\n  codex: {cli: codex}\n"
        "  gemini: {cli: gemini}\n")
    server.script = {"anthropic": {"status": 401}, "openai": {"finish_after": 1},
                     "gemini": {"finish_after": 1}}
    st = council_run(cli_env, tmp_path, "--config", "council.yaml")
    run: Path = st["_run"]
    assert st["phase"] == "done"
    assert st["agents"]["claude"]["cli"] == "codex"
    assert st["agents"]["claude"]["phases"]["refinement"]["status"] == "complete"
    assert not st.get("dropped")
    (note,) = st["provenance"]
    assert note.startswith("the claude seat ran on codex from the research phase on, because "
                           "claude failed (auth: ")
    final = (run / "final-report.md").read_text()
    assert "3 of 3 agents contributed" in final
    assert note in final.split("## Provenance", 1)[1]
    # The seat's work was done by codex: its requests carry the seat's report path.
    assert any(str(r.get("report_path") or "").endswith("/claude-report.md")
               for r in server.records("openai"))
