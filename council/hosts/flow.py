"""A host session drives a council: one flow for every host (hosts/claude.py, gemini.py,
codex.py say how each one's hooks look).

The prompt hook (Claude's UserPromptSubmit, Gemini's BeforeAgent, Codex's UserPromptSubmit)
sees the command as the user typed it (Gemini: as its custom command expanded it), checks it
and records it for the session (sessions.py); a request that cannot run is refused there and
then, and the host shows the reason instead of asking the model. The stop hook (Stop,
AfterAgent) claims the request of the same turn, runs the council, and makes the session go
on once more: to write the synthesis (Claude: the session has the conversation), or to tell
the user where council's own synthesiser put the report (Gemini, Codex: their sessions'
file writes depend on approval and sandbox modes the user chose, council's agents' do not).
At the next stop the run ends and the session is free.

Nothing is read from the session's transcript: print mode may not have written it when Stop
fires, and `--no-session-persistence` never writes it. Both hooks run in every session that
loads the plugin, so the common case is cheap: a prompt that is not the command, or a stop in
a session that recorded no request, costs one JSON parse and one file lookup. Neither hook
ever traps the user: an error of their own lets the prompt or the stop through with a
systemMessage, and a failure the user must hear of is told once, then the session is free.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from council.hosts import EVENTS, host_for
from council.hosts.base import COMMAND, Host

if TYPE_CHECKING:  # imported lazily at run time: an unrelated session pays for none of it
    from council.run.prepare import Prepared
    from council.runoptions import RunOptions
    from council.store.sessions import Request
    from council.store.state import RunState

REMINDERS = 1  # ask once more for a missing final report, then give up
# Per agent per phase, so that every phase before the synthesis fits in the Stop hook's 7200 s:
# the longest chain of the phase graph (graph.critical_path) is research (or dissent, beside
# it) and refinement at 1700 s each, and the short phases at a quarter of it: scope, claims and
# recheck twice at worst (one retry each), gap fill and verification (or the antagonist,
# beside it) once, so 3400 + 8 × 425 s plus the grace periods in the worst case.
PHASE_TIMEOUT = 1700.0
MAX_GRACE = 15.0  # SIGTERM → SIGKILL, per stopped agent: part of the same budget


def plugin_limits(options: RunOptions) -> RunOptions:
    """The run's limits under the Stop hook: a config may ask for less time, never more."""
    from dataclasses import replace

    timeout = PHASE_TIMEOUT if options.timeout is None else min(options.timeout, PHASE_TIMEOUT)
    return replace(options, timeout=timeout,
                   grace_period=min(options.grace_period, MAX_GRACE))


# ---------------------------------------------------------------- the typed request


def on_prompt(host: Host, payload: dict[str, Any]) -> dict[str, Any]:
    """The prompt hook: record a council request, or refuse it with the reason."""
    session_id = host.session_id(payload)
    prompt = payload.get("prompt")
    if not session_id or not isinstance(prompt, str):
        return {}
    base = host.research_dir(payload)
    args = host.command_args(prompt)
    if args is None:
        unrun = host.unrun_command(prompt)
        if unrun:
            return host.refuse(unrun)
        if (base / ".sessions" / f"{session_id}.json").exists():
            from council.store import sessions

            sessions.update(base, session_id, sessions.drop_pending)
        return {}
    try:
        check_request(args)
        from council.store import sessions

        sessions.record(base, session_id, host.turn_id(payload), args)
    except Exception as exc:  # every failure here is the user's to hear of, in one sentence
        return host.refuse(_reason(exc, base, host))
    return {}


def check_request(args: str, host: Host | None = None) -> tuple[str, RunOptions]:
    """The topic and run options of a request (run/prepare.py, as every entry point checks
    one), or the CouncilError that says why it cannot run. The research folder is not
    checked here: the prompt hook records the request in it, and a write error there gets
    advice of its own (_reason)."""
    prepared = _prepare(args, host)
    return prepared.topic, prepared.options


def _prepare(args: str, host: Host | None) -> Prepared:
    from council.run import prepare

    request = parse_request(args)
    typed = host.typed if host else f"/{COMMAND}"
    return prepare.prepare(prepare.Request(request.topic, f"the {typed} command",
                                           request.given(), limits=plugin_limits))


