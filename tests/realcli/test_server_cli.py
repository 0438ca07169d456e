"""Smoke tests: each real CLI, run directly (not through council) with the loop mechanism and
flags council uses, against the scripted server. They prove the server speaks each API well
enough for a full research loop, and that an API error fails each CLI fast."""

from __future__ import annotations

import json
import shlex
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from .helpers import RealClis, run_cli
from .server import MARKER, ScriptedServer

pytestmark = pytest.mark.realcli

# The flags of council/agents/*.py (their hooks are replaced by HOOK below).
CLAUDE_FLAGS = ["--permission-mode", "acceptEdits",
                "--allowedTools", "Read,Write,Edit,Glob,Grep,WebSearch,WebFetch",
                "--disallowedTools", "Bash", "--output-format", "stream-json", "--verbose"]
CODEX_COMMON = ["-s", "workspace-write", "-c", "web_search=live",
                "--disable", "unbounded_connection_retries", "--disable", "plugins"]
GEMINI_FLAGS = ["-e", "none", "--approval-mode", "auto_edit", "-o", "stream-json"]
GEMINI_ENV = {"GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "true"}

# A stand-in for `council hook`: logs each payload, blocks the first BLOCKS stops, then allows.
HOOK = """\
import json, sys
log, cli, blocks = sys.argv[1], sys.argv[2], int(sys.argv[3])
payload = json.load(sys.stdin)
with open(log, "a") as handle:
    handle.write(json.dumps(payload) + "\\n")
with open(log) as handle:
    calls = sum(1 for _ in handle)
if calls <= blocks:
    verdict = "block" if cli == "claude" else "deny"
    print(json.dumps({"decision": verdict, "reason": "Continue the research: improve the report."}))
elif cli == "gemini":
    print(json.dumps({"decision": "allow"}))
"""


def write_hook(tmp_path: Path, cli: str, blocks: int) -> tuple[str, Path]:
    """The hook's shell command and the log of the payloads it received."""
    script = tmp_path / "hook.py"
    script.write_text(HOOK, encoding="utf-8")
    log = tmp_path / f"{cli}-hook-calls.jsonl"
    argv = [sys.executable, str(script), str(log), cli, str(blocks)]
    return " ".join(shlex.quote(a) for a in argv), log


def workspace(tmp_path: Path, cli: str) -> tuple[Path, Path, Path]:
    """The agent's folder, its report path, and a prompt file naming the report."""
    cwd = tmp_path / f"{cli}-work"
    cwd.mkdir()
    report = cwd / "report.md"
    prompt = tmp_path / f"{cli}-prompt.md"
    prompt.write_text(
        "You are one member of a research council.\n"
        "----- BEGIN QUESTION -----\nHow do widgets work?\n----- END QUESTION -----\n\n"
        f"Report file: {report}\n\nWrite the report file early and keep it current.\n",
        encoding="utf-8")
    return cwd, report, prompt


def hook_calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def assert_report(report: Path, cli: str, turns: int, finished: bool) -> None:
    assert report.exists(), f"{cli} wrote no report"
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# Mock report\n")
    for k in range(1, turns + 1):
        assert f"## Turn {k}\n" in text, text
        assert f"https://example.org/{cli}/{k}" in text, text
    assert f"## Turn {turns + 1}\n" not in text, text
    assert text.rstrip().endswith(MARKER) is finished, text


def only(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [e for e in events if e.get("type") == kind]
    assert len(found) == 1, f"expected one {kind} event: {found}"
    return found[0]


def answers(server: ScriptedServer, api: str) -> list[str]:
    return [str(r.get("answer")) for r in server.records(api)]


# --------------------------------------------------------------------------- loops
def test_claude_stop_hook_loops_twice(tmp_path: Path, server: ScriptedServer,
                                      cli_env: dict[str, str], real_clis: RealClis) -> None:
    cwd, report, prompt = workspace(tmp_path, "claude")
    command, calls = write_hook(tmp_path, "claude", blocks=1)
    settings = cwd / "claude-settings-research.json"
    settings.write_text(json.dumps({"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": command, "timeout": 120}]}]}}))
    env = {**cli_env, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "7"}

    run = run_cli(["claude", "-p", "--settings", str(settings), *CLAUDE_FLAGS],
                  cwd=cwd, env=env, stdin_file=prompt)

    assert run.returncode == 0, run.describe()
    result = only(run.events(), "result")
    assert result["is_error"] is False, run.describe()
    assert_report(report, "claude", turns=2, finished=True)
    payloads = hook_calls(calls)
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    assert {p["session_id"] for p in payloads} == {result["session_id"]}
    # write, text (Stop: block), write after "Stop hook feedback", text (Stop: allow)
    assert answers(server, "anthropic") == ["tool Write turn 1", "text",
                                            "tool Write turn 2", "text"]
    sessions = {r["headers"].get("x-claude-code-session-id")
                for r in server.records("anthropic")}
    assert sessions == {result["session_id"]}


