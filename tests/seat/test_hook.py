"""The loop hook as the CLIs call it: a process with the CLI's JSON payload on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Council

from council.agents.base import HOOK_ENTRY, AgentJob
from council.runoptions import Seat
from council.store.loop import MARKER, read_loop, write_loop

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


def hook_args(root: Path) -> list[str]:
    return ["--run-dir", str(root), "--seat", "claude", "--phase", "research", "--report",
            str(report(root)), "--loop", str(root / "loop.json"), "--instructions",
            str(root / "continue.md")]


def hook(root: Path, cli: str, stdin: str, *extra: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-I", str(HOOK_ENTRY), "hook", cli, *hook_args(root), *extra],
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
    """Hooks run after every agent turn: no yaml, click, anyio, jinja2 or structlog (the
    supervisor's events) on their path; they write events with progress.emit."""
    code = ("import sys, runpy; sys.argv = ['council', 'hook'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('council', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "heavy = {'yaml', 'click', 'anyio', 'jinja2', 'dataclasses', 'pathlib', 'psutil',"
            " 'json', 're', 'typing', 'structlog', 'council.store.events', 'tempfile'}\n"
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
    from council.seat.hook import render
    from council.store.progress import json_object

    assert json.loads(json_object({"reason": text})) == {"reason": text}
    assert json.loads(render("claude", text)) == {"decision": "block", "reason": text}
    assert json.loads(render("gemini", None, error=text))["decision"] == "allow"


def planted_python(folder: Path, witness: Path) -> None:
    """What an agent could leave in its folder for a Python started there to run as the user."""
    for name in ("sitecustomize", "usercustomize", "council"):
        body = f"open({str(witness)!r}, 'a').write({name!r} + '\\n')\n"
        if name == "council":
            (folder / name).mkdir()
            (folder / name / "__init__.py").write_text(body)
        else:
            (folder / f"{name}.py").write_text(body)


@pytest.mark.parametrize("cli", ["claude", "gemini"])
def test_the_hook_takes_nothing_from_the_agents_folder(run: Path, tmp_path: Path,
                                                       cli: str) -> None:
    """The hook command as the adapter writes it, run as the CLI runs it: in the agent's folder,
    with an empty entry in PYTHONPATH (`export PYTHONPATH=$PYTHONPATH:/x` with it unset). No
    file the agent wrote there is run, and the hook still answers."""
    folder = run / "agents" / "claude"
    witness = tmp_path / "ran"
    planted_python(folder, witness)
    (run / "loops").mkdir()
    job = AgentJob(Seat(cli, cli), "research", folder, folder / "prompt.md",
                   tuple(hook_args(run)), 3, private_dir=run / "loops")
    command = job.hook_command(cli, job.hook_home())
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": ":/nowhere",
           "PYTHONSTARTUP": str(folder / "sitecustomize.py"), "PYTHONUSERBASE": str(folder)}
    payload = json.dumps(GEMINI_PAYLOAD if cli == "gemini" else CLAUDE_PAYLOAD)
    proc = subprocess.run(["/bin/sh", "-c", command], cwd=folder, env=env, input=payload,
                          capture_output=True, text=True, timeout=30)
    assert not witness.exists(), witness.read_text()
    assert json.loads(proc.stdout)["decision"] in ("block", "deny"), proc.stderr


def test_the_hook_entry_finds_its_own_package(run: Path) -> None:
    """Not installed (a checkout on PYTHONPATH, which -I ignores) and without site-packages
    at all (-S): the entry file puts its own package root on sys.path."""
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(HOOK_ENTRY), "hook", "claude", *hook_args(run)],
        input=json.dumps(CLAUDE_PAYLOAD), capture_output=True, text=True, timeout=30)
    assert json.loads(proc.stdout)["decision"] == "block", proc.stderr


def test_a_bashrc_banner_and_a_project_env_do_not_reach_gemini_s_loop(
        council: Council, tmp_path: Path) -> None:
    """gemini runs its hook as `bash -c` with a socket on stdin, so a top-level bash sources
    ~/.bashrc, and a banner there came before the hook's JSON: gemini read an "allow" and
    stopped after one turn. And a trusted gemini loads the project's .env (here, one that
    points PYTHONPATH at the repository's own sitecustomize.py) into its hooks' environment.
    The fake gemini does both as 0.61 does."""
    home = Path(council.env["HOME"])
    (home / ".bashrc").write_text("echo 'Welcome back!'\n")
    witness = tmp_path / "ran"
    repo_code = tmp_path / "repo-code"
    repo_code.mkdir()
    planted_python(repo_code, witness)
    (council.root / ".env").write_text(f"FROM_DOTENV=1\nPYTHONPATH={repo_code}\n")
    council.script({"*": {"finish_after": 2}})  # --test: 2 iterations
    proc = council.run("run", "--test", "--agents", "gemini", "q")
    assert proc.returncode == 0, proc.stderr
    log = council.fake_log()
    hooks = [e for e in log if e["event"] == "hook"]
    assert hooks
    for event in hooks:
        assert json.loads(event["stdout"])["decision"] in ("allow", "deny"), event["stdout"]
        assert "FROM_DOTENV" not in event["env_names"]
    research = [e for e in log if e["event"] == "turn" and e["phase"] == "research"]
    assert len(research) == 2  # the loop went on to the marker, not one turn
    assert not [e for e in log if e["event"] == "dotenv" and e["names"]]
    assert not witness.exists()
