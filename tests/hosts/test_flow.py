"""The hosts a council starts from, through their hook entry points, with the payloads each
real CLI sends (recorded offline: Gemini CLI 0.61's BeforeAgent/AfterAgent, Codex 0.169's
UserPromptSubmit/Stop) and fake sub-agents doing the research."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Council

from council.hosts import EVENTS, HOSTS, host_for
from council.hosts.gemini import CLOSE, OPEN


def gemini_prompt(args: str) -> str:
    """What the extension's command expands `/council:deep-research ARGS` to."""
    return f"{OPEN}\n{args}\n{CLOSE}\n\nReply in one line that the research council is starting."


@pytest.mark.parametrize(("host", "prompt", "args"), [
    ("claude", "/council:deep-research --test q", " --test q"),
    ("claude", "please run /council:deep-research q", None),
    ("claude", "/council:deep-researcher q", None),
    ("codex", "$council:deep-research --test q", " --test q"),
    ("codex", "/council:deep-research q", None),
    ("gemini", gemini_prompt("--test a \"quoted\" {{x}} topic"),
     " --test a \"quoted\" {{x}} topic"),
    ("gemini", gemini_prompt("two\nlines"), " two\nlines"),
    ("gemini", f"tell me about {OPEN}", None),
    ("gemini", f"{OPEN}\nno closing marker", None),
])
def test_each_host_recognises_only_its_own_command(host: str, prompt: str,
                                                   args: str | None) -> None:
    assert host_for(host).command_args(prompt) == args


@pytest.mark.parametrize(("host", "prompt", "unrun"), [
    ("gemini", "/council:deep-research --test q", True),  # an untrusted folder: as typed
    ("gemini", "  /council:deep-research", True),
    ("gemini", gemini_prompt("--test q"), False),  # the command ran
    ("gemini", "/council:deep-researcher q", False),
    ("gemini", "what does /council:deep-research do?", False),
    ("claude", "/council:deep-research q", False),  # claude and codex always run their own
    ("codex", "/council:deep-research q", False),
])
def test_only_gemini_can_hand_a_hook_its_command_unrun(host: str, prompt: str,
                                                       unrun: bool) -> None:
    why = host_for(host).unrun_command(prompt)
    assert bool(why) is unrun
    if why:
        assert "/permissions trust" in why
        assert "--skip-trust" in why


def test_each_host_answers_in_its_own_shape() -> None:
    gemini, codex, claude = host_for("gemini"), host_for("codex"), host_for("claude")
    assert gemini.refuse("x")["decision"] == "deny"
    assert gemini.block("go on", "m") == {"decision": "deny", "reason": "go on",
                                          "systemMessage": "m"}
    assert gemini.allow() == {"decision": "allow"}
    for host in (codex, claude):
        assert host.refuse("x")["decision"] == "block"
        assert host.block("go on", "m")["decision"] == "block"
        assert host.allow() == {}
    assert {name for name, _ in EVENTS.values()} == {"claude", "gemini", "codex"}



def test_every_host_is_registered_with_its_name_and_its_install() -> None:
    """A host's name is its folder, its CLI and its `council setup` argument; host_for
    knows no other."""
    assert HOSTS == ("claude", "gemini", "codex")
    for name in HOSTS:
        assert host_for(name).name == name
        assert callable(host_for(name).install().check)
    with pytest.raises(KeyError):
        host_for("cursor")


@pytest.mark.parametrize("event", sorted(EVENTS))
def test_a_hook_that_is_not_the_command_imports_no_setup(event: str, tmp_path: Path) -> None:
    """Both hooks of every host run in every session that loads the plugin: a plain prompt,
    or a stop with no request, loads the host's hook adapter and nothing of its install or
    of `council setup`."""
    code = ("import io, json, runpy, sys\n"
            "sys.argv = ['council', 'hook', sys.argv[1]]\n"
            "sys.stdin = io.StringIO(json.dumps({'session_id': 's', 'prompt': 'hi'}))\n"
            "try:\n    runpy.run_module('council', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('council')\n"
            "      or m in ('dataclasses', 'subprocess', 'hashlib', 'tomllib'))))")
    proc = subprocess.run([sys.executable, "-c", code, event], capture_output=True, text=True,
                          env={**os.environ, "COUNCIL_RESEARCH_DIR": str(tmp_path)},
                          timeout=60)
    loaded = set(json.loads(proc.stdout.splitlines()[-1]))
    host = EVENTS[event][0]
    assert f"council.hosts.{host}" in loaded, proc.stderr
    assert not {m for m in loaded if m.endswith((".install", ".setup"))}
    assert not loaded & {"dataclasses", "subprocess", "hashlib", "tomllib"}


