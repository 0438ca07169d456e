"""The supervisor's events, through structlog: a task binds its `phase` and `agent` once
(`bound`, structlog.contextvars), and every event it logs from then on (`say`) carries them,
however deep in the call the event is raised. structlog only merges that context; the line
and the record are written by progress.emit, the one writer and renderer of progress.log and
events.jsonl, which the hooks call directly (structlog's import, ~100 ms, would be most of a
hook's time).

structlog is imported and configured here, the first time an event is logged or a task
binds: a command that only reads runs (status, list, report) never loads it. The
supervisor's own tasks are the only ones that bind: a seat's task binds its phase and seat
for its whole turn at a phase (runner.run_seat), so whatever that task and the tasks it
starts log is the seat's.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

from council.store import progress

_configured = threading.Lock()
_done = False


class RunFiles:
    """structlog's output for one run folder: one event, to progress.emit."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.run_dir = run_dir

    def info(self, scope: str, agent: str | None, message: str) -> None:
        progress.emit(self.run_dir, scope, message, agent=agent)


def _fields(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """The event as progress.emit's arguments: an event with no phase bound or given is the
    run's own."""
    return {"scope": event.get("phase") or "run", "agent": event.get("agent"),
            "message": str(event["event"])}


def _configure() -> None:
    global _done
    import structlog
    from structlog.contextvars import merge_contextvars

    with _configured:
        if not _done:
            structlog.configure(processors=[merge_contextvars, _fields], logger_factory=RunFiles,
                                wrapper_class=structlog.BoundLogger,
                                cache_logger_on_first_use=False)
            _done = True


def _log(run_dir: str | os.PathLike[str], message: str, **given: str | None) -> None:
    if not _done:
        _configure()
    import structlog  # loaded by _configure: a lookup in sys.modules

    structlog.get_logger(run_dir).info(message, **given)


def emit(run_dir: str | os.PathLike[str], scope: str, message: str,
         agent: str | None = None) -> None:
    """Log one event of the run (`scope` "run") or of a phase, by one agent or the whole
    phase (`agent` None), whatever the task has bound: `2026-11-21T14:31:00.123Z research
    codex iteration 2/10`. For events that are not the bound seat's (the run's budget, a
    phase's own news)."""
    _log(run_dir, message, phase=scope, agent=agent)


def say(run_dir: str | os.PathLike[str], message: str) -> None:
    """Log one event of the phase and agent the current task has bound (`bound`)."""
    _log(run_dir, message)


@contextmanager
def bound(phase: str, agent: str | None = None) -> Iterator[None]:
    """Bind `phase` and `agent` for the current task (and the tasks and threads it starts)
    until the block ends: `say` then needs neither."""
    from structlog.contextvars import bound_contextvars

    with bound_contextvars(phase=phase, agent=agent):
        yield