def _reason(exc: Exception, base: Path, host: Host) -> str:
    from council.errors import CouncilError
    from council.trust import UntrustedConfig

    if isinstance(exc, UntrustedConfig):
        # A model reads it: it asks for the user, and names no command (trust.py).
        return exc.for_model()
    if isinstance(exc, CouncilError):
        return str(exc)
    if isinstance(exc, OSError):
        return (f"council cannot write to {base} ({exc.strerror or exc}); start {host.label} "
                "in a project folder you can write to, or set COUNCIL_RESEARCH_DIR")
    return f"council's hook failed ({type(exc).__name__}: {exc})"


class CommandArgs:
    """The command's arguments: the topic, and the options given, by name (a flag True or
    False, a value the word typed, agent names split at commas). Which options a host's
    command takes is the declaration's (council/options.py, `given_on(HOST)`): each is read as
    an attribute, None where not given, as click hands `council run` its parameters."""

    # A plain class: the hook's fast path imports this module, and dataclasses costs it more
    # than the rest of the module does.
    def __init__(self, topic: str, options: Mapping[str, Any] | None = None) -> None:
        self.topic = topic
        self.options = dict(options or {})

    def __getattr__(self, name: str) -> Any:
        from council import options

        if name in {option.name for option in options.given_on(options.HOST)}:
            return self.options.get(name)
        raise AttributeError(name)

    def given(self) -> dict[str, Any]:
        """The options given, by name, for config.Overrides."""
        return dict(self.options)


def grammar() -> tuple[dict[str, tuple[str, bool]], dict[str, str]]:
    """The command's words, made from the declaration: each flag with the option it sets and
    to what (`--verify`, `--no-verify`), and each option that takes a value."""
    from council import options

    flags: dict[str, tuple[str, bool]] = {}
    valued: dict[str, str] = {}
    for option in options.given_on(options.HOST):
        if isinstance(option.kind, options.Flag):
            flags.update(zip(option.flags, ((option.name, True), (option.name, False)),
                             strict=False))
        else:
            valued[option.flag] = option.name
    return flags, valued


def parse_request(args: str) -> CommandArgs:
    """`[--test] [--agents a,b] [--mode M] [--debate D] [--dissent D] [--max-parallel N]
    [--verify|--no-verify] TOPIC` (grammar(): the options a host's command may carry):
    options first (`--opt value` or `--opt=value`, any whitespace between), the rest verbatim
    is the topic. Values are read and checked by the declaration like the command line's; an
    option council does not know is an error, not the start of the topic."""
    import re

    from council.errors import UsageError
    from council.options import HOST, OPTION, Flag, Names, given_on

    flags, valued = grammar()
    rest = args
    found: dict[str, Any] = {}
    while (match := re.match(r"\s*(\S+)", rest)) is not None:
        word = match.group(1)
        name, eq, value = word.partition("=")
        after = rest[match.end():]
        if word in flags:
            key, flag = flags[word]
            found[key] = flag
        elif name in valued and eq:
            found[valued[name]] = value
        elif word in valued and (nxt := re.match(r"\s*(\S+)", after)) is not None:
            found[valued[word]], after = nxt.group(1), after[nxt.end():]
        elif word in valued:
            raise UsageError(f"{word} needs a value before the topic")
        elif word.startswith("--") and len(word) > 2:
            raise UsageError(f"unknown option {word!r} for {COMMAND}: it takes "
                             f"{', '.join([*flags, *valued])} before the topic")
        else:
            break
        rest = after
    lists = {n: Names.split(v) for n, v in found.items()
             if isinstance(OPTION[n].kind, Names)}  # agent names: a comma-separated word
    switches = {option.name: False for option in given_on(HOST)  # off unless typed, as click's
                if isinstance(option.kind, Flag) and not option.kind.negative}
    return CommandArgs(rest.strip(), {**switches, **found, **lists})


# ---------------------------------------------------------------- the stop


def tell(host: Host, why: str) -> dict[str, Any]:
    """A failure the user must hear of, in every output format: the stop is blocked once so
    that the main session says it (the request is released first, so it is only once)."""
    return host.block(f"The research council could not run: {why}\nTell the user this in one "
                      "or two sentences, with what to do about it. Do not research the topic "
                      "yourself and use no tools.", f"Research council: {why}")


