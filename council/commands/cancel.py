"""`council cancel`, MCP `cancel_research`: stop a running council; its files are kept."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from council.errors import CouncilError
from council.run.cancel import cancel_run, pick
from council.store.state import readable
from council.views.status import shown_phase


@dataclass(frozen=True)
class Cancelled:
    run_id: str
    message: str
    phase: str | None  # the phase word after the cancel (None: its state cannot be read)


def cancel(run_id: str | None, base: Path) -> Cancelled:
    """Stop run `run_id`, or (none named) the one run a supervisor holds now, else the
    latest (run/cancel.pick)."""
    ws = pick(run_id, base)
    message = cancel_run(ws)
    try:
        phase: str | None = shown_phase(readable(ws.root), ws)
    except CouncilError:
        phase = None
    return Cancelled(ws.id, message, phase)
