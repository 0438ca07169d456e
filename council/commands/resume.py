"""`council resume`: continue a run after a crash, kill or cancel (its supervising is the
command line's, run/supervisor.py); and the line that says how."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from council import paths
from council.commands import TEXT
from council.store.state import readable
from council.store.workspace import Workspace, find_run


@dataclass(frozen=True)
class Resumable:
    run_id: str
    rebuilt: str | None  # --rebuild: what the rebuild of its state said
    ws: Workspace = field(metadata=TEXT)


def resumable(run_id: str, rebuild: bool, base: Path) -> Resumable:
    """The run to resume, its state readable (or, with `rebuild`, rebuilt from its reports:
    the corrupt file is kept)."""
    ws = find_run(run_id, base, require_state=not rebuild, act="resume")
    if not rebuild:
        readable(ws.root)
        return Resumable(ws.id, None, ws)
    from council.run.recovery import rebuild as rebuild_state

    return Resumable(ws.id, rebuild_state(ws), ws)


def hint(ws: Workspace, base: Path) -> str:
    """How to go on with a run that was stopped: the command, with the research folder when
    it is not the one `council resume` finds by default."""
    where = "" if base == paths.research_dir() else f" --research-dir {shlex.quote(str(base))}"
    return f"continue it with: council resume {ws.id}{where}"
