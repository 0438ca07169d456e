"""What `council resume` may start from, beyond a run council made and left as it was.

- `council resume --rebuild`: a run whose state.yaml is corrupt (or gone) gets a new one,
  rebuilt from what the run folder holds: run.json (the topic and options, written once when
  the run was created) and the published reports. Every report found counts as that agent's
  finished work for its phase; everything else is done again. The corrupt file is kept.
- `council adopt`: a run folder council did not make on this machine (store/provenance.py),
  which the user moved there themselves, becomes council's once they have seen what its
  seats would run: resuming it starts each recorded seat's CLI with its recorded
  `extra_args` and `env`, exactly as trusting a council.yaml would. Only a person adopts: the
  record is refused under an agent (trust.refuse_an_agent), whoever calls `adopt`."""

from __future__ import annotations

import json
import time
from pathlib import Path

from council import graph, trust
from council.errors import StateError
from council.run.cancel import log_event
from council.store import events, loop, provenance, snapshots
from council.store.progress import utc_now
from council.store.state import (
    RUN_SPEC,
    STATE_FILE,
    AgentPhase,
    AgentRecord,
    RunState,
    SeatStatus,
    StateFile,
    load_state,
    read_spec,
    replace_state,
)
from council.store.workspace import Workspace

# The agents' own research reports, one file per seat (dissent.md is one for the run: it is
# redone).
REPORT_PHASES = tuple(p.name for p in graph.GRAPH if p.report and p.per_seat)


def rebuild(ws: Workspace) -> str:
    """Write a new state.yaml for the run from its folder; one line saying what was kept."""
    try:
        state = read_spec(ws.root)
    except (OSError, ValueError, KeyError, TypeError, StateError) as exc:
        raise StateError(f"cannot rebuild run {ws.id}: {ws.root / RUN_SPEC} is missing or "
                         f"unreadable ({exc}); the run cannot be resumed") from exc
    options = state.options
    kept, bound = [], loop.report_bound(options.max_report_bytes)
    for seat in options.seats:
        record = state.agents[seat.name] = AgentRecord(cli=seat.cli, model=seat.model)
        for phase in REPORT_PHASES:
            path = ws.published_output(seat.name, phase)
            has_text, complete = loop.report_facts(path, bound)
            if not has_text:
                continue
            record.phases[phase] = AgentPhase(
                status=SeatStatus.COMPLETE if complete else SeatStatus.STOPPED,
                sha256=snapshots.digest(path),
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


def adoption(ws: Workspace) -> list[str]:
    """What the user takes on by adopting the run: its topic, phase and, per seat, the CLI,
    model, `extra_args`, `env` and `fallback` a resume would start. Values are JSON-quoted:
    the folder's author wrote them, and no escape code or newline reaches the terminal."""
    state = load_state(ws.root)
    options = state.options
    lines = [f"run {ws.id} in {ws.root}: phase {state.phase}, "
             f"topic {json.dumps(' '.join(state.topic.split())[:120])}",
             f"config: {json.dumps(options.config_file) if options.config_file else 'none'}"
             f" ({json.dumps(options.config_trust or 'not judged')} where it was made)"]
    for seat in options.seats:
        bits = [f"cli {seat.cli}",
                f"model {json.dumps(seat.model) if seat.model else 'its CLI default'}"]
        bits += [f"extra_args {json.dumps(list(seat.extra_args))}"] if seat.extra_args else []
        bits += [f"env {json.dumps(list(seat.env))}"] if seat.env else []
        bits += [f"fallback {seat.fallback}"] if seat.fallback else []
        lines.append(f"  {seat.name}: {'; '.join(bits)}")
    if not any(s.extra_args or s.env for s in options.seats):
        lines.append("  no seat has extra_args or env")
    return lines


def adopt(ws: Workspace) -> str:
    """Record the run as council's own (provenance.py): from now on it may be resumed,
    cancelled and written into like a run made here. The agent processes its state names
    were recorded by whoever made the folder, elsewhere or before it came here: none is an
    agent council started on this machine, and a pid with its start time can be read off
    any process of the user's. So they are forgotten first, and no sweep (`council cancel`,
    a resume) ever signals them. Refused under an agent, before anything is written."""
    trust.refuse_an_agent("nothing was adopted")
    forgotten = StateFile(ws.root).update(_forget_processes)
    provenance.record(ws.root)
    said = (f"adopted run {ws.id}: council now treats {ws.root} as its own "
            f"(`council resume {ws.id}` continues it)")
    if not forgotten:
        return said
    many = len(forgotten) > 1
    what = (f"the {len(forgotten)} agent process{'es' if many else ''} its state names "
            f"({', '.join(forgotten)}) {'were' if many else 'was'} not started here: council "
            f"will not stop {'them' if many else 'it'}")
    return said + f"; {what}" + log_event(ws, f"adopted; {what}")


def _forget_processes(state: RunState) -> list[str]:
    """Drop every agent process the state records; those dropped, as `seat (pid N)`."""
    forgotten = []
    for name, rec in state.agents.items():
        for ap in rec.phases.values():
            if ap.pid is not None or ap.pid_started is not None:
                forgotten += [f"{name} (pid {ap.pid})"] if ap.pid else []
                ap.pid = ap.pid_started = None
    return sorted(set(forgotten))
