"""`council resume --rebuild`: a run whose state.yaml is corrupt (or gone) gets a new one,
rebuilt from what the run folder holds: run.json (the topic and options, written once when
the run was created) and the published reports. Every report found counts as that agent's
finished work for its phase; everything else is done again. The corrupt file is kept."""

from __future__ import annotations

import json
import time
from pathlib import Path

from council import graph
from council.config import RunOptions
from council.errors import StateError
from council.store import events, loop, snapshots
from council.store.progress import utc_now
from council.store.state import (
    RUN_SPEC,
    STATE_FILE,
    AgentPhase,
    AgentRecord,
    RunState,
    replace_state,
)
from council.store.workspace import Workspace

# The agents' own research reports, one file per seat (dissent.md is one for the run: it is
# redone).
REPORT_PHASES = tuple(p.name for p in graph.GRAPH if p.report and p.per_seat)


def rebuild(ws: Workspace) -> str:
    """Write a new state.yaml for the run from its folder; one line saying what was kept."""
    try:
        spec = json.loads((ws.root / RUN_SPEC).read_text(encoding="utf-8"))
        options = RunOptions.from_dict(spec["options"])
        state = RunState(id=str(spec["id"]), topic=str(spec["topic"]),
                         created_at=str(spec["created_at"]), options=dict(spec["options"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StateError(f"cannot rebuild run {ws.id}: {ws.root / RUN_SPEC} is missing or "
                         f"unreadable ({exc}); the run cannot be resumed") from exc
    kept, bound = [], loop.report_bound(options.max_report_bytes)
    for seat in options.seats:
        record = state.agents[seat.name] = AgentRecord(cli=seat.cli, model=seat.model)
        for phase in REPORT_PHASES:
            path = ws.published_output(seat.name, phase)
            has_text, complete = loop.report_facts(path, bound)
            if not has_text:
                continue
            record.phases[phase] = AgentPhase(
                status="complete" if complete else "stopped", sha256=snapshots.digest(path),
                output=path.name, ended_at=_stamp(path))
            kept.append(f"{seat.name} {phase}")
    old = ws.root / STATE_FILE
    if old.exists():
        old.replace(ws.root / f"{STATE_FILE}.corrupt-{time.strftime('%Y%m%dT%H%M%SZ')}")
    replace_state(ws.root, state)
    what = ", ".join(kept) if kept else "no finished report"
    events.emit(ws.root, "run", f"state rebuilt from {RUN_SPEC} and the reports: {what}")
    return f"rebuilt the state of run {ws.id} from its reports ({what}); the rest is redone"


def _stamp(path: Path) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(path.stat().st_mtime))
    except OSError:
        return utc_now()
