"""council as an MCP server of the real `claude -p`, registered with `--mcp-config`, offline:
the scripted model calls start_research, waits with research_status, and reads get_report;
the run is the real three-CLI council, supervised apart from the MCP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import wait_for

from .helpers import processes_in, run_cli
from .server import FINAL_TEXT, ScriptedServer

pytestmark = pytest.mark.realcli
TOOLS = ("start_research", "research_status", "get_report")


def test_claude_starts_a_council_over_mcp_and_reads_its_report(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    council = Path(sys.executable).parent / "council"
    env = {**cli_env, "PATH": f"{council.parent}{os.pathsep}{cli_env['PATH']}"}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"council": {
        "command": str(council), "args": ["mcp"], "env": env}}}))
    server.script = {"anthropic": {"tool_calls": [
        {"tool": "mcp__council__start_research",
         "args": {"topic": "How do tides work?", "test": True}},
        {"tool": "mcp__council__research_status", "args": {"run_id": "{run_id}", "wait": 30},
         "until": r'"phase": ?"done"|: done \(100%\)'},
        {"tool": "mcp__council__get_report", "args": {"run_id": "{run_id}"}}]}}

    run = run_cli(["claude", "-p", "Research how tides work with the council.",
                   "--mcp-config", str(config), "--strict-mcp-config",
                   "--allowedTools", ",".join(f"mcp__council__{t}" for t in TOOLS),
                   "--output-format", "json"], cwd=project, env=env, timeout=240)
    assert run.returncode == 0, run.describe()
    assert json.loads(run.stdout)["result"] == FINAL_TEXT, run.describe()

    (folder,) = [p for p in (project / "research").iterdir() if p.name[0].isdigit()]
    state: dict[str, Any] = yaml.safe_load((folder / "state.yaml").read_text())
    assert state["phase"] == "done", state.get("error")
    assert state["topic"] == "How do tides work?"
    for seat in ("claude", "codex", "gemini"):
        assert (folder / f"{seat}-refined.md").is_file(), seat
    final = (folder / "final-report.md").read_text()
    assert "3 of 3 agents contributed" in final

    # Calls of council's tools (claude may offer WaitForMcpServers first, while the server
    # starts; the scripted model then waits, as a model that needs the tools would).
    main = [r for r in server.records("anthropic") if r.get("report_path") is None
            and str(r.get("answer", "")).startswith("tool_call mcp__council__")]
    called = [r["answer"].split()[1] for r in main]
    assert called[0] == "mcp__council__start_research"
    assert called[-1] == "mcp__council__get_report"
    assert set(called[1:-1]) == {"mcp__council__research_status"}
    assert all(folder.name in r["answer"] for r in main[1:])  # the run start_research made
    (done,) = [r for r in server.records("anthropic") if r.get("answer") == "tool_calls done"]
    assert final.splitlines()[0] in done["tool_result"]  # get_report gave the model the report

    # The MCP server ended with claude; the run's supervisor with the run.
    wait_for(lambda: not processes_in(project), timeout=30)


def test_a_third_start_research_at_once_is_refused_naming_the_two_active(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """The real claude, as an MCP client whose model keeps starting runs: the machine runs
    at most max_runs (2 by default) at once, so the third start_research is a tool error
    naming the two active runs, and makes no run folder. The runs' real codex seats wait on
    a model that answers in two minutes, so both stay active."""
    project = tmp_path / "project"
    project.mkdir()
    council = Path(sys.executable).parent / "council"
    env = {**cli_env, "PATH": f"{council.parent}{os.pathsep}{cli_env['PATH']}"}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"council": {
        "command": str(council), "args": ["mcp"], "env": env}}}))
    start = "mcp__council__start_research"
    server.script = {"openai": {"delay": 120}, "anthropic": {"tool_calls": [
        {"tool": start, "args": {"topic": "How do tides work?", "test": True,
                                 "agents": ["codex"]}},
        {"tool": start, "args": {"topic": "Why is the sky blue?", "test": True,
                                 "agents": ["codex"]}},
        # Until both have a supervisor (which holds its run slot before its run).
        {"tool": "mcp__council__list_research", "args": {},
         "until": r'(?s)"phase": ?"research".*"phase": ?"research"'},
        {"tool": start, "args": {"topic": "And the wind?", "test": True,
                                 "agents": ["codex"]}}]}}
    research = project / "research"
    try:
        run = run_cli(["claude", "-p", "Research three questions with the council.",
                       "--mcp-config", str(config), "--strict-mcp-config",
                       "--allowedTools", f"{start},mcp__council__list_research",
                       "--output-format", "json"], cwd=project, env=env, timeout=240)
        assert run.returncode == 0, run.describe()
        folders = sorted(p for p in research.iterdir() if p.name[0].isdigit())
        assert len(folders) == 2, folders  # the third made none
        (done,) = [r for r in server.records("anthropic")
                   if r.get("answer") == "tool_calls done"]
        refusal = str(done["tool_result"])
        assert "2 council runs are already active on this machine, which allows 2 at once" \
            in refusal, refusal
        for folder in folders:
            assert f"{folder.name} in {folder}" in refusal
            assert yaml.safe_load((folder / "state.yaml").read_text())["phase"] == "research"
    finally:
        for folder in (sorted(research.iterdir()) if research.is_dir() else []):
            if folder.name[0].isdigit():
                subprocess.run([sys.executable, "-m", "council", "cancel", folder.name,
                                "--research-dir", str(research)], env=env, cwd=project,
                               capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    wait_for(lambda: not processes_in(project), timeout=60)
