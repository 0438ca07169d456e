"""The plugin flow with the real claude as the main session (and the real sub-agents), offline
against the scripted model server, started the ways people start Claude Code from scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .helpers import Terminal
from .server import ScriptedServer

pytestmark = pytest.mark.realcli
REPO = Path(__file__).resolve().parents[2]
# Consecutive runs per way of starting claude: the race this guards against (a Stop hook that
# fired before the transcript existed) lost 4 runs of 5. COUNCIL_PLUGIN_RUNS=10 for a soak.
RUNS = int(os.environ.get("COUNCIL_PLUGIN_RUNS") or 5)
MODES = {
    "json": ["--output-format", "json"],
    "text": ["--output-format", "text"],
    "json-no-persistence": ["--output-format", "json", "--no-session-persistence"],
    "stream-json": ["--output-format", "stream-json", "--verbose"],
}


def test_claude_validates_the_plugin(cli_env: dict[str, str], tmp_path: Path) -> None:
    proc = subprocess.run(["claude", "plugin", "validate", str(REPO)], env=cli_env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def main_session(env: dict[str, str], project: Path, prompt: str, *flags: str,
                 timeout: float = 280) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["claude", "-p", prompt, "--plugin-dir", str(REPO), "--permission-mode", "acceptEdits",
         *flags], env=env, cwd=project, capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL)


def with_council(cli_env: dict[str, str]) -> dict[str, str]:
    """The hooks call the installed `council`: put this interpreter's bin first."""
    return {**cli_env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{cli_env['PATH']}"}


@pytest.mark.parametrize("mode", list(MODES))
def test_deep_research_with_the_real_claude_as_main_session(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path, mode: str) -> None:
    env = with_council(cli_env)
    for n in range(1, RUNS + 1):
        project = tmp_path / f"project-{n}"
        project.mkdir()
        proc = main_session(env, project, f"/council:deep-research --test Tides, run {n}?",
                            *MODES[mode])
        where = f"{mode} run {n} of {RUNS}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n" \
                f"{proc.stderr[-2000:]}"
        assert proc.returncode == 0, where
        research = project / "research"
        assert research.is_dir(), f"no run started; {where}"
        (run,) = [p for p in research.iterdir() if p.name[0].isdigit()]
        st: dict[str, Any] = yaml.safe_load((run / "state.yaml").read_text())
        assert st["phase"] == "done", (st.get("error"), where)
        assert st["topic"] == f"Tides, run {n}?"
        assert st["synthesizer"] == "main-session"
        for seat in ("claude", "codex", "gemini"):
            assert (run / f"{seat}-refined.md").is_file(), (seat, where)
        final = (run / "final-report.md").read_text()
        assert "3 of 3 agents contributed" in final, where
    # The main sessions wrote their reports after the hook's block, in their own conversation.
    main = [r for r in server.records("anthropic")
            if str(r.get("report_path") or "").endswith("/final-report.md")]
    assert len({r["report_path"] for r in main}) == RUNS


def test_a_bad_request_is_refused_before_the_model_is_asked(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    proc = main_session(with_council(cli_env), tmp_path,
                        "/council:deep-research --test --mode vibes Tides?",
                        "--output-format", "json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert "Research council not started: " in result["result"]
    assert "--mode must be one of exploratory, compliance, decision" in result["result"]
    assert result["num_turns"] == 0
    assert not server.records("anthropic")
    assert not (tmp_path / "research").exists()


def test_an_unrelated_session_ends_normally_beside_a_pending_request(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    env = with_council(cli_env)
    # Another session of this project typed the command and has not stopped yet.
    other = {"session_id": "other-session", "prompt_id": "p-1", "cwd": str(tmp_path),
             "hook_event_name": "UserPromptSubmit",
             "prompt": "/council:deep-research --test Tides?"}
    subprocess.run([sys.executable, "-m", "council", "hook", "prompt"], cwd=tmp_path,
                   env={**env, "CLAUDE_PROJECT_DIR": str(tmp_path)}, input=json.dumps(other),
                   text=True, check=True, timeout=60)
    for flags in MODES.values():
        proc = main_session(env, tmp_path, "What is 2+2?", *flags, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "OK." in proc.stdout
    assert not [p for p in (tmp_path / "research").iterdir() if p.name[0].isdigit()]
    (pending,) = json.loads(
        (tmp_path / "research" / ".sessions" / "other-session.json").read_text())["requests"]
    assert pending["status"] == "pending"


@pytest.mark.timeout(300)
def test_deep_research_in_an_interactive_session(
        cli_env: dict[str, str], server: ScriptedServer, tmp_path: Path) -> None:
    """A person at a terminal: claude's interactive UI in tmux, the command typed in."""
    env = with_council(cli_env)
    project = tmp_path / "project"
    project.mkdir()
    # What a first interactive start would ask once: onboarding, the API key, folder trust.
    (Path(env["HOME"]) / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True, "theme": "dark",
        "customApiKeyResponses": {"approved": [env["ANTHROPIC_API_KEY"][-20:]],
                                  "rejected": []},
        "projects": {str(project): {"hasTrustDialogAccepted": True,
                                    "hasCompletedProjectOnboarding": True}}}))
    term = Terminal("claude", ["claude", "--plugin-dir", str(REPO), "--permission-mode",
                               "acceptEdits"], cwd=project, env=env)
    try:
        assert term.shows("accept edits on", 30), term.screen
        term.type("/council:deep-research --test Tides at a terminal?")
        assert term.shows(r"Stop says: Research council \S+ done", 240), term.screen
    finally:
        term.close()
    screen = term.screen
    (run,) = [p for p in (project / "research").iterdir() if p.name[0].isdigit()]
    st: dict[str, Any] = yaml.safe_load((run / "state.yaml").read_text())
    assert st["phase"] == "done", (st.get("error"), screen)
    assert f"Research council {run.name} done" in screen
    for seat in ("claude", "codex", "gemini"):
        assert (run / f"{seat}-refined.md").is_file()
    assert "3 of 3 agents contributed" in (run / "final-report.md").read_text()
