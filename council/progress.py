"""progress.log: one human line per event, so `tail -f` shows a run live.

Each line is written with a single O_APPEND write, so lines from parallel hooks and the
supervisor never interleave, and nothing is buffered. Hooks import this module: it uses only
`os` and `time`.
"""

from __future__ import annotations

import os
import time

PROGRESS_FILE = "progress.log"
EVENTS_FILE = "events.jsonl"


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def stamp() -> str:
    """A progress line's time, to the millisecond: events a few ms apart stay in order."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def format_line(*parts: str) -> str:
    text = " ".join(p for p in parts if p)
    # One event, one line: a multi-line message (an error from a CLI) is folded.
    return f"{stamp()} {' '.join(text.split())}\n"


def emit(run_dir: str | os.PathLike[str], *parts: str) -> None:
    """Append e.g. `2026-11-21T14:31:00.123Z research codex iteration 2/10` to
    progress.log, and the same event as one JSON object to events.jsonl, for scripts:
    `{"time": …, "scope": "research", "agent": "codex", "message": "iteration 2/10"}`.
    The scope is the phase or "run"; an agent's name follows its phase (`emit(run, phase,
    agent, message)`); an event of the whole phase has no agent (`emit(run, phase, message)`)."""
    line = format_line(*parts)
    time_, _, rest = line.rstrip("\n").partition(" ")
    scope, _, message = rest.partition(" ")
    agent = None
    if len(parts) >= 3 and scope != "run":
        agent, _, message = message.partition(" ")
    fields = {"time": time_, "scope": scope, "agent": agent, "message": message}
    _append(os.path.join(run_dir, PROGRESS_FILE), line)
    _append(os.path.join(run_dir, EVENTS_FILE), json_object(fields) + "\n")


def _append(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    finally:
        os.close(fd)


def json_object(fields: dict[str, str | None]) -> str:
    """A flat JSON object, written without the json module: hooks import this module after
    every agent turn, and json (with re and enum) would double their start-up."""
    return "{" + ", ".join(f"{json_string(k)}: {'null' if v is None else json_string(v)}"
                           for k, v in fields.items()) + "}"


def json_string(text: str) -> str:
    """A JSON string literal (RFC 8259): quote, backslash and control characters escaped."""
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch < " " or "\ud800" <= ch <= "\udfff" or ch in "\u2028\u2029\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
