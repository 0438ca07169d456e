"""The Claude Code plugin: a fake main-session claude loads the repository as a plugin the way
Claude Code does (UserPromptSubmit with the prompt as typed, the command expanded, Stop hooks
from hooks/hooks.json with a transcript that lags behind them) and drives the council with
fake sub-agents."""

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
from conftest import Council, bind_first, wait_for

from council.errors import UsageError
from council.hosts.flow import check_request, failure_summary, parse_request
from council.runoptions import RunOptions
from council.store import sessions
from council.store.state import AgentPhase, AgentRecord, RunState

REPO = Path(__file__).resolve().parent.parent
FORMATS = [("stream-json", "--verbose"), ("json",), ("text",),
           ("json", "--no-session-persistence")]


def project(council: Council) -> Path:
    path = council.root / "project"
    path.mkdir(exist_ok=True)
    # Plugin runs live in the project's own research/ folder.
    council.env.pop("COUNCIL_RESEARCH_DIR", None)
    # hooks.json calls the installed `council`.
    council.env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{council.env['PATH']}"
    return path


def main_session(prompt: str, fmt: tuple[str, ...] = FORMATS[0], *extra: str) -> list[str]:
    return ["claude", "-p", prompt, "--plugin-dir", str(REPO), "--permission-mode",
            "acceptEdits", "--output-format", *fmt, *extra]