def on_stop(host: Host, payload: dict[str, Any]) -> dict[str, Any]:
    """The stop hook: drive the council request of this turn, if there is one."""
    session_id = host.session_id(payload)
    if not session_id:
        return {}
    base = host.research_dir(payload)
    if not (base / ".sessions" / f"{session_id}.json").exists():
        return {}  # not a council session: the common, fast case
    from council.store import sessions

    turn = host.turn_id(payload)
    request, fresh, stale = sessions.update(base, session_id,
                                            lambda requests: _claim(requests, turn))
    notes = _interrupted(base, stale)
    if request is None:
        return host.allow(notes)
    if not fresh and request.run is None:
        return {}  # another copy of this hook is starting it right now
    try:
        if fresh:
            run_id = _start(base, request.args, host)
            _bind(base, session_id, request, run_id)
        return _drive(host, base, session_id, request, bool(payload.get("stop_hook_active")),
                      fresh)
    except Exception as exc:
        _release(base, session_id, request)
        return tell(host, _reason(exc, base, host))


def _claim(requests: list[Request], prompt_id: str | None
           ) -> tuple[Request | None, bool, list[Request]]:
    """(this turn's open request, whether this stop is its first, stale requests that were
    bound to a run). A request leaves `pending` here, under the lock: exactly once."""
    from council.store import sessions

    request = sessions.match(requests, prompt_id)
    stale = sessions.supersede(requests, keep=request)
    if request is None or request.status == sessions.RELEASED:
        return None, False, stale
    fresh = request.status == sessions.PENDING
    request.status = sessions.RUNNING
    return request, fresh, stale


def _interrupted(base: Path, stale: list[Request]) -> str | None:
    """Runs whose turn ended without their hook finishing (its timeout, a crash, the user
    interrupting): named once, never restarted inside an ordinary stop."""
    from council.store.state import ENDED, load_state
    from council.store.workspace import find_run

    names = []
    for request in stale:
        if request.run is None:
            continue
        try:
            ended = load_state(find_run(request.run, base).root).phase in ENDED
        except Exception:  # a run that cannot be read is still worth naming
            ended = False
        if not ended:
            names.append(request.run)
    return "; ".join(f"Research council {run} was interrupted; continue it with "
                     f"`council resume {run}` in a terminal." for run in names) or None


def _start(base: Path, args: str, host: Host) -> str:
    from council.run import prepare

    prepared = _prepare(args, host)  # again: the config or a login may have changed
    return prepare.start(prepared, base).id


def _bind(base: Path, session_id: str, request: Request, run_id: str) -> None:
    request.run = run_id
    _change(base, session_id, request, run=run_id)


def _change(base: Path, session_id: str, request: Request, **changes: Any) -> None:
    """Save changes to one request (found again by prompt id and receipt time)."""
    from council.store import sessions

    def change(requests: list[Request]) -> None:
        for other in requests:
            if (other.prompt_id, other.received_at) == (request.prompt_id,
                                                         request.received_at):
                for key, value in changes.items():
                    setattr(other, key, value)

    sessions.update(base, session_id, change)


def _release(base: Path, session_id: str, request: Request) -> None:
    from council.store import sessions

    request.status = sessions.RELEASED
    _change(base, session_id, request, status=sessions.RELEASED)


def _drive(host: Host, base: Path, session_id: str, request: Request, stop_hook_active: bool,
           fresh: bool) -> dict[str, Any]:
    from council import graph
    from council.commands.status import without
    from council.evidence.finalreport import contributions
    from council.hosts import handover
    from council.run import supervisor
    from council.store.state import PHASES, RunEnd, load_state
    from council.store.workspace import find_run
    from council.views import page
    from council.views.status import shown_phase

    assert request.run is not None
    ws = find_run(request.run, base, act="drive")
    state = load_state(ws.root)
    follow = f"tail -f {ws.root / 'progress.log'}"

    if state.phase in PHASES and state.synthesizer != handover.MAIN_SESSION:
        if not fresh:
            # Another copy of this hook drives it (the plugin loaded twice), or this turn's
            # hook was stopped mid-research: that turn ends without it, and the next stop of
            # the session names it (_interrupted). Never restart hours of work here.
            return {}
        result = supervisor.execute(ws, page.publish, synthesise=not host.session_synthesises)
        state = load_state(ws.root)
        if state.phase == graph.SYNTHESIS.name and result.exit_code == 0:
            _, names = contributions(state)
            return host.block(handover.handover(ws, state),
                              f"Research council {ws.id}: {len(names)} of {len(state.agents)} "
                              f"agents contributed; this session writes the final report "
                              f"now ({follow})")
        _release(base, session_id, request)
        if state.phase == RunEnd.DONE and result.exit_code == 0:
            return host.block(finished(ws), f"Research council {ws.id} done: "
                              f"{ws.final_report}{without(state)}")
        if state.phase == RunEnd.CANCELLED:
            return host.allow(f"Research council {ws.id} was cancelled: {result.message}")
        return tell(host, f"run {ws.id} {state.phase}: "
                    f"{failure_summary(state, result.message)} Reports so far are in "
                    f"{ws.root}; after fixing that, `council resume {ws.id}` continues it.")

    if state.phase == graph.SYNTHESIS.name:
        return _await_report(host, base, session_id, request, stop_hook_active, ws)

    _release(base, session_id, request)  # done, failed or cancelled elsewhere
    return host.allow(f"Research council {ws.id} is {shown_phase(state, ws)}.")