def hook(council: Council, event: str, payload: dict[str, Any], cwd: Path,
         **env: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "council", "hook", event],
                          input=json.dumps(payload), capture_output=True, text=True,
                          cwd=cwd, env={**council.env, **env}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


@pytest.fixture
def project(council: Council) -> Path:
    path = council.root / "project"
    path.mkdir()
    council.env.pop("COUNCIL_RESEARCH_DIR", None)
    council.script({"*": {"finish_after": 1}})
    return path


def test_a_gemini_session_runs_a_council_and_is_told_where_the_report_is(
        council: Council, project: Path) -> None:
    env = {"GEMINI_PROJECT_DIR": str(project), "GEMINI_SESSION_ID": "g-1"}
    common = {"session_id": "g-1", "cwd": str(project), "transcript_path": "",
              "timestamp": "2026-11-24T07:00:00.000Z"}
    before = {**common, "hook_event_name": "BeforeAgent",
              "prompt": gemini_prompt("--test --agents claude,codex Tides")}
    assert hook(council, "gemini-before", before, project, **env) == {}
    after = {**common, "hook_event_name": "AfterAgent", "prompt": before["prompt"],
             "prompt_response": "Research council starting.", "stop_hook_active": False}
    reply = hook(council, "gemini-after", after, project, **env)
    assert reply["decision"] == "deny"
    (run,) = [p for p in (project / "research").iterdir() if p.name[0].isdigit()]
    assert f"Its final report is the file {run / 'final-report.md'}" in reply["reason"]
    assert "2 of 2 agents contributed" in reply["reason"]
    assert (run / "report.html").is_file()
    # The session answers, stops again, and is let go; so is a later plain prompt.
    again = {**after, "prompt": reply["reason"], "stop_hook_active": True}
    assert hook(council, "gemini-after", again, project, **env) == {"decision": "allow"}
    plain = {**common, "hook_event_name": "BeforeAgent", "prompt": "What is 2+2?"}
    assert hook(council, "gemini-before", plain, project, **env) == {}
    assert hook(council, "gemini-after", {**after, "prompt": "What is 2+2?"}, project,
                **env) == {"decision": "allow"}


def test_a_bad_request_is_refused_before_the_model_is_asked(council: Council,
                                                            project: Path) -> None:
    payload = {"session_id": "c-1", "turn_id": "t-1", "cwd": str(project),
               "hook_event_name": "UserPromptSubmit",
               "prompt": "$council:deep-research --agents nosuch q"}
    reply = hook(council, "codex-prompt", payload, project)
    assert reply["decision"] == "block"
    assert reply["reason"].startswith("Research council not started: ")
    assert not (project / "research").exists() or not any(
        p.name[0].isdigit() for p in (project / "research").iterdir())
    gemini = {"session_id": "g-2", "cwd": str(project), "hook_event_name": "BeforeAgent",
              "prompt": gemini_prompt("--mode nosuch q")}
    reply = hook(council, "gemini-before", gemini, project, GEMINI_PROJECT_DIR=str(project))
    assert reply["decision"] == "deny"
    assert "--mode must be one of" in reply["reason"]
    # In an untrusted folder gemini loads no command and hands the hook the text as typed.
    untrusted = {**gemini, "prompt": "/council:deep-research --test q"}
    reply = hook(council, "gemini-before", untrusted, project, GEMINI_PROJECT_DIR=str(project))
    assert reply["decision"] == "deny"
    assert reply["reason"].startswith("Research council not started: Gemini ran no extension")
    assert not (project / "research").exists() or not any(
        p.name[0].isdigit() for p in (project / "research").iterdir())


UNTRUSTED = ("synthesizer: corp\n"
             "agents:\n  corp: {cli: codex, env: [GITHUB_TOKEN], extra_args: ['--x']}\n")


