"""The Claude Code plugin's Stop hook (`council hook session`): the main Claude session
drives a council.

`/council:deep-research ARGS` only asks Claude to end its turn. At that stop this hook finds
the command in the session's transcript, creates the run bound to the session, runs research
and refinement with the sub-agents, and blocks the stop with the synthesis instructions. At
the next stop it finds the final report, ends the run and lets the session stop.

The hook fires in every session that loads the plugin, so an unrelated session costs one
file lookup and a scan of its transcript for the command tag. It never traps the user: every
error of its own allows the stop, with the reason in a systemMessage, and a missing final
report is asked for once, then given up on.

The topic is read from the transcript, never from a shell: the command file runs no tool.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported lazily at run time: an unrelated session pays for no more
    from council.config import RunOptions

COMMAND = "council:deep-research"
COMMAND_TAG = f"<command-name>/{COMMAND}</command-name>".encode()
ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
SESSIONS_DIR = ".sessions"
REMINDERS = 1  # ask once more for a missing final report, then give up
# Per agent per phase, so that every phase before the synthesis fits in the Stop hook's 7200 s:
# research and refinement 2 × 1800 s, the short phases a quarter of it (phases.SHORT_PHASES):
# scope and claims twice at worst (one retry each), verification, gap fill and antagonist
# once, so 3600 + 7 × 450 s plus the grace periods in the worst case.
PHASE_TIMEOUT = 1800.0
MAX_GRACE = 15.0  # SIGTERM → SIGKILL, per stopped agent: part of the same budget


def plugin_limits(options: RunOptions) -> RunOptions:
    """The run's limits under the Stop hook: a config may ask for less time, never more."""
    timeout = PHASE_TIMEOUT if options.timeout is None else min(options.timeout, PHASE_TIMEOUT)
    return replace(options, timeout=timeout,
                   grace_period=min(options.grace_period, MAX_GRACE))


@dataclass
class Binding:
    """research/.sessions/<session id>.json: which run a Claude session drives."""

    run: str | None
    handled: list[str]  # transcript uuids of /council:deep-research commands already started
    reminders: int = 0


def research_dir(payload: dict[str, Any]) -> Path:
    env = os.environ.get("COUNCIL_RESEARCH_DIR")
    return Path(env) if env else Path(str(payload.get("cwd") or os.getcwd())) / "research"


def _binding_path(base: Path, session_id: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,128}", session_id):
        raise ValueError(f"unexpected session id {session_id!r}")
    return base / SESSIONS_DIR / f"{session_id}.json"


def load_binding(base: Path, session_id: str) -> Binding | None:
    try:
        data = json.loads(_binding_path(base, session_id).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return Binding(run=data.get("run"), handled=list(data.get("handled", [])),
                   reminders=int(data.get("reminders", 0)))


def save_binding(base: Path, session_id: str, binding: Binding) -> None:
    path = _binding_path(base, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(binding.__dict__), encoding="utf-8")
    os.replace(tmp, path)


def is_bound(base: Path, run_id: str) -> bool:
    """Whether a Claude session is waiting on this run."""
    folder = base / SESSIONS_DIR
    return folder.is_dir() and any(
        (b := load_binding(base, p.stem)) is not None and b.run == run_id
        for p in folder.glob("*.json"))


def unbind_run(base: Path, run_id: str) -> None:
    """Release every session bound to a run (cancel): they may stop again."""
    folder = base / SESSIONS_DIR
    if not folder.is_dir():
        return
    for path in folder.glob("*.json"):
        binding = load_binding(base, path.stem)
        if binding is not None and binding.run == run_id:
            binding.run = None
            save_binding(base, path.stem, binding)


def latest_command(transcript: Path) -> tuple[str, str] | None:
    """(uuid, args) of the last /council:deep-research the *user* typed, if any.

    Only a user line whose prompt text begins with the command's expansion counts: the tag
    quoted in a tool result, an assistant reply or a file that Claude read starts nothing."""
    try:
        data = transcript.read_bytes()
    except OSError:
        return None
    end = len(data)
    while (at := data.rfind(COMMAND_TAG, 0, end)) >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at)
        end = start
        try:
            line = json.loads(data[start:] if stop < 0 else data[start:stop])
        except ValueError:
            continue
        message = line.get("message") if isinstance(line, dict) else None
        if line.get("type") != "user" or not isinstance(message, dict):
            continue
        text = _text(message.get("content"))
        if not text.lstrip().startswith(("<command-message>", "<command-name>")):
            continue
        found = ARGS.search(text)
        return str(line.get("uuid") or start), (found.group(1) if found else "")
    return None


