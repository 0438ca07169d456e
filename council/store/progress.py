"""The run's event writer, the one renderer of both files: progress.log, one human line per
event, so `tail -f` shows a run live, and events.jsonl, the same event as one JSON object,
for scripts.

    2026-11-21T14:31:00.123Z research codex iteration 2/10
    {"time": "2026-11-21T14:31:00.123Z", "scope": "research", "agent": "codex",
     "message": "iteration 2/10"}  (one line in the file)

Everything that writes an event ends here: the hooks call `emit` after every agent turn, and
the supervisor's events.py (structlog, which binds a task's phase and agent) hands its events
to `emit` too. The hooks cannot pay for structlog's import, so this module imports only `os`,
`time`, disk.py (the lock), agentfs.py (the no-follow opener), redact.py (which redacts
secrets from both files) and terminal.py (a line is text, not control: a CLI's error that
held an escape sequence is shown as `\\x1b…` to whoever tails the log). Both files are
opened without following a link or waiting on a FIFO (agentfs.open_append): a run folder is
council's, but a line must never be appended through a link to the user's `~/.bashrc`,
whoever planted it. Each line is a single O_APPEND write, so lines from parallel hooks and
the supervisor never interleave, and both files are written under one lock, so their events
come in one order.
"""

from __future__ import annotations

import os
import time

from council.store import agentfs, disk, redact, terminal

PROGRESS_FILE = "progress.log"
# A detached supervisor's output (run/detach.py), in the run's logs/: made when it is launched.
SUPERVISOR_LOG = "supervisor.log"
EVENTS_FILE = "events.jsonl"


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def stamp() -> str:
    """A progress line's time, to the millisecond: events a few ms apart stay in order."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def emit(run_dir: str | os.PathLike[str], scope: str, message: str,
         agent: str | None = None) -> None:
    """Write one event of the run (`scope` "run") or of a phase, by one agent or the whole
    phase (`agent` None): `2026-11-21T14:31:00.123Z research codex iteration 2/10`."""
    _write(run_dir, *render(stamp(), scope, agent, message))


def render(time_: str, scope: str, agent: str | None, message: str) -> tuple[str, str]:
    """The event as `TIME SCOPE [AGENT] MESSAGE` and as a JSON object with those four keys
    (a line each). The message is folded to one line first: a CLI's multi-line error stays
    one event; and made text (terminal.safe): an escape sequence in it reaches no terminal."""
    message = terminal.safe(" ".join(message.split()))
    scope, agent = terminal.safe(scope), agent and terminal.safe(agent)
    line = f"{time_} {scope}{f' {agent}' if agent else ''} {message}\n"
    fields = {"time": time_, "scope": scope, "agent": agent or None, "message": message}
    return line, json_object(fields) + "\n"


def _write(run_dir: str | os.PathLike[str], line: str, record: str) -> None:
    """Append one event's line and record under an exclusive lock on progress.log: a hook and
    the supervisor writing at the same moment would otherwise put their events in one order
    in progress.log and the other in events.jsonl, and a script pairing them would break."""
    found = redact.secrets()
    line, record = redact.text(line, found)[0], redact.text(record, found)[0]
    fd = agentfs.open_append(os.path.join(run_dir, PROGRESS_FILE))
    try:
        disk.lock(fd)
        os.write(fd, line.encode("utf-8", "replace"))
        _append(os.path.join(run_dir, EVENTS_FILE), record)
    finally:
        os.close(fd)  # closing releases the lock


def _append(path: str, text: str) -> None:
    """One O_APPEND write: lines from parallel hooks and the supervisor never interleave."""
    fd = agentfs.open_append(path)
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    finally:
        os.close(fd)


def json_object(fields: dict[str, str | None]) -> str:
    """A flat JSON object, written without the json module: hooks import this module after
    every agent turn, and json (with re and enum) would double their start-up. Also the
    hooks' answers to the CLIs (hook.py)."""
    return "{" + ", ".join(f"{json_string(k)}: {'null' if v is None else json_string(v)}"
                           for k, v in fields.items()) + "}"


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\b": "\\b", "\f": "\\f"}


def json_string(text: str) -> str:
    """A JSON string literal escaped exactly as `json.dumps(text, ensure_ascii=False)` does:
    a script reads events.jsonl with any JSON parser."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
