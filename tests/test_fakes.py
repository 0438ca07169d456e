"""The fake agent CLIs in tests/fakes speak the protocols described for the real ones."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fakes import FAKES_BIN, MARKER, fake_env, read_fake_log, write_script

HOOK = r'''
import json, os, sys
payload = json.load(sys.stdin)
log = os.environ["HOOK_LOG"]
calls = sum(1 for _ in open(log)) if os.path.exists(log) else 0
names = ("CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID", "CLAUDECODE", "GEMINI_PROJECT_DIR",
         "GEMINI_SESSION_ID", "HOOK_FROM_SETTINGS", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA")
with open(log, "a") as fh:
    fh.write(json.dumps({"payload": payload, "env": {k: os.environ.get(k) for k in names}}) + "\n")
if calls < int(os.environ.get("HOOK_BLOCKS", "0")):
    decision = os.environ.get("HOOK_DECISION", "block")
    reason = os.environ.get("HOOK_REASON", f"more {calls}")
    print(json.dumps({"decision": decision, "reason": reason}))
'''
CLAUDE_KEYS = ["session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "effort",
               "hook_event_name", "stop_hook_active", "last_assistant_message",
               "background_tasks", "session_crons"]
GEMINI_KEYS = ["session_id", "transcript_path", "cwd", "hook_event_name", "timestamp", "prompt",
               "prompt_response", "stop_hook_active"]
Json = dict[str, Any]


class Agent:
    """One seat directory, a throwaway home, a hook script and the fakes' log."""

    def __init__(self, tmp_path: Path, seat: str) -> None:
        self.cwd = tmp_path / "research" / "x" / "agents" / seat
        self.cwd.mkdir(parents=True)
        self.report = self.cwd / f"{seat}-report.md"
        self.prompt = f"Research widgets.\nReport file: {self.report}\n"
        self.hook = tmp_path / "hook.py"
        self.hook.write_text(HOOK)
        self.hook_log = tmp_path / "hook.jsonl"
        self.log = tmp_path / "fake.jsonl"
        self.script = write_script(tmp_path / "script.json", {})
        self.env = fake_env(tmp_path / "home", script=self.script, log=self.log)
        self.env["HOOK_LOG"] = str(self.hook_log)
        self.settings = tmp_path / "settings.json"

    def run(
        self, *args: str, input: str | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        stdin = None if input is not None else subprocess.DEVNULL
        return subprocess.run(args, cwd=self.cwd, env={**self.env, **env}, input=input,
                              stdin=stdin, capture_output=True, text=True, timeout=30, check=False)

    def hook_calls(self) -> list[Json]:
        return read_fake_log(self.hook_log)

    def turns(self) -> list[int]:
        return [e["turn"] for e in read_fake_log(self.log) if e["event"] == "turn"]


def jsonl(text: str) -> list[Json]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def items(events: list[Json], kind: str) -> list[Json]:
    done = [e["item"] for e in events if e["type"] == "item.completed"]
    return [item for item in done if item["type"] == kind]


@pytest.fixture
def claude(tmp_path: Path) -> Agent:
    a = Agent(tmp_path, "claude")
    hook = {"type": "command", "command": f"python3 {a.hook}"}
    a.settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    return a


@pytest.fixture
def gemini(tmp_path: Path) -> Agent:
    a = Agent(tmp_path, "gemini")
    env = {"HOOK_BLOCKS": "2", "HOOK_DECISION": "deny", "HOOK_FROM_SETTINGS": "yes"}
    hook = {"name": "loop", "type": "command", "command": f"python3 {a.hook}", "env": env}
    (a.cwd / ".gemini").mkdir()
    settings = {"hooks": {"AfterAgent": [{"matcher": "*", "hooks": [hook]}]}}
    (a.cwd / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return a


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_bin_scripts_are_executable_python(cli: str) -> None:
    assert os.access(FAKES_BIN / cli, os.X_OK)
    assert (FAKES_BIN / cli).read_text().startswith("#!/usr/bin/env python3\n")


def test_claude_stop_hook_loop(claude: Agent) -> None:
    script = {"claude:research": {"finish_after": 3}, "*": {"never_finish": True}}
    write_script(claude.script, script)
    r = claude.run("claude", "-p", claude.prompt, "--settings", str(claude.settings),
                   "--permission-mode", "acceptEdits", "--output-format", "stream-json",
                   "--verbose", HOOK_BLOCKS="2")
    assert r.returncode == 0, r.stderr
    lines = jsonl(r.stdout)
    assert (lines[0]["type"], lines[0]["subtype"]) == ("system", "init")
    result = lines[-1]
    assert (result["type"], result["is_error"], result["num_turns"]) == ("result", False, 3)
    feedback = [c["text"] for x in lines if x["type"] == "user"
                for c in x["message"]["content"] if c["type"] == "text"]
    assert feedback == ["Stop hook feedback:\nmore 0", "Stop hook feedback:\nmore 1"]
    calls = claude.hook_calls()
    assert [list(c["payload"]) for c in calls] == [CLAUDE_KEYS] * 3
    assert [c["payload"]["stop_hook_active"] for c in calls] == [False, True, True]
    hook_env = calls[0]["env"]
    assert hook_env["CLAUDE_PROJECT_DIR"] == str(claude.cwd)
    assert hook_env["CLAUDE_CODE_SESSION_ID"] == result["session_id"]
    assert hook_env["CLAUDECODE"] == "1"
    text = claude.report.read_text()
    assert text.startswith("# claude report")
    assert text.count("## Turn ") == 3
    assert text.rstrip().endswith(MARKER)
    assert claude.turns() == [1, 2, 3]
    last = read_fake_log(claude.log)[-1]
    assert (last["event"], last["code"]) == ("exit", 0)


def test_claude_block_cap_after_eight_text_only_blocks(claude: Agent) -> None:
    write_script(claude.script, {"claude": {"text_only": True, "never_finish": True}})
    r = claude.run("claude", "-p", "--settings", str(claude.settings), "--permission-mode", "auto",
                   "--output-format", "json", input=claude.prompt, HOOK_BLOCKS="1000")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert (result["result"], result["terminal_reason"]) == ("", "completed")
    assert len(claude.hook_calls()) == 9  # 8 blocks honoured, the 9th overridden
    assert claude.report.read_text().count("## Turn ") == 1
    assert read_fake_log(claude.log)[0]["stdin_prompt"] is True


def test_claude_cli_errors_permissions_crash_and_resume(claude: Agent) -> None:
    assert claude.run("claude", "--version").stdout == "2.1.197 (Claude Code)\n"
    r = claude.run("claude", "-p", "hi", "--output-format", "stream-json")
    assert (r.returncode, "requires --verbose" in r.stderr) == (1, True)
    r = claude.run("claude", "-p", "hi", "--frobnicate")
    assert (r.returncode, "error: unknown option '--frobnicate'" in r.stderr) == (1, True)
    if os.getuid() == 0:
        r = claude.run("claude", "-p", "hi", "--dangerously-skip-permissions")
        assert (r.returncode, "root/sudo" in r.stderr) == (1, True)
        r = claude.run("claude", "-p", "hi", "--dangerously-skip-permissions", IS_SANDBOX="1")
        assert r.returncode == 0
    r = claude.run("claude", "-p", claude.prompt, "--output-format", "json")
    assert json.loads(r.stdout)["permission_denials"]  # default mode: the Write is denied
    assert not claude.report.exists()
    write_script(claude.script, {"claude": {"crash": True, "crash_on_turn": 1}})
    json_write = ("--output-format", "json", "--allowedTools", "Write")
    r = claude.run("claude", "-p", claude.prompt, *json_write)
    res = json.loads(r.stdout)
    assert (r.returncode, res["is_error"], res["subtype"], res["api_error_status"]) == (
        1, True, "success", 500)
    assert res["result"].startswith("API Error: 500")
    write_script(claude.script, {})
    r = claude.run("claude", "-p", claude.prompt, *json_write)
    sid = json.loads(r.stdout)["session_id"]
    assert MARKER not in claude.report.read_text()
    r = claude.run("claude", "-p", "--resume", sid, *json_write, "--", "continue")
    assert (r.returncode, json.loads(r.stdout)["session_id"]) == (0, sid)
    assert MARKER in claude.report.read_text()  # turn 2 of the session; report path remembered
    assert claude.run("claude", "-p", "x", "--resume", "no-such-id").returncode == 1


def test_claude_plugin_main_session(tmp_path: Path) -> None:
    a = Agent(tmp_path, "main")
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "demo", "version": "0.1.0"}')
    (plugin / "commands").mkdir()
    (plugin / "commands" / "hello.md").write_text(
        "---\ndescription: Say hello\nargument-hint: WORDS\nallowed-tools: Write\n---\n"
        "DEMO-TAG hello $ARGUMENTS, again: $ARGUMENTS.\n")
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hook.py").write_text(HOOK)
    hook = {"type": "command", "command": 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/hook.py"',
            "timeout": 30}
    hooks = {"hooks": {"Stop": [{"hooks": [hook]}]}}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    final = tmp_path / "out" / "final-report.md"
    env = {"HOOK_BLOCKS": "1", "HOOK_REASON": f"Synthesise now.\nReport file: {final}\nThanks."}
    stream = ("--output-format", "stream-json", "--verbose")
    r = a.run("claude", "-p", "hi", *stream, **env)  # no --plugin-dir: no plugin, no hook
    assert (r.returncode, jsonl(r.stdout)[-1]["result"], a.hook_calls()) == (0, "Acknowledged.", [])
    for prompt in ("/demo:nope x", "/nope"):
        r = a.run("claude", "-p", prompt, "--plugin-dir", str(plugin), "--output-format", "json")
        res = json.loads(r.stdout)
        assert (r.returncode, res["is_error"], res["subtype"]) == (0, False, "success")
        assert res["result"] == f"Unknown command: {prompt.split()[0]}"
    assert a.hook_calls() == []
    assert a.turns() == [1]
    r = a.run("claude", "-p", "/demo:hello some args", "--plugin-dir", str(plugin), *stream, **env)
    assert r.returncode == 0, r.stderr
    lines = jsonl(r.stdout)
    assert lines[0]["plugins"] == [{"name": "demo", "path": str(plugin), "source": "demo@inline"}]
    assert lines[0]["slash_commands"] == ["demo:hello"]
    calls = a.hook_calls()
    assert [c["payload"]["stop_hook_active"] for c in calls] == [False, True]
    assert calls[0]["payload"]["last_assistant_message"] == "Acknowledged."
    assert calls[0]["env"]["CLAUDE_PLUGIN_ROOT"] == str(plugin)
    data_dir = tmp_path / "home" / ".claude" / "plugins" / "data" / "demo-inline"
    assert calls[0]["env"]["CLAUDE_PLUGIN_DATA"] == str(data_dir)
    transcript = Path(calls[0]["payload"]["transcript_path"])
    project = "".join(ch if ch.isalnum() else "-" for ch in str(a.cwd))
    assert transcript.parent == tmp_path / "home" / ".claude" / "projects" / project
    messages = [x for x in jsonl(transcript.read_text()) if x["type"] in ("user", "assistant")]
    assert messages[0]["message"] == {"role": "user", "content": (
        "<command-message>demo:hello</command-message>\n<command-name>/demo:hello</command-name>\n"
        "<command-args>some args</command-args>\nDEMO-TAG hello some args, again: some args.\n")}
    assert messages[0]["sessionId"] == lines[-1]["session_id"]
    assert messages[1]["message"]["content"] == [{"type": "text", "text": "Acknowledged."}]
    assert messages[2]["message"]["content"] == "Stop hook feedback:\n" + env["HOOK_REASON"]
    assert messages[3]["message"]["content"][0]["input"]["file_path"] == str(final)
    assert final.read_text().startswith("# claude report\n\n## Turn 1 by claude (main)")
    log = read_fake_log(a.log)
    assert [(e["name"], e["args"]) for e in log if e["event"] == "command"] == [
        ("demo:hello", "some args")]
    turns = [(e["phase"], e["report_turn"], e["tool_call"]) for e in log if e["event"] == "turn"]
    assert turns[-2:] == [("unknown", None, False), ("synthesis", 1, True)]
    r = a.run("claude", "-p", "/demo:hello x", "--plugin-dir", str(plugin),
              "--no-session-persistence", "--output-format", "json", HOOK_BLOCKS="0")
    assert r.returncode == 0
    assert not Path(a.hook_calls()[-1]["payload"]["transcript_path"]).exists()


def test_codex_exec_then_resume_by_id(tmp_path: Path) -> None:
    a = Agent(tmp_path, "codex")
    cd = ("-C", str(a.cwd), "-s", "workspace-write")
    r = a.run("codex", "exec", "--skip-git-repo-check", *cd, "--json", a.prompt)
    assert r.returncode == 0, r.stderr
    first = jsonl(r.stdout)
    tid, done = first[0]["thread_id"], first[-1]
    assert done["type"] == "turn.completed"
    assert items(first, "file_change")[0]["changes"] == [{"path": str(a.report), "kind": "add"}]
    assert MARKER not in a.report.read_text()
    r = a.run("codex", "exec", *cd, "resume", "--skip-git-repo-check", "--json", tid, "go on")
    second = jsonl(r.stdout)
    assert (r.returncode, second[0]["thread_id"]) == (0, tid)
    assert second[-1]["usage"]["input_tokens"] > done["usage"]["input_tokens"]  # cumulative
    assert a.report.read_text().rstrip().endswith(MARKER)
    before = a.report.read_text()  # resume forgets the sandbox: without -s the write fails
    r = a.run("codex", "exec", "resume", "--skip-git-repo-check", "--json", tid, "again")
    assert (r.returncode, a.report.read_text()) == (0, before)
    assert items(jsonl(r.stdout), "command_execution")[0]["status"] == "failed"
    assert a.turns() == [1, 2, 3]


def test_codex_cli_errors_last_and_crash(tmp_path: Path) -> None:
    a = Agent(tmp_path, "codex")
    assert a.run("codex", "--version").stdout == "codex-cli 0.169.0\n"
    r = a.run("codex", "exec", "--full-auto", "--skip-git-repo-check", "hi")
    assert (r.returncode, "unexpected argument '--full-auto'" in r.stderr) == (2, True)
    r = a.run("codex", "exec", "--json", "hi")
    assert (r.returncode, "--skip-git-repo-check was not specified" in r.stderr) == (1, True)
    assert "Reading additional input from stdin..." in r.stderr
    unknown = "0199aaaa-0000-7000-8000-000000000000"
    r = a.run("codex", "exec", "resume", "--skip-git-repo-check", unknown, "x")
    assert (r.returncode, "no rollout found for thread id" in r.stderr) == (1, True)
    # --last with no thread recorded for this directory silently starts a new one
    r = a.run("codex", "exec", "resume", "--skip-git-repo-check", "--json", "--last", "x")
    assert (r.returncode, jsonl(r.stdout)[0]["type"]) == (0, "thread.started")
    write_script(a.script, {"codex:research": {"crash": True}})
    r = a.run("codex", "exec", "--skip-git-repo-check", "--json", a.prompt)
    events = jsonl(r.stdout)
    assert (r.returncode, events[-1]["type"]) == (1, "turn.failed")
    assert any(x["type"] == "error" for x in events)
    assert not a.report.exists()


def test_gemini_after_agent_loop(gemini: Agent) -> None:
    write_script(gemini.script, {"gemini": {"finish_after": 3}})
    r = gemini.run("gemini", "-y", "-o", "stream-json", "-p", gemini.prompt,
                   GEMINI_CLI_TRUST_WORKSPACE="true")
    assert r.returncode == 0, r.stderr
    events = jsonl(r.stdout)
    assert (events[0]["type"], events[-1]["type"], events[-1]["status"]) == (
        "init", "result", "success")
    assert events[-1]["stats"]["tool_calls"] == 3
    warnings = [x["message"] for x in events if x["type"] == "error"]
    assert warnings == ["Agent execution blocked: more 0", "Agent execution blocked: more 1"]
    assert "[WARNING] Agent execution blocked: more 0" in r.stderr
    calls = gemini.hook_calls()
    assert [list(c["payload"]) for c in calls] == [GEMINI_KEYS] * 3
    assert {c["payload"]["prompt"] for c in calls} == {gemini.prompt}
    assert calls[2]["payload"]["prompt_response"].count("\n") == 2  # cumulative responses
    assert calls[0]["env"]["HOOK_FROM_SETTINGS"] == "yes"
    assert calls[0]["env"]["GEMINI_SESSION_ID"] == events[0]["session_id"]
    assert gemini.report.read_text().rstrip().endswith(MARKER)


def test_gemini_trust_skip_trust_and_approval(gemini: Agent) -> None:
    r = gemini.run("gemini", "-y", "-p", gemini.prompt)
    assert (r.returncode, "not running in a trusted directory" in r.stderr) == (55, True)
    r = gemini.run("gemini", "--skip-trust", "-y", "-o", "json", "-p", gemini.prompt)
    assert (r.returncode, bool(json.loads(r.stdout)["session_id"])) == (0, True)
    assert gemini.hook_calls() == []  # workspace settings (and so hooks) not loaded
    assert gemini.report.exists()
    gemini.report.unlink()
    r = gemini.run("gemini", "-o", "json", "-p", gemini.prompt, GEMINI_CLI_TRUST_WORKSPACE="true")
    assert r.returncode == 0
    assert not gemini.report.exists()  # no approval mode: write_file is not offered
    assert gemini.run("gemini", "--version").stdout == "0.61.0\n"
    assert gemini.run("gemini", "--bogus", "-p", "x").returncode == 1


@pytest.mark.parametrize(
    ("cli", "args", "code"),
    [
        ("claude", ["-p", "--output-format", "stream-json", "--verbose"], -signal.SIGTERM),
        ("codex", ["exec", "--skip-git-repo-check", "--json"], 143),
        ("gemini", ["--skip-trust", "-o", "stream-json", "-p"], 0),
    ],
)
def test_hang_grandchild_and_sigterm(tmp_path: Path, cli: str, args: list[str], code: int) -> None:
    a = Agent(tmp_path, cli)
    write_script(a.script, {cli: {"hang": True, "spawn_grandchild": True}})
    proc = subprocess.Popen([cli, *args, a.prompt], cwd=a.cwd, env=a.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    try:
        first = json.loads(proc.stdout.readline())  # the init event, then it blocks
        assert first["type"] in ("system", "thread.started", "init")
        os.kill(int((a.cwd / "grandchild.pid").read_text()), 0)  # alive, same process group
        if cli == "gemini":  # the relaunch parent swallows SIGTERM
            os.kill(proc.pid, signal.SIGTERM)
            with pytest.raises(subprocess.TimeoutExpired):
                proc.wait(timeout=0.3)
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=10) == code
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stdout.close()
        proc.wait()