def test_an_untrusted_project_config_is_refused_by_every_host(council: Council,
                                                              project: Path) -> None:
    config = project / "council.yaml"
    config.write_text(UNTRUSTED)
    # The model is told to ask the user, and given no command to run.
    line = (f"{config} is not trusted (it sets agents corp (codex); extra_args for corp; env "
            "for corp; settings synthesizer); council obeys a project's config file only once "
            "a person has reviewed it and trusted it in their own terminal, and a model cannot "
            "do that for them: ask the user to review the file and trust it in a terminal")
    codex = {"session_id": "c-9", "turn_id": "t-1", "cwd": str(project),
             "hook_event_name": "UserPromptSubmit", "prompt": "$council:deep-research --test q"}
    assert hook(council, "codex-prompt", codex, project) == {
        "decision": "block", "reason": f"Research council not started: {line}."}
    gemini = {"session_id": "g-9", "cwd": str(project), "hook_event_name": "BeforeAgent",
              "prompt": gemini_prompt("--test q")}
    assert hook(council, "gemini-before", gemini, project, GEMINI_PROJECT_DIR=str(project)) == {
        "decision": "deny", "reason": f"Research council not started: {line}."}
    claude = {"session_id": "k-9", "prompt_id": "p-1", "cwd": str(project),
              "hook_event_name": "UserPromptSubmit", "prompt": "/council:deep-research q"}
    reply = hook(council, "prompt", claude, project, CLAUDE_PROJECT_DIR=str(project))
    assert reply["reason"] == f"Research council not started: {line}."
    # A file that appears between the prompt and the stop is refused at the stop: told once.
    config.unlink()
    assert hook(council, "codex-prompt", codex, project) == {}
    config.write_text(UNTRUSTED)
    stop = {**codex, "hook_event_name": "Stop", "stop_hook_active": False}
    reply = hook(council, "codex-stop", stop, project)
    assert reply["decision"] == "block"
    assert f"could not run: {line}\n" in reply["reason"]
    assert hook(council, "codex-stop", {**stop, "stop_hook_active": True}, project) == {}
    assert not any(p.name[0].isdigit() for p in (project / "research").iterdir())
    assert not council.fake_log()
    # Trusted, the same request is taken.
    from council.config import trust_file

    trust_file(config)
    assert hook(council, "codex-prompt", {**codex, "turn_id": "t-2"}, project) == {}


def test_a_codex_session_runs_a_council(council: Council, project: Path) -> None:
    common = {"session_id": "c-2", "turn_id": "t-1", "cwd": str(project),
              "transcript_path": None, "model": "gpt-6.1-sol"}
    prompt = {**common, "hook_event_name": "UserPromptSubmit",
              "prompt": "$council:deep-research --test --agents claude,gemini Tides"}
    assert hook(council, "codex-prompt", prompt, project) == {}
    stop = {**common, "hook_event_name": "Stop", "stop_hook_active": False,
            "last_assistant_message": "Research council starting."}
    reply = hook(council, "codex-stop", stop, project)
    assert reply["decision"] == "block"
    assert "has finished" in reply["reason"]
    assert hook(council, "codex-stop", {**stop, "stop_hook_active": True}, project) == {}
    # An unrelated codex session in the same project is never held up.
    other = {**stop, "session_id": "c-3"}
    assert hook(council, "codex-stop", other, project) == {}
    assert os.path.isfile(next((project / "research").glob("2*/final-report.md")))


ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = [ROOT / "hooks" / "council-hook.sh",
           ROOT / "extensions" / "gemini" / "hooks" / "council-hook.sh",
           ROOT / "extensions" / "codex" / "hooks" / "council-hook.sh"]


def test_every_host_ships_the_same_hook_script() -> None:
    """Gemini may copy its extension and Codex copies its plugin, so each holds its own copy
    of the script; a fix to one must reach all three."""
    assert len({script.read_bytes() for script in SCRIPTS}) == 1
    for hooks in (ROOT / "extensions" / "gemini" / "hooks" / "hooks.json",
                  ROOT / "extensions" / "codex" / "hooks" / "hooks.json"):
        commands = [h["command"] for groups in json.loads(hooks.read_text())["hooks"].values()
                    for group in groups for h in group["hooks"]]
        assert commands
        assert all("/hooks/council-hook.sh\" " in c and ".." not in c
                                for c in commands)
        assert {c.rsplit(" ", 1)[1] for c in commands} <= set(EVENTS)


@pytest.mark.parametrize(("event", "typed", "decision"), [
    ("prompt", "/council:deep-research --test q", "block"),
    ("codex-prompt", "$council:deep-research --test q", "block"),
    ("gemini-before", gemini_prompt("--test q"), "deny"),
])
def test_without_council_on_path_each_host_refuses_its_command_and_passes_the_rest(
        tmp_path: Path, event: str, typed: str, decision: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    assert subprocess.run(["sh", "-c", "command -v council"], env=env).returncode != 0

    def answer(prompt: str, on: str = event) -> str:
        proc = subprocess.run(["sh", str(SCRIPTS[0]), on], env=env, capture_output=True,
                              text=True, timeout=30,
                              input=json.dumps({"session_id": "s", "prompt": prompt}))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    refusal = json.loads(answer(typed))
    assert refusal["decision"] == decision
    assert "the council command is not on the PATH" in refusal["reason"]
    assert answer("What is 2+2?") == ""
    assert answer(f"why does {typed} fail?") == ""  # quoted, not typed
    assert answer(typed, on="session") == answer(typed, on="gemini-after") == ""