def run_session(council: Council, prompt: str, fmt: tuple[str, ...] = FORMATS[0],
                *extra: str) -> str:
    """Run the main session to its end (it must end cleanly whatever the council did);
    returns the turn's result text, as the user sees it."""
    cwd = project(council)
    proc = subprocess.run(main_session(prompt, fmt, *extra), cwd=cwd, env=council.env,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if fmt[0] == "text":
        return proc.stdout
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (result["type"], result["is_error"]) == ("result", False)
    return str(result["result"])


def only_run(council: Council) -> Path:
    research = council.root / "project" / "research"
    (run,) = [p for p in research.iterdir() if p.name[0].isdigit()]
    return run


def state_of(run: Path) -> dict[str, Any]:
    return yaml.safe_load((run / "state.yaml").read_text())  # type: ignore[no-any-return]


def hooks_of(council: Council, event: str = "Stop") -> list[dict[str, Any]]:
    return [e for e in council.fake_log() if e["event"] == "hook" and e["seat"] == "project"
            and e["hook_event"] == event]


def replies(council: Council, event: str = "Stop") -> list[dict[str, Any]]:
    return [json.loads(h["stdout"]) if h["stdout"].strip() else {}
            for h in hooks_of(council, event)]


def requests_of(council: Council) -> list[dict[str, Any]]:
    folder = council.root / "project" / "research" / ".sessions"
    return [r for path in sorted(folder.glob("*.json"))
            for r in json.loads(path.read_text())["requests"]]


def hook(council: Council, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Call a plugin hook the way Claude Code does: the payload on stdin, in the project."""
    cwd = project(council)
    proc = subprocess.run([sys.executable, "-m", "council", "hook", event], cwd=cwd,
                          env={**council.env, "CLAUDE_PROJECT_DIR": str(cwd)},
                          input=json.dumps(payload), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


@pytest.mark.parametrize("fmt", FORMATS, ids=" ".join)
def test_the_whole_flow(council: Council, fmt: tuple[str, ...]) -> None:
    council.script({"project": {"finish_after": 1}, "*": {"finish_after": 2}})
    run_session(council, "/council:deep-research --test How do 'tides' $(work)?", fmt)
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
    # The request was seen as typed, before the command's expansion.
    (submitted,) = hooks_of(council, "UserPromptSubmit")
    assert submitted["payload"]["prompt"].startswith("/council:deep-research --test")
    assert submitted["stdout"].strip() == ""
    stops = hooks_of(council)
    assert len(stops) == 2  # research + refinement, then the final stop
    assert {h["payload"]["prompt_id"] for h in stops} == {submitted["payload"]["prompt_id"]}
    first, last = replies(council)
    assert first["decision"] == "block"
    assert f"Report file: {run / 'final-report.md'}" in first["reason"]
    assert "this session writes the final report now" in first["systemMessage"]
    assert "done" in last["systemMessage"]
    # The request is released: the session's next stop is an ordinary one.
    (request,) = requests_of(council)
    assert (request["status"], request["run"]) == ("released", run.name)


def test_an_unrelated_session_is_left_alone(council: Council) -> None:
    run_session(council, "What is 2+2? /council:deep-research is not at the start")
    assert [h["stdout"].strip() for h in hooks_of(council, "UserPromptSubmit")] == [""]
    assert [h["stdout"].strip() for h in hooks_of(council)] == [""]
    assert not (council.root / "project" / "research").exists()


def test_continue_and_resume_sessions_drive_a_council(council: Council) -> None:
    council.script({"project": {"finish_after": 1}, "*": {"finish_after": 1}})
    run_session(council, "What is 2+2?", ("json",))
    first_session = hooks_of(council)[0]["payload"]["session_id"]
    run_session(council, "/council:deep-research --test --agents claude,codex q1", ("json",),
                "--continue")
    run_session(council, "/council:deep-research --test --agents claude,codex q2", ("text",),
                "--resume", first_session)
    research = council.root / "project" / "research"
    runs = sorted(p for p in research.iterdir() if p.name[0].isdigit())
    assert sorted(state_of(r)["topic"] for r in runs) == ["q1", "q2"]
    assert all(state_of(r)["phase"] == "done" for r in runs)
    assert {h["payload"]["session_id"] for h in hooks_of(council)} == {first_session}
    assert [r["status"] for r in requests_of(council)] == ["released", "released"]


def test_a_repeated_stop_starts_nothing_new(council: Council) -> None:
    council.script({"project": {"finish_after": 1}, "*": {"finish_after": 1}})
    run_session(council, "/council:deep-research --test --agents claude,codex q", ("json",))
    run = only_run(council)
    starts = len([e for e in council.fake_log() if e["event"] == "start"])
    first = hooks_of(council)[0]["payload"]
    for active in (False, True):
        assert hook(council, "session", {**first, "stop_hook_active": active}) == {}
    assert only_run(council) == run
    assert state_of(run)["phase"] == "done"
    assert len([e for e in council.fake_log() if e["event"] == "start"]) == starts


def test_two_stops_at_once_start_one_run(council: Council) -> None:
    council.script({"*": {"finish_after": 1}})
    payload = {"session_id": "s-1", "prompt_id": "p-1", "cwd": str(project(council))}
    prompt = {**payload, "hook_event_name": "UserPromptSubmit",
              "prompt": "/council:deep-research --test --agents claude,codex q"}
    assert hook(council, "prompt", prompt) == {}
    stop = council.root / "stop.json"
    stop.write_text(json.dumps({**payload, "hook_event_name": "Stop",
                                "stop_hook_active": False}))
    cwd = project(council)
    procs = []
    for _ in range(2):  # both read the same Stop at once
        with stop.open() as stdin:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "council", "hook", "session"], cwd=cwd,
                env={**council.env, "CLAUDE_PROJECT_DIR": str(cwd)}, stdin=stdin,
                stdout=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=120)[0] for p in procs]
    answers = sorted(json.loads(o).get("decision", "") if o.strip() else "" for o in outs)
    assert answers == ["", "block"]
    only_run(council)  # exactly one run


def test_an_unrelated_session_ends_while_a_council_runs(council: Council) -> None:
    council.script({"claude": {"hang": True}, "codex": {"hang": True}, "project": {}})
    cwd = project(council)
    council_session = psutil.Popen(
        main_session("/council:deep-research --test --agents claude,codex q", ("json",)),
        cwd=cwd, env=council.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL)
    try:
        wait_for(lambda: len([e for e in council.fake_log() if e["event"] == "start"]) >= 3)
        began = time.monotonic()
        run_session(council, "What is 2+2?", ("json",))
        took = time.monotonic() - began
        other = [h for h in hooks_of(council) if h["payload"]["prompt_id"] !=
                 hooks_of(council, "UserPromptSubmit")[0]["payload"]["prompt_id"]]
        assert [h["stdout"].strip() for h in other] == [""]
        assert took < 30
        assert [r["status"] for r in requests_of(council)] == ["running"]
    finally:
        council.run("cancel", "--research-dir", str(cwd / "research"))
        council_session.wait(60)
    assert council_session.returncode == 0


def test_a_request_whose_turn_was_interrupted_never_starts_later(council: Council) -> None:
    cwd = project(council)
    base = {"session_id": "s-1", "cwd": str(cwd)}
    for prompt_id in ("p-1", None):  # without prompt ids, the newest open request is matched
        ids = {"prompt_id": prompt_id} if prompt_id else {}
        hook(council, "prompt", {**base, **ids, "prompt": "/council:deep-research --test q"})
        # The user interrupted that turn (no Stop) and typed something else.
        later = {"prompt_id": "p-2"} if prompt_id else {}
        hook(council, "prompt", {**base, **later, "prompt": "What is 2+2?"})
        assert hook(council, "session", {**base, **later, "stop_hook_active": False}) == {}
    assert not [p for p in (cwd / "research").iterdir() if p.name[0].isdigit()]
    assert {r["status"] for r in requests_of(council)} == {"released"}
    assert not council.fake_log()


def test_an_interrupted_run_is_named_not_restarted(council: Council) -> None:
    from council.config import Overrides, load_options
    from council.run.supervisor import start_run

    cwd = project(council)
    base = cwd / "research"
    ws = start_run("q", load_options(Overrides(test=True)), base)
    # Its hook was stopped mid-research (its timeout): the request is still bound to the run.
    sessions.record(base, "s-1", "p-1", "--test q")
    sessions.update(base, "s-1", bind_first(ws.id))
    reply = hook(council, "session", {"session_id": "s-1", "prompt_id": "p-2",
                                      "cwd": str(cwd)})
    assert "decision" not in reply
    assert f"council resume {ws.id}" in reply["systemMessage"]
    assert not council.fake_log()  # no agent was started
    assert [r["status"] for r in requests_of(council)] == ["released"]
    status = council.run("status", ws.id, "--research-dir", str(base))
    assert "interrupted in research" in status.stdout


@pytest.mark.parametrize(("args", "why"), [
    ("--test --mode vibes q", "--mode must be one of exploratory, compliance, decision"),
    ("--test --frobnicate q", "unknown option '--frobnicate'"),
    ("--test   ", "the topic from the /council:deep-research command is empty"),
    ("--test --agents codex,gemini q", "no agent can run here\ncodex is not installed: "
                                       "npm install -g @openai/codex@0.171.0"),
    ("--test q", "council cannot write to"),
])
def test_a_request_that_cannot_run_is_refused_when_typed(council: Council, args: str,
                                                         why: str) -> None:
    cwd = project(council)
    if "codex,gemini" in args:  # a machine with claude alone
        only_claude = council.root / "only-claude"
        only_claude.mkdir()
        (only_claude / "claude").symlink_to(REPO / "tests" / "fakes" / "bin" / "claude")
        council.env["PATH"] = council.env["PATH"].replace(
            str(REPO / "tests" / "fakes" / "bin"), str(only_claude))
    if why.startswith("council cannot write"):
        (cwd / "research").write_text("a file where the research folder should be")
    for fmt in FORMATS:
        shown = run_session(council, f"/council:deep-research {args}", fmt)
        assert "Research council not started: " in shown, shown
        assert why in shown, shown
    assert not hooks_of(council)  # nothing reached the model, no stop to handle
    research = cwd / "research"
    assert not research.is_dir() or not [p for p in research.iterdir() if p.name[0].isdigit()]


def test_a_failed_research_is_told_once_and_frees_the_session(council: Council) -> None:
    council.script({"project": {"finish_after": 1},
                    "*": {"crash": True, "crash_kind": "bad_request"}})
    run_session(council, "/council:deep-research --test --agents claude,codex q", ("json",))
    first, second = replies(council)
    assert first["decision"] == "block"
    for words in ("could not run", "every agent failed in research", "claude: crash",
                  "council resume"):
        assert words in first["reason"]
    assert second == {}
    assert state_of(only_run(council))["phase"] == "failed"
    assert [r["status"] for r in requests_of(council)] == ["released"]


def test_a_hook_error_lets_the_session_stop(council: Council) -> None:
    reply = hook(council, "session", {"session_id": "../../escape", "cwd": "/"})
    assert reply == {}  # no such file: nothing to do
    research = project(council) / "research" / ".sessions"
    research.mkdir(parents=True)
    (research / "bad id.json").write_text("{}")
    reply = hook(council, "session", {"session_id": "bad id", "prompt_id": "p"})
    assert "decision" not in reply
    assert "council claude hook error" in reply["systemMessage"]


def test_failure_summary_says_what_to_do() -> None:
    state = RunState(id="r", topic="q", created_at="now", options=RunOptions(seats=()), agents={
        "claude": AgentRecord(cli="claude", phases={"research": AgentPhase(
            status="failed", error="Invalid API key · Fix external API key\nmore",
            failure="auth")}),
        "codex": AgentRecord(cli="codex", phases={"research": AgentPhase(
            status="failed", error="codex is not installed or not on PATH",
            failure="missing_cli")}),
        "gemini": AgentRecord(cli="gemini", phases={"research": AgentPhase(status="complete")}),
    })
    text = failure_summary(state, "every agent failed in research.")
    assert text.startswith("every agent failed in research (claude: auth (Invalid API key")
    assert "more" not in text
    assert "log in to claude" in text
    assert "install codex" in text
    assert "gemini" not in text


def test_cancel_research_stops_the_agents_and_frees_the_session(council: Council) -> None:
    council.script({"*": {"hang": True}, "project": {}})
    cwd = project(council)
    session = psutil.Popen(main_session("/council:deep-research --test q"), cwd=cwd,
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
    (reply,) = replies(council)
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
    r = parse_request("--dissent gemini --max-parallel=2 q")
    assert (r.dissent, r.max_parallel, r.topic) == ("gemini", "2", "q")
    with pytest.raises(UsageError, match="--max-parallel takes a whole number"):
        check_request("--max-parallel two q")
    with pytest.raises(UsageError, match="--mode needs a value"):
        parse_request("--mode")
    r = parse_request("--agents\tclaude,codex\n  Tides:  why?")
    assert (r.agents, r.topic) == (("claude", "codex"), "Tides:  why?")
    for bad in ("--verify=false q", "--modes decision q"):
        with pytest.raises(UsageError, match="unknown option"):
            parse_request(bad)
    assert parse_request("-- dashes start this topic").topic == "-- dashes start this topic"


def test_every_phase_before_the_synthesis_fits_in_the_stop_hook(tmp_path: Path) -> None:
    from council.config import PROFILES
    from council.graph import BY_NAME, critical_path
    from council.hosts.flow import PHASE_TIMEOUT, plugin_limits
    from council.phases import SHORT_PHASES, RunContext
    from council.runoptions import RunOptions
    from council.store.owner import StateOwner
    from council.store.state import RunState
    from council.store.workspace import Workspace

    hooks = json.loads((Path(__file__).parents[1] / "hooks" / "hooks.json").read_text())
    hook_timeout = hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"]
    # A config asking for more time or a longer grace than the hook can give is clamped.
    options = plugin_limits(RunOptions(seats=PROFILES["production"], timeout=7200,
                                       grace_period=60))
    assert (options.timeout, options.grace_period) == (PHASE_TIMEOUT, 15)
    state = RunState(id="r", topic="q", created_at="2026-11-22T00:00:00Z",
                     options=RunOptions(seats=()))
    ctx = RunContext(Workspace(tmp_path), StateOwner(tmp_path, state, None), options, "q")
    # The longest chain of the phase graph, each phase at its worst: every attempt of a JSON
    # answer (phases.ask_json) timing out, then its grace period.
    worst = critical_path(lambda phase: phase.attempts * (
        (ctx.limits(phase).timeout or 0) + ctx.limits(phase).grace))
    assert ctx.limits(BY_NAME["claims"]).timeout == pytest.approx(PHASE_TIMEOUT / 4)
    assert set(SHORT_PHASES) == {"scope", "claims", "gapfill", "recheck", "verification",
                                 "antagonist"}
    assert worst < hook_timeout
    # ... and the chain is the declared one: research or dissent, then refinement, ...
    assert worst == pytest.approx(2 * (PHASE_TIMEOUT + 15) + 8 * (PHASE_TIMEOUT / 4 + 15))


def test_the_plugin_flow_scopes_verifies_and_scores(council: Council) -> None:
    from test_completeness import CLAIMS, SCOPE, VERDICTS

    council.script({"project": {"finish_after": 1}, "*": {"finish_after": 1},
                    "claude:scope": {"content": json.dumps(SCOPE)},
                    "claude:claims": {"content": json.dumps(CLAIMS)}, **VERDICTS})
    run_session(council, "/council:deep-research --test --depth deep --verify --debate off q")
    run = only_run(council)
    assert state_of(run)["phase"] == "done"
    handover = replies(council)[0]["reason"]
    assert "- q2 [partial]: How high do spring tides get?" in handover
    assert "Completeness score computed by council: " in handover
    header = (run / "final-report.md").read_text().splitlines()[0]
    assert ("scope → research ∥ dissent → refinement → claims → gap fill → recheck → "
            "verification → synthesis") in header
    # The main session reads the gap reports and the dissent memo where they were published.
    assert f"- claude, on d3: Coastal engineering practice: {run / 'claude-gaps.md'}" in handover
    assert str(run / "dissent.md") in handover
    assert f"completeness {state_of(run)['completeness']['score']}/100" in header
    assert "synthesised by main-session" in header


def test_without_council_on_the_hooks_path_a_request_is_refused_not_lost(
        council: Council) -> None:
    cwd = project(council)
    env = {**council.env, "PATH": council.env["PATH"].replace(
        f"{Path(sys.executable).parent}{os.pathsep}", "")}
    assert all(not (Path(d) / "council").exists() for d in env["PATH"].split(os.pathsep))

    def session(prompt: str) -> str:
        proc = subprocess.run(main_session(prompt, ("json",)), cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        return str(json.loads(proc.stdout)["result"])

    assert "Research council not started: the council command is not on the PATH" in \
        session("/council:deep-research --test q")
    assert session("What is 2+2?") == "Acknowledged."
    assert [h["stdout"].strip() for h in hooks_of(council)] == [""]  # the plain one's stop
    assert not (cwd / "research").exists()


def test_the_ask_command_expands_to_running_council_ask_with_the_question(
        council: Council) -> None:
    """/council:ask is a command of the plugin like its neighbours: Claude Code expands it
    with the question as data, lets its session run only `council ask`, and starts no run
    (its hooks see no /council:deep-research)."""
    question = "Which source is the most recent?"
    run_session(council, f"/council:ask {question}", ("json",))
    (command,) = [e for e in council.fake_log() if e["event"] == "command"]
    assert (command["name"], command["args"]) == ("council:ask", question)
    text = (REPO / "commands" / "ask.md").read_text()
    assert "allowed-tools: Bash(council ask:*)\n" in text
    assert "----- BEGIN QUESTION -----\n$ARGUMENTS\n" in text
    assert not (council.root / "project" / "research").exists()