def _await_report(host: Host, base: Path, session_id: str, request: Request,
                  stop_hook_active: bool, ws: Any) -> dict[str, Any]:
    """The host's session writes the synthesis: done once it has, else a bounded number of
    reminders, then the run fails with its agents' reports kept."""
    from council.commands.status import without
    from council.hosts import handover
    from council.store.state import StateFile, load_state

    if handover.complete_handover(ws, StateFile(ws.root)):
        _release(base, session_id, request)
        return host.allow(f"Research council {ws.id} done: {ws.final_report}"
                          f"{without(load_state(ws.root))}")
    if request.reminders < REMINDERS and not (stop_hook_active and request.reminders):
        request.reminders += 1
        _change(base, session_id, request, reminders=request.reminders)
        return host.block(f"The research council's final report is still missing. Write "
                          f"it now, as instructed above, to this file:\nReport file: "
                          f"{ws.final_report}",
                          f"Research council {ws.id}: waiting for the final report")
    handover.fail_run(ws, StateFile(ws.root),
                      "the main session did not write the final report")
    _release(base, session_id, request)
    return host.allow(f"Research council {ws.id}: no final report was written; the "
                      f"agents' reports are in {ws.root}. Resume with "
                      f"`council resume {ws.id}`.")


def finished(ws: Any) -> str:
    """The session's last prompt of a council that council's own synthesiser finished: say
    where the report is. Its header line is quoted, so the session needs no tool."""
    header = ""
    try:
        with open(ws.final_report, encoding="utf-8", errors="replace") as handle:
            header = handle.readline().strip().lstrip("> ")
    except OSError:
        pass
    return (f"The research council {ws.id} has finished. Its final report is the file "
            f"{ws.final_report}, and {ws.root / 'report.html'} shows it with its sources, "
            f"claim verdicts and a timeline.\nThe report's header: {header}\nTell the user "
            "in two or three lines where the report is and what its header says. Use no tools "
            "and do not research the topic yourself.")


def failure_summary(state: RunState, message: str) -> str:
    """Why the agents failed, by kind, with what to do: "every agent failed" alone does not
    tell a user to log in."""
    from council.store.state import SeatStatus

    failed = []
    for name, rec in state.agents.items():
        last = next((ap for ap in reversed(rec.phases.values()) if ap.status == SeatStatus.FAILED),
                    None)
        if last is not None:
            error = (last.error or "failed").splitlines()[0][:160]
            failed.append((name, rec.cli, last.failure or "crash", error))
    if not failed:
        return message.rstrip(".") + "."
    kinds = {kind for _, _, kind, _ in failed}
    advice = []
    if "auth" in kinds:
        clis = sorted({cli for _, cli, kind, _ in failed if kind == "auth"})
        advice.append(f"log in to {', '.join(clis)} (`council doctor` shows which "
                      "credentials each CLI finds)")
    if "missing_cli" in kinds:
        clis = sorted({cli for _, cli, kind, _ in failed if kind == "missing_cli"})
        advice.append(f"install {', '.join(clis)}")
    if kinds & {"quota", "rate_limit"}:
        advice.append("wait for the quota or rate limit to reset")
    detail = "; ".join(f"{name}: {kind} ({error})" for name, _, kind, error in failed)
    return (f"{message.rstrip('.')} ({detail})."
            + (f" To fix it, {' and '.join(advice)}." if advice else ""))


def main(argv: list[str]) -> int:
    """Entry point of `council hook EVENT` for the hosts' hooks (hosts.EVENTS); always exits
    0: a hook error must never trap the user in their session."""
    name, event = EVENTS.get(argv[0] if argv else "session", ("claude", "stop"))
    host = host_for(name)
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        if not isinstance(payload, dict):
            raise ValueError("the hook payload is not a JSON object")
        out = on_prompt(host, payload) if event == "prompt" else on_stop(host, payload)
    except Exception as exc:  # never trap the user in their session
        out = host.allow(f"council {host.name} hook error, {event} allowed: {exc}")
    if out:
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    return 0
