"""The loop hook as the CLIs call it: a process with the CLI's JSON payload on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from council.agents.base import HOOK_ENTRY
from council.loop import MARKER, read_loop, write_loop

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
    root = tmp_path / "run"
    (root / "agents" / "claude").mkdir(parents=True)
    write_loop(root / "loop.json", 1, 3, active=True)
    (root / "continue.md").write_text("Keep going.")
    return root


def report(root: Path) -> Path:
    return root / "agents" / "claude" / "claude-report.md"


def hook(root: Path, cli: str, stdin: str, *extra: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-P", str(HOOK_ENTRY), "hook", cli, "--run-dir", str(root), "--seat",
         "claude", "--phase", "research", "--report", str(report(root)), "--loop",
         str(root / "loop.json"), "--instructions", str(root / "continue.md"), *extra],
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
    assert read_loop(run / "loop.json")[0] == 2
    assert (run / "progress.log").read_text().endswith(" research claude iteration 2/3\n")

    hook(run, "claude", json.dumps({**CLAUDE_PAYLOAD, "stop_hook_active": True}))
    code, out, _ = hook(run, "claude", json.dumps({**CLAUDE_PAYLOAD, "stop_hook_active": True}))
    assert (code, out) == (0, "")  # iteration 3 of 3: the stop is allowed
    assert "reached its cap of 3" in (run / "progress.log").read_text()
    assert read_loop(run / "loop.json")[0] == 3


def test_claude_hook_allows_the_stop_on_the_marker(run: Path) -> None:
    report(run).write_text(f"# R\n{MARKER}\n")
    code, out, _ = hook(run, "claude", json.dumps(CLAUDE_PAYLOAD))
    assert (code, out) == (0, "")
    assert read_loop(run / "loop.json")[0] == 1
    assert "marked its report complete after iteration 1/3" in (run / "progress.log").read_text()


def test_gemini_hook_denies_then_allows(run: Path) -> None:
    _, out, _ = hook(run, "gemini", json.dumps(GEMINI_PAYLOAD))
    assert json.loads(out)["decision"] == "deny"
    report(run).write_text(f"done\n{MARKER}")
    code, out, _ = hook(run, "gemini", json.dumps(GEMINI_PAYLOAD))
    assert code == 0
    assert json.loads(out) == {"decision": "allow"}


@pytest.mark.parametrize("stdin", ["", "not json {", "\x00\x01", "[1, 2]", "{}"])
def test_malformed_stdin_lets_the_stop_happen(run: Path, stdin: str) -> None:
    code, out, _ = hook(run, "claude", stdin)
    assert (code, out) == (0, "")
    assert read_loop(run / "loop.json")[0] == 1


def test_a_broken_loop_file_lets_the_stop_happen(run: Path) -> None:
    (run / "loop.json").write_text("::: not a loop file [")
    code, out, err = hook(run, "claude", json.dumps(CLAUDE_PAYLOAD))
    assert (code, out) == (0, "")
    assert "council hook:" in err
    code, out, err = hook(run, "gemini", json.dumps(GEMINI_PAYLOAD))
    assert json.loads(out)["decision"] == "allow"
    assert "council hook error" in json.loads(out)["systemMessage"]


def test_hook_never_continues_an_inactive_loop(run: Path) -> None:
    write_loop(run / "loop.json", 1, 3, active=False)  # finished, failed or cancelled
    code, out, _ = hook(run, "claude", json.dumps(CLAUDE_PAYLOAD))
    assert (code, out) == (0, "")


@pytest.mark.parametrize("args", [["claude", "--oops"], ["codex"], ["claude", "--seat", "x"]])
def test_bad_hook_arguments_exit_zero(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "council", "hook", *args],
                          input="{}", capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "usage" in proc.stderr


def test_hook_imports_stay_cheap(run: Path) -> None:
    """Hooks run after every agent turn: no yaml, click, anyio or jinja2 on their path."""
    code = ("import sys, runpy; sys.argv = ['council', 'hook'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('council', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "heavy = {'yaml', 'click', 'anyio', 'jinja2', 'dataclasses', 'pathlib', 'psutil',"
            " 'json', 're', 'typing'}\n"
            "print(sorted(heavy & set(sys.modules)))")
    proc = subprocess.run(
        [sys.executable, "-c", code, "claude", "--run-dir", str(run), "--seat", "claude",
         "--phase", "research", "--report", str(report(run)), "--loop", str(run / "loop.json"),
         "--instructions", str(run / "continue.md")],
        input=json.dumps(CLAUDE_PAYLOAD), capture_output=True, text=True, timeout=30)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr


@pytest.mark.parametrize(
    "text",
    ["plain", 'quote " and \\ backslash', "tab\tnewline\n\r\x00\x1f\x7f", "ünï 研究 🦉",
     "\u2028\u2029", "</script>{{ x }}"],
)
def test_json_string_is_what_json_reads_back(text: str) -> None:
    from council.hook import render
    from council.progress import json_object

    assert json.loads(json_object({"reason": text})) == {"reason": text}
    assert json.loads(render("claude", text)) == {"decision": "block", "reason": text}
    assert json.loads(render("gemini", None, error=text))["decision"] == "allow"