def test_codex_exec_then_resume_continues_the_thread(
        tmp_path: Path, server: ScriptedServer, cli_env: dict[str, str],
        real_clis: RealClis) -> None:
    cwd, report, prompt = workspace(tmp_path, "codex")

    first = run_cli(["codex", "exec", "--json", "--skip-git-repo-check", "-C", str(cwd),
                     *CODEX_COMMON, "-"], cwd=cwd, env=cli_env, stdin_file=prompt)

    assert first.returncode == 0, first.describe()
    thread_id = only(first.events(), "thread.started")["thread_id"]
    usage1 = only(first.events(), "turn.completed")["usage"]
    assert_report(report, "codex", turns=1, finished=False)

    # From another folder: resume must be given -C and -s again, on the exec parent.
    second = run_cli(["codex", "exec", "-C", str(cwd), *CODEX_COMMON, "resume",
                      "--skip-git-repo-check", "--json", thread_id, "continue"],
                     cwd=tmp_path, env=cli_env)

    assert second.returncode == 0, second.describe()
    assert only(second.events(), "thread.started")["thread_id"] == thread_id
    usage2 = only(second.events(), "turn.completed")["usage"]
    assert usage2["input_tokens"] > usage1["input_tokens"]  # cumulative per thread
    assert_report(report, "codex", turns=2, finished=True)
    changes = [e["item"]["changes"] for e in second.events()
               if e.get("type") == "item.completed" and e["item"].get("type") == "file_change"]
    assert changes == [[{"path": str(report), "kind": "update"}]]
    assert answers(server, "openai") == ["tool apply_patch add turn 1", "text",
                                         "tool apply_patch update turn 2", "text"]
    for record in server.records("openai"):
        assert record["headers"].get("thread-id") == thread_id
        assert record["headers"].get("session-id") == thread_id


def test_gemini_after_agent_hook_loops_twice(tmp_path: Path, server: ScriptedServer,
                                             cli_env: dict[str, str],
                                             real_clis: RealClis) -> None:
    cwd, report, prompt = workspace(tmp_path, "gemini")
    command, calls = write_hook(tmp_path, "gemini", blocks=1)
    (cwd / ".gemini").mkdir()
    (cwd / ".gemini" / "settings.json").write_text(json.dumps({"hooks": {"AfterAgent": [
        {"matcher": "*", "hooks": [{"name": "council-loop", "type": "command",
                                    "command": command, "timeout": 120000}]}]}}))

    # No -m, as council runs a seat without a model: the CLI's router asks the server first.
    run = run_cli(["gemini", *GEMINI_FLAGS], cwd=cwd, env={**cli_env, **GEMINI_ENV},
                  stdin_file=prompt)

    assert run.returncode == 0, run.describe()
    events = run.events()
    assert only(events, "result")["status"] == "success", run.describe()
    session_id = only(events, "init")["session_id"]
    assert_report(report, "gemini", turns=2, finished=True)
    payloads = hook_calls(calls)
    assert len(payloads) == 2
    assert {p["session_id"] for p in payloads} == {session_id}
    assert any(e.get("type") == "error" and "Agent execution blocked" in e.get("message", "")
               for e in events)
    main = [a for a in answers(server, "gemini") if not a.startswith("side:")]
    assert main == ["tool write_file turn 1", "text", "tool write_file turn 2", "text"]


# --------------------------------------------------------------------------- failures
FAST = 30.0


