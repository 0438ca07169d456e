"""The loop hook as the CLIs call it: a process with the CLI's JSON payload on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from council.config import Overrides, load_options
from council.loop import MARKER
from council.state import load_state, update_state
from council.supervisor import start_run

CLAUDE_PAYLOAD = {
    "session_id": "0e7c2c64", "transcript_path": "/t.jsonl", "cwd": "/w", "prompt_id": "p",
    "permission_mode": "acceptEdits", "effort": {"level": "high"}, "hook_event_name": "Stop",
    "stop_hook_active": False, "last_assistant_message": "Draft done.",
    "background_tasks": [], "session_crons": [],
}
GEMINI_PAYLOAD = {
    "session_id": "87d7", "transcript_path": "/t.jsonl", "cwd": "/w",
    "hook_event_name": "AfterAgent", "timestamp": "2026-11-21T23:27:13.665Z",
    "prompt": "Research B", "prompt_response": "Draft 1 written.", "stop_hook_active": False,
}


@pytest.fixture
def run(tmp_path: Path) -> Path:
    root = start_run("topic", load_options(Overrides()), tmp_path / "research").root

    def running(state: object) -> None:
        rec = state.agents["claude"].phase("research")  # type: ignore[attr-defined]
        rec.status, rec.iteration, rec.max_iterations = "running", 1, 3

    update_state(root, running)
    (root / "continue.md").write_text("Keep going.")
    return root


def hook(root: Path, cli: str, stdin: str) -> tuple[int, str, str]:
    report = root / "agents" / "claude" / "claude-report.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "council", "hook", cli, "--run-dir", str(root), "--seat",
         "claude", "--phase", "research", "--report", str(report), "--instructions",
         str(root / "continue.md")],
        input=stdin, capture_output=True, text=True, timeout=30,
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_claude_hook_blocks_until_the_cap(run: Path) -> None:
    code, out, _ = hook(run, "claude", json.dumps(CLAUDE_PAYLOAD))
    assert code == 0
    reply = json.loads(out)
    assert reply["decision"] == "block"
    assert reply["reason"].startswith("Iteration 2 of 3.")
    assert "Keep going." in reply["reason"]
    assert load_state(run).agents["claude"].phases["research"].iteration == 2
    assert "research claude iteration 2/3" in (run / "progress.log").read_text()

    hook(run, "claude", json.dumps({**CLAUDE_PAYLOAD, "stop_hook_active": True}))
    code, out, _ = hook(run, "claude", json.dumps({**CLAUDE_PAYLOAD, "stop_hook_active": True}))
    assert (code, out) == (0, "")  # iteration 3 of 3: the stop is allowed
    assert "reached its cap of 3" in (run / "progress.log").read_text()


def test_claude_hook_allows_the_stop_on_the_marker(run: Path) -> None:
    report = run / "agents" / "claude" / "claude-report.md"
    report.parent.mkdir(parents=True)
    report.write_text(f"# R\n{MARKER}\n")
    code, out, _ = hook(run, "claude", json.dumps(CLAUDE_PAYLOAD))
    assert (code, out) == (0, "")
    assert load_state(run).agents["claude"].phases["research"].iteration == 1


def test_gemini_hook_denies_then_allows(run: Path) -> None:
    _, out, _ = hook(run, "gemini", json.dumps(GEMINI_PAYLOAD))
    assert json.loads(out)["decision"] == "deny"
    report = run / "agents" / "claude" / "claude-report.md"
    report.write_text(f"done\n{MARKER}")
    code, out, _ = hook(run, "gemini", json.dumps(GEMINI_PAYLOAD))
    assert code == 0
    assert json.loads(out) == {"decision": "allow"}


@pytest.mark.parametrize("stdin", ["", "not json {", "\x00\x01", "[1, 2]"])
def test_malformed_stdin_lets_the_stop_happen(run: Path, stdin: str) -> None:
    code, out, _ = hook(run, "claude", stdin)
    assert code == 0
    assert "decision" not in out


def test_a_broken_run_dir_lets_the_stop_happen(run: Path) -> None:
    (run / "state.yaml").write_text("::: not yaml [")
    code, out, err = hook(run, "claude", json.dumps(CLAUDE_PAYLOAD))
    assert (code, out) == (0, "")
    assert "council hook:" in err
    code, out, err = hook(run, "gemini", json.dumps(GEMINI_PAYLOAD))
    assert json.loads(out)["decision"] == "allow"
    assert "council hook error" in json.loads(out)["systemMessage"]


def test_hook_never_continues_a_cancelled_run(run: Path) -> None:
    update_state(run, lambda s: setattr(s, "phase", "cancelled"))
    code, out, _ = hook(run, "claude", json.dumps(CLAUDE_PAYLOAD))
    assert (code, out) == (0, "")


def test_bad_hook_arguments_exit_zero() -> None:
    proc = subprocess.run([sys.executable, "-m", "council", "hook", "claude", "--oops"],
                          input="{}", capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    assert "usage" in proc.stderr