def _text(content: Any) -> str:
    """A message's own text: its text blocks, not the tool results it carries."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(block.get("text", "")) for block in content
                         if isinstance(block, dict) and block.get("type", "text") == "text")
    return ""


@dataclass(frozen=True)
class Request:
    test: bool
    agents: tuple[str, ...]
    topic: str
    mode: str | None = None
    debate: str | None = None
    verify: bool | None = None


# The `council run` options a command may carry: each takes a value or is a flag.
VALUED = ("--agents", "--mode", "--debate")
FLAGS = {"--test": ("test", True), "--verify": ("verify", True),
         "--no-verify": ("verify", False)}


def parse_request(args: str) -> Request:
    """`[--test] [--agents a,b] [--mode M] [--debate D] [--verify|--no-verify] TOPIC`:
    options first (`--opt value` or `--opt=value`, any whitespace between), the rest verbatim
    is the topic. Values are checked by load_options like the command line's; an option
    council does not know is an error, not the start of the topic."""
    from council.errors import UsageError

    rest = args
    found: dict[str, Any] = {}
    while (match := re.match(r"\s*(\S+)", rest)) is not None:
        word = match.group(1)
        name, eq, value = word.partition("=")
        after = rest[match.end():]
        if word in FLAGS:
            key, flag = FLAGS[word]
            found[key] = flag
        elif name in VALUED and eq:
            found[name[2:]] = value
        elif word in VALUED and (nxt := re.match(r"\s*(\S+)", after)) is not None:
            found[word[2:]], after = nxt.group(1), after[nxt.end():]
        elif word in VALUED:
            raise UsageError(f"{word} needs a value before the topic")
        elif word.startswith("--") and len(word) > 2:
            raise UsageError(f"unknown option {word!r} for /{COMMAND}: it takes "
                             f"{', '.join([*FLAGS, *VALUED])} before the topic")
        else:
            break
        rest = after
    agents = tuple(a for a in str(found.pop("agents", "")).split(",") if a)
    return Request(bool(found.pop("test", False)), agents, rest.strip(), **found)


def block(reason: str, message: str) -> dict[str, str]:
    return {"decision": "block", "reason": reason, "systemMessage": message}


def allow(message: str | None = None) -> dict[str, str]:
    return {"systemMessage": message} if message else {}


def decide(payload: dict[str, Any]) -> dict[str, str]:
    """What the main session's Stop hook answers. Does the council's work on the way."""
    session_id = str(payload.get("session_id") or "")
    if not session_id:
        return {}
    base = research_dir(payload)
    binding = load_binding(base, session_id)
    if binding is None or binding.run is None:
        found = latest_command(Path(str(payload.get("transcript_path") or "")))
        if found is None:
            return {}  # not a council session: the common, fast case
        uuid, args = found
        if binding is not None and uuid in binding.handled:
            return {}
        binding = binding or Binding(run=None, handled=[])
        binding.handled.append(uuid)
        binding.reminders = 0
        # Saved before starting: a request that cannot start is reported once, not at every
        # later stop of the session.
        save_binding(base, session_id, binding)
        binding.run = _start(base, args)
        save_binding(base, session_id, binding)
        return _drive(base, session_id, binding, bool(payload.get("stop_hook_active")),
                      fresh=True)
    return _drive(base, session_id, binding, bool(payload.get("stop_hook_active")))


def _start(base: Path, args: str) -> str:
    from council.config import Overrides, load_options
    from council.supervisor import start_run
    from council.topic import check_topic

    request = parse_request(args)
    topic = check_topic(request.topic, "the /council:deep-research command")
    options = load_options(Overrides(test=request.test, agents=request.agents,
                                     mode=request.mode, debate=request.debate,
                                     verify=request.verify))
    options = plugin_limits(options)
    return start_run(topic, options, base).id


def _drive(base: Path, session_id: str, binding: Binding, stop_hook_active: bool,
           fresh: bool = False) -> dict[str, str]:
    from council import supervisor
    from council.state import PHASES, load_state
    from council.workspace import find_run

    assert binding.run is not None
    ws = find_run(binding.run, base)
    state = load_state(ws.root)
    follow = f"tail -f {ws.root / 'progress.log'}"

    if state.phase in PHASES and state.synthesizer != supervisor.MAIN_SESSION:
        if not fresh:
            # An earlier hook was stopped mid-research (its timeout, a crash): never restart
            # hours of work inside an ordinary stop of the user's.
            _release(base, session_id, binding)
            return allow(f"Research council {ws.id} was interrupted; continue it with "
                         f"`council resume {ws.id}` in a terminal.")
        result = supervisor.execute(ws, synthesise=False)
        state = load_state(ws.root)
        if result.exit_code != 0 or state.phase != "synthesis":
            _release(base, session_id, binding)
            return allow(f"Research council run {ws.id} {state.phase}: {result.message}")
        _, names = supervisor.contributions(state)
        return block(supervisor.handover(ws),
                     f"Research council {ws.id}: {len(names)} of {len(state.agents)} agents "
                     f"finished research and refinement. Phase 3/3: synthesis ({follow})")

    if state.phase == "synthesis":
        if supervisor.complete_handover(ws):
            _release(base, session_id, binding)
            return allow(f"Research council {ws.id} done: {ws.final_report}")
        if binding.reminders < REMINDERS and not (stop_hook_active and binding.reminders):
            binding.reminders += 1
            save_binding(base, session_id, binding)
            return block(f"The research council's final report is still missing. Write it "
                         f"now, as instructed above, to this file:\nReport file: "
                         f"{ws.final_report}",
                         f"Research council {ws.id}: waiting for the final report")
        supervisor.fail_run(ws, "the main session did not write the final report")
        _release(base, session_id, binding)
        return allow(f"Research council {ws.id}: no final report was written; the agents' "
                     f"reports are in {ws.root}. Resume with `council resume {ws.id}`.")

    _release(base, session_id, binding)  # done, failed or cancelled elsewhere
    return allow(f"Research council {ws.id} is {state.phase}.")


def _release(base: Path, session_id: str, binding: Binding) -> None:
    binding.run, binding.reminders = None, 0
    save_binding(base, session_id, binding)


def main(argv: list[str]) -> int:
    """Entry point of `council hook session`; always exits 0."""
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        if not isinstance(payload, dict):
            raise ValueError("the Stop hook payload is not a JSON object")
        out = decide(payload)
    except Exception as exc:  # never trap the user in their session
        out = allow(f"council plugin hook error, stop allowed: {exc}")
    if out:
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    return 0