def test_claude_fails_fast_on_http_500(tmp_path: Path, server: ScriptedServer,
                                       cli_env: dict[str, str], real_clis: RealClis) -> None:
    server.script = {"anthropic": {"status": 500}}
    cwd, report, prompt = workspace(tmp_path, "claude")

    run = run_cli(["claude", "-p", *CLAUDE_FLAGS], cwd=cwd, env=cli_env, stdin_file=prompt)

    assert run.returncode == 1, run.describe()
    assert run.seconds < FAST, run.describe()
    result = only(run.events(), "result")
    # subtype still says "success": is_error is what tells.
    assert result["is_error"] is True, result
    assert result["api_error_status"] == 500, result
    assert "500" in result["result"]
    assert not report.exists()
    # CLAUDE_CODE_MAX_RETRIES=1: the request and one retry.
    assert answers(server, "anthropic") == ["status 500"] * 2


def test_codex_fails_fast_on_http_500(tmp_path: Path, server: ScriptedServer,
                                      cli_env: dict[str, str], real_clis: RealClis) -> None:
    server.script = {"openai": {"status": 500}}
    cwd, report, prompt = workspace(tmp_path, "codex")

    run = run_cli(["codex", "exec", "--json", "--skip-git-repo-check", "-C", str(cwd),
                   *CODEX_COMMON, "-"], cwd=cwd, env=cli_env, stdin_file=prompt)

    assert run.returncode == 1, run.describe()
    assert run.seconds < FAST, run.describe()
    assert only(run.events(), "turn.failed")["error"]["message"]
    assert not report.exists()
    assert set(answers(server, "openai")) == {"status 500"}


def test_gemini_fails_fast_on_http_500(tmp_path: Path, server: ScriptedServer,
                                       cli_env: dict[str, str], real_clis: RealClis) -> None:
    server.script = {"gemini": {"status": 500}}
    cwd, report, prompt = workspace(tmp_path, "gemini")

    # With -m: no router side call, whose 5 attempts ignore general.maxAttempts (~70 s).
    run = run_cli(["gemini", "-m", "gemini-2.5-pro", *GEMINI_FLAGS], cwd=cwd,
                  env={**cli_env, **GEMINI_ENV}, stdin_file=prompt)

    # -o json/stream-json exit with the HTTP status modulo 256.
    assert run.returncode == 500 % 256, run.describe()
    assert run.seconds < FAST, run.describe()
    result = only(run.events(), "result")
    assert result["status"] == "error", result
    assert "500" in json.dumps(result["error"]), result
    assert not report.exists()
    assert answers(server, "gemini") == ["status 500"]  # general.maxAttempts = 1



def test_all_three_at_once_against_one_server(tmp_path: Path, server: ScriptedServer,
                                              cli_env: dict[str, str],
                                              real_clis: RealClis) -> None:
    """As council runs them: in parallel, each in its own folder, one server for all."""
    server.script = {"anthropic": {"finish_after": 1}, "openai": {"finish_after": 1},
                     "gemini": {"finish_after": 1}}
    jobs: dict[str, tuple[list[str], Path, Path, dict[str, str]]] = {}
    for cli in ("claude", "codex", "gemini"):
        cwd, _report, prompt = workspace(tmp_path, cli)
        argv = {"claude": ["claude", "-p", *CLAUDE_FLAGS],
                "codex": ["codex", "exec", "--json", "--skip-git-repo-check", "-C", str(cwd),
                          *CODEX_COMMON, "-"],
                "gemini": ["gemini", "-m", "gemini-2.5-pro", *GEMINI_FLAGS]}[cli]
        env = {**cli_env, **GEMINI_ENV} if cli == "gemini" else cli_env
        jobs[cli] = (argv, cwd, prompt, env)

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {cli: pool.submit(run_cli, argv, cwd=cwd, env=env, stdin_file=prompt)
                   for cli, (argv, cwd, prompt, env) in jobs.items()}
        runs = {cli: future.result() for cli, future in futures.items()}

    for cli, run in runs.items():
        assert run.returncode == 0, run.describe()
        assert_report(jobs[cli][1] / "report.md", cli, turns=1, finished=True)
    assert answers(server, "anthropic") == ["tool Write turn 1", "text"]
    assert answers(server, "openai") == ["tool apply_patch add turn 1", "text"]
    assert answers(server, "gemini") == ["tool write_file turn 1", "text"]
