"""A model that keeps calling tools inside one turn is stopped (issue 31), with the real CLIs
offline: claude's `--max-turns` and gemini's `model.maxSessionTurns`, at TURNS_PER_ITERATION
model requests per iteration. codex 0.169 has no such cap (docs/containment.md).

The scripted model reads one file after another, more times than the cap allows, before it
would write its report. On e525b49 neither CLI had a cap: both made every call and finished."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from council.agents.base import TURNS_PER_ITERATION

from .server import ScriptedServer

pytestmark = pytest.mark.realcli

CALLS = TURNS_PER_ITERATION + 10  # tool calls the model makes before it writes its report


@pytest.mark.timeout(600)
def test_claude_and_gemini_stop_a_model_that_never_stops_calling_tools(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    # gemini's own loop detection (an LLM check from request 30) would end it first.
    settings = Path(cli_env["GEMINI_CLI_HOME"]) / ".gemini" / "settings.json"
    user = json.loads(settings.read_text())
    settings.write_text(json.dumps({**user, "model": {"disableLoopDetection": True}}))
    reads = {"finish_after": 1, "probe": [f"{{dir}}/missing-{i}.txt" for i in range(CALLS)]}
    server.script = {
        "anthropic": {"finish_after": 1, "reports": {"claude-report.md": reads}},
        "gemini": {"finish_after": 1, "reports": {"gemini-report.md": reads}},
        "openai": {"finish_after": 1},
    }
    proc = subprocess.run(
        [sys.executable, "-m", "council", "run", "--test", "--max-iterations", "1", "Tides?"],
        env={**cli_env, "COUNCIL_RESEARCH_DIR": str(tmp_path / "research")}, cwd=tmp_path,
        capture_output=True, text=True, timeout=420, stdin=subprocess.DEVNULL)
    assert proc.returncode == 3, proc.stderr[-3000:]  # done without claude and gemini
    (run,) = [p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit()]
    research = {seat: rec["phases"]["research"]
                for seat, rec in yaml.safe_load((run / "state.yaml").read_text())["agents"].items()}
    for api, report in (("anthropic", "claude-report.md"), ("gemini", "gemini-report.md")):
        made = [r for r in server.records(api)
                if str(r.get("report_path") or "").endswith(report)]
        assert len(made) == TURNS_PER_ITERATION, (api, len(made))  # 1 iteration's worth
        assert all(str(r.get("answer", "")).startswith("probe ") for r in made), api
    assert research["claude"]["status"] == "failed"
    assert "Reached maximum number of turns (50)" in research["claude"]["error"]
    assert research["gemini"]["status"] == "failed"
    assert "exited with code 53 (turn limit exceeded)" in research["gemini"]["error"]
    assert research["codex"]["status"] == "complete"  # the run went on without them
