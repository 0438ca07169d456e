"""The Claude Code plugin: a fake main-session claude loads the repository as a plugin the way
Claude Code does (expands /council:deep-research, runs hooks/hooks.json at each stop with the
real Stop payload and transcript) and drives the council with fake sub-agents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml
from conftest import Council, wait_for

from council.errors import UsageError
from council.plugin import latest_command, parse_request

REPO = Path(__file__).resolve().parent.parent


def project(council: Council) -> Path:
    path = council.root / "project"
    path.mkdir(exist_ok=True)
    # Plugin runs live in the project's own research/ folder.
    council.env.pop("COUNCIL_RESEARCH_DIR", None)
    # hooks.json calls the installed `council`.
    council.env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{council.env['PATH']}"
    return path


def main_session(council: Council, prompt: str, *extra: str) -> list[str]:
    return ["claude", "-p", prompt, "--plugin-dir", str(REPO), "--permission-mode",
            "acceptEdits", "--output-format", "stream-json", "--verbose", *extra]


def run_session(council: Council, prompt: str) -> subprocess.CompletedProcess[str]:
    """Run the main session to its end; it must end cleanly whatever the council did."""
    cwd = project(council)
    proc = subprocess.run(main_session(council, prompt), cwd=cwd, env=council.env,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (result["type"], result["is_error"]) == ("result", False)
    return proc


def only_run(council: Council) -> Path:
    research = council.root / "project" / "research"
    (run,) = [p for p in research.iterdir() if p.name[0].isdigit()]
    return run


def state_of(run: Path) -> dict[str, Any]:
    return yaml.safe_load((run / "state.yaml").read_text())  # type: ignore[no-any-return]


def session_hooks(council: Council) -> list[dict[str, Any]]:
    return [e for e in council.fake_log() if e["event"] == "hook" and e["seat"] == "project"]


def test_the_whole_flow(council: Council) -> None:
    council.script({"project": {"finish_after": 1}, "*": {"finish_after": 2}})
    run_session(council, "/council:deep-research --test How do 'tides' $(work)?")
    run = only_run(council)
    st = state_of(run)
    assert st["phase"] == "done"
    assert st["topic"] == "How do 'tides' $(work)?"
    assert st["options"]["profile"] == "test"
    assert st["synthesizer"] == "main-session"
    for seat in ("claude", "codex", "gemini"):
        assert st["agents"][seat]["phases"]["refinement"]["status"] == "complete"
    final = (run / "final-report.md").read_text()
    assert "3 of 3 agents contributed" in final
    assert "synthesised by main-session" in final
    hooks = session_hooks(council)
    assert len(hooks) == 2  # research + refinement, then the final stop
    first = json.loads(hooks[0]["stdout"])
    assert first["decision"] == "block"
    assert f"Report file: {run / 'final-report.md'}" in first["reason"]
    assert "Phase 3/3: synthesis" in first["systemMessage"]
    assert "done" in json.loads(hooks[1]["stdout"])["systemMessage"]
    # The session is released: its next stop is an ordinary one.
    binding = json.loads(next((run.parent / ".sessions").glob("*.json")).read_text())
    assert binding["run"] is None


def test_an_unrelated_session_is_left_alone(council: Council) -> None:
    run_session(council, "What is 2+2?")
    hooks = session_hooks(council)
    assert len(hooks) == 1
    assert hooks[0]["stdout"].strip() == ""
    assert not (council.root / "project" / "research").exists()


def test_agents_option_and_a_missing_report_is_asked_for_once(council: Council) -> None:
    council.script({"project": {"write_nothing": True}, "*": {"finish_after": 1}})
    run_session(council, "/council:deep-research --test --agents codex,gemini q")
    run = only_run(council)
    st = state_of(run)
    assert set(st["agents"]) == {"codex", "gemini"}
    assert st["phase"] == "failed"
    assert "did not write the final report" in st["error"]
    replies = [json.loads(h["stdout"]) for h in session_hooks(council)]
    assert [r.get("decision") for r in replies] == ["block", "block", None]
    assert "still missing" in replies[1]["reason"]
    assert "council resume" in replies[2]["systemMessage"]


def test_a_hook_error_lets_the_session_stop(council: Council) -> None:
    cwd = project(council)
    (cwd / "research").write_text("a file where the research folder should be")
    run_session(council, "/council:deep-research --test q")
    (reply,) = [json.loads(h["stdout"]) for h in session_hooks(council)]
    assert "decision" not in reply
    assert "council plugin hook error" in reply["systemMessage"]


def test_cancel_research_stops_the_agents_and_frees_the_session(council: Council) -> None:
    council.script({"*": {"hang": True}, "project": {}})
    cwd = project(council)
    session = psutil.Popen(main_session(council, "/council:deep-research --test q"), cwd=cwd,
                           env=council.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL, text=True)
    try:
        wait_for(lambda: len([e for e in council.fake_log() if e["event"] == "start"]) >= 4)
        agents = [e["pid"] for e in council.fake_log()
                  if e["event"] == "start" and e["seat"] != "project"]
        began = time.monotonic()
        cancel = subprocess.run([sys.executable, "-m", "council", "cancel"], cwd=cwd,
                                env=council.env, capture_output=True, text=True, timeout=60)
        assert cancel.returncode == 0, cancel.stderr
        session.communicate(timeout=60)
    finally:
        if session.poll() is None:
            session.send_signal(signal.SIGKILL)
    assert session.returncode == 0
    assert time.monotonic() - began < 30
    assert not [p for p in agents if psutil.pid_exists(p)
                and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    run = only_run(council)
    assert state_of(run)["phase"] == "cancelled"
    (reply,) = [json.loads(h["stdout"]) for h in session_hooks(council)]
    assert "decision" not in reply  # the session may stop
    assert "cancelled" in reply["systemMessage"]


def test_parse_request() -> None:
    r = parse_request(" --test --agents claude,codex  What is  --test anyway? ")
    assert (r.test, r.agents, r.topic) == (True, ("claude", "codex"), "What is  --test anyway?")
    r = parse_request("--agents=gemini topic")
    assert (r.test, r.agents, r.topic) == (False, ("gemini",), "topic")
    assert parse_request("plain topic").topic == "plain topic"
    r = parse_request("--mode decision --debate=force --no-verify Postgres or SQLite?")
    assert (r.mode, r.debate, r.verify, r.topic) == ("decision", "force", False,
                                                     "Postgres or SQLite?")
    with pytest.raises(UsageError, match="--mode needs a value"):
        parse_request("--mode")
    r = parse_request("--agents\tclaude,codex\n  Tides:  why?")
    assert (r.agents, r.topic) == (("claude", "codex"), "Tides:  why?")
    for bad in ("--verify=false q", "--modes decision q"):
        with pytest.raises(UsageError, match="unknown option"):
            parse_request(bad)
    assert parse_request("-- dashes start this topic").topic == "-- dashes start this topic"


def test_latest_command_reads_the_transcript(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content":
            "<command-message>council:deep-research</command-message>\n"
            "<command-name>/council:deep-research</command-name>\n"
            "<command-args>first</command-args>\nbody"}},
        {"type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "ok"}]}},
        {"type": "user", "uuid": "u2", "message": {"role": "user", "content": [{
            "type": "text", "text": "<command-name>/council:deep-research</command-name>\n"
                                    "<command-args>second \"quoted\"\nline</command-args>"}]}},
    ]
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert latest_command(transcript) == ("u2", 'second "quoted"\nline')
    assert latest_command(tmp_path / "missing.jsonl") is None


def test_a_quoted_command_starts_nothing(tmp_path: Path) -> None:
    tag = "<command-name>/council:deep-research</command-name><command-args>x</command-args>"
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hello"}},
        {"type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": [
            {"type": "text", "text": f"The plugin expands to {tag}"}]}},
        {"type": "user", "uuid": "u2", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": f"file says {tag}"}]}},
        {"type": "user", "uuid": "u3", "message": {"role": "user",
                                                    "content": f"please explain {tag}"}},
    ]
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert latest_command(transcript) is None


def test_an_interrupted_run_is_not_restarted_by_a_later_stop(
        council: Council, monkeypatch: pytest.MonkeyPatch) -> None:
    from council.config import Overrides, load_options
    from council.plugin import Binding, decide, save_binding
    from council.supervisor import start_run

    base = project(council) / "research"
    monkeypatch.delenv("COUNCIL_RESEARCH_DIR")  # the hook finds research/ from the payload
    ws = start_run("q", load_options(Overrides(test=True)), base)
    save_binding(base, "s1", Binding(run=ws.id, handled=["u1"]))
    reply = decide({"session_id": "s1", "cwd": str(base.parent), "transcript_path": "/none"})
    assert "decision" not in reply
    assert f"council resume {ws.id}" in reply["systemMessage"]
    assert not council.fake_log()  # no agent was started
    status = subprocess.run([sys.executable, "-m", "council", "status", ws.id], cwd=base.parent,
                            env=council.env, capture_output=True, text=True, timeout=60)
    assert "interrupted in research" in status.stdout


def test_every_phase_before_the_synthesis_fits_in_the_stop_hook(tmp_path: Path) -> None:
    from council.config import PROFILES, RunOptions
    from council.phases import ATTEMPTS, SHORT_PHASES, RunContext
    from council.plugin import PHASE_TIMEOUT, plugin_limits
    from council.workspace import Workspace

    hooks = json.loads((Path(__file__).parents[1] / "hooks" / "hooks.json").read_text())
    hook_timeout = hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"]
    # A config asking for more time or a longer grace than the hook can give is clamped.
    options = plugin_limits(RunOptions(seats=PROFILES["production"], timeout=7200,
                                       grace_period=60))
    assert (options.timeout, options.grace_period) == (PHASE_TIMEOUT, 15)
    ctx = RunContext(Workspace(tmp_path), options, "q")
    # scope and claims are asked again after a bad answer (phases.ask_json)
    runs = {"research": 1, "refinement": 1, "scope": ATTEMPTS, "claims": ATTEMPTS,
            "verification": 1, "gapfill": 1, "antagonist": 1}
    assert set(runs) - {"research", "refinement"} == set(SHORT_PHASES)
    limits = {p: ctx.limits(p) for p in runs}
    worst = sum(n * (limits[p].timeout or 0) + n * limits[p].grace for p, n in runs.items())
    assert limits["claims"].timeout == pytest.approx(PHASE_TIMEOUT / 4)
    assert worst < hook_timeout


def test_the_command_takes_run_options_and_refuses_bad_ones(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    run_session(council, "/council:deep-research --test --agents claude,codex --mode decision "
                         "--debate off q")
    options = state_of(only_run(council))["options"]
    assert (options["mode"], options["debate"]) == ("decision", "off")

    run_session(council, "/council:deep-research --test --mode vibes q")
    reply = json.loads(session_hooks(council)[-1]["stdout"])
    assert "decision" not in reply  # the session may stop
    assert "mode must be one of exploratory, compliance, decision" in reply["systemMessage"]


def test_the_plugin_flow_scopes_verifies_and_scores(council: Council) -> None:
    from test_completeness import CLAIMS, SCOPE, VERDICTS

    council.script({"project": {"finish_after": 1}, "*": {"finish_after": 1},
                    "claude:scope": {"content": json.dumps(SCOPE)},
                    "claude:claims": {"content": json.dumps(CLAIMS)}, **VERDICTS})
    run_session(council, "/council:deep-research --test --verify --debate off q")
    run = only_run(council)
    assert state_of(run)["phase"] == "done"
    handover = json.loads(session_hooks(council)[0]["stdout"])["reason"]
    assert "- q2 [partial]: How high do spring tides get?" in handover
    assert "Completeness score computed by council: " in handover
    header = (run / "final-report.md").read_text().splitlines()[0]
    assert "scope → research → refinement → verification → gap fill → synthesis" in header
    # The main session reads the gap reports where they were published.
    assert f"- claude, on q3: Does wind matter?: {run / 'claude-gaps.md'}" in handover
    assert f"completeness {state_of(run)['completeness']['score']}/100" in header
    assert "synthesised by main-session" in header
