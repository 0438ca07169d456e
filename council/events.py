"""The supervisor's events: one structlog event writes both the progress.log line (for people
and `tail -f`) and the events.jsonl record (for scripts).

structlog is configured once, here, the first time a supervisor event is logged. The hooks
that run after every agent turn do not import this module: they use progress.emit, a minimal
writer of the same two formats (tests/test_events.py proves the lines are identical), because
structlog's import would add ~70 ms to every hook.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import MutableMapping
from typing import Any

import structlog

from council import progress

_configured = threading.Lock()
_done = False


class RunFiles:
    """structlog's output for one run folder: appends the rendered line and record."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.run_dir = os.fspath(run_dir)

    def info(self, line: str, record: str) -> None:
        progress.write_event(self.run_dir, line, record)


def _stamp(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    event.setdefault("time", progress.stamp())
    return event


def _render(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """The event as `TIME SCOPE [AGENT] MESSAGE` and as a JSON object with those four keys.
    The message is folded to one line first, so a CLI's multi-line error stays one event."""
    message = " ".join(str(event["event"]).split())
    agent = event.get("agent")
    line = f"{event['time']} {event['scope']}{f' {agent}' if agent else ''} {message}\n"
    record = json.dumps({"time": event["time"], "scope": event["scope"], "agent": agent or None,
                         "message": message}, ensure_ascii=False) + "\n"
    return {"line": line, "record": record}


def _configure() -> None:
    global _done
    with _configured:
        if not _done:
            structlog.configure(processors=[_stamp, _render], logger_factory=RunFiles,
                                wrapper_class=structlog.BoundLogger,
                                cache_logger_on_first_use=False)
            _done = True


def emit(run_dir: str | os.PathLike[str], scope: str, message: str,
         agent: str | None = None) -> None:
    """Log one event of the run (`scope` "run") or of a phase, by one agent or the whole
    phase (`agent` None): `2026-11-21T14:31:00.123Z research codex iteration 2/10`."""
    if not _done:
        _configure()
    structlog.get_logger(run_dir).info(message, scope=scope, agent=agent)
