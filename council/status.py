"""What `council status` shows: the run's phase and one row per agent. Pure: it builds rows
from a state and the run folder; cli.py prints them."""

from __future__ import annotations

import calendar
import time
from dataclasses import asdict, dataclass
from typing import Any

from council import budget
from council.ledger import Usage, format_usage
from council.progress import PROGRESS_FILE
from council.runlock import live_supervisor
from council.state import PHASES, RunState
from council.workspace import Workspace


@dataclass(frozen=True)
class AgentRow:
    agent: str
    cli: str
    phase: str
    status: str
    iteration: int
    max_iterations: int
    elapsed_s: float | None
    output_bytes: int | None
    error: str | None
    tokens: int = 0
    cost_usd: float | None = None
    cost_estimated: bool = False
    last_event: str | None = None
    quiet_s: float | None = None  # a running agent: seconds since its last output


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))


def rows(state: RunState, ws: Workspace, now: float | None = None) -> list[AgentRow]:
    """One row per agent, for the latest phase it took part in."""
    now = time.time() if now is None else now
    events = last_events(ws)
    out = []
    for name, rec in state.agents.items():
        phase = next((p for p in reversed(PHASES) if p in rec.phases), None)
        if phase is None:
            out.append(AgentRow(name, rec.cli, "-", "pending", 0, 0, None, None, None))
            continue
        ap = rec.phases[phase]
        start, end = _epoch(ap.started_at), _epoch(ap.ended_at)
        elapsed = None if start is None else (end or now) - start
        size = None
        for path in (ws.working_output(name, phase), ws.published_output(name, phase)):
            if path.is_file():
                size = path.stat().st_size
                break
        used = sum((Usage.from_dict(p.usage) for p in rec.phases.values()), Usage())
        quiet = None
        if ap.status == "running":
            changed = [path.stat().st_mtime for path in (
                ws.log_file(name, phase), ws.stderr_file(name, phase),
                ws.working_output(name, phase)) if path.is_file()]
            quiet = max(now - max(changed), 0.0) if changed else elapsed
        out.append(AgentRow(name, rec.cli, phase, ap.status, ap.iteration, ap.max_iterations,
                            elapsed, size, ap.error, used.tokens, used.cost_usd, used.estimated,
                            events.get(name), quiet))
    return out


def last_events(ws: Workspace) -> dict[str, str]:
    """Each agent's latest progress.log line (without time and phase)."""
    events: dict[str, str] = {}
    try:
        lines = (ws.root / PROGRESS_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return events
    for line in lines:
        words = line.split(" ", 3)
        if len(words) == 4 and words[1] in PHASES:
            events[words[2]] = words[3]
    return events


def shown_phase(state: RunState, ws: Workspace) -> str:
    """The phase, or `interrupted` when the run is mid-phase but no supervisor holds it
    (it crashed, was killed, or the machine rebooted): `council resume` continues it."""
    if state.phase == "synthesis" and state.synthesizer == "main-session":
        return "synthesis"  # the Claude Code session writes it: no supervisor is expected
    if state.phase in PHASES and live_supervisor(ws.root) is None:
        return "interrupted"
    return state.phase


def as_json(state: RunState, ws: Workspace) -> dict[str, Any]:
    holder = live_supervisor(ws.root)
    return {
        "id": state.id,
        "topic": state.topic,
        "phase": shown_phase(state, ws),
        "state_phase": state.phase,
        "supervisor_pid": holder.pid if holder else None,
        "created_at": state.created_at,
        "ended_at": state.ended_at,
        "error": state.error,
        "final_report": str(ws.final_report) if ws.final_report.is_file() else None,
        "budget_exhausted": state.budget_exhausted,
        "completeness": state.completeness,
        "spent": budget.spent(state).to_dict(),
        "agents": [asdict(r) for r in rows(state, ws)],
    }


def as_text(state: RunState, ws: Workspace) -> str:
    topic = " ".join(state.topic.split())
    topic = topic if len(topic) <= 70 else topic[:67] + "..."
    phase = shown_phase(state, ws)
    if phase == "interrupted":
        phase = f"interrupted in {state.phase} (no supervisor): council resume {state.id}"
    lines = [f"run    {state.id}", f"topic  {topic}", f"phase  {phase}"]
    if state.error:
        lines.append(f"error  {state.error}")
    spent = budget.spent(state)
    lines.append(f"spent  {format_usage(spent)}"
                 + (" (~ estimated from list prices)" if spent.estimated else "")
                 + (f"; budget reached: {state.budget_exhausted}" if state.budget_exhausted
                    else ""))
    if state.completeness:
        done = state.completeness
        lines.append(f"score  {done['score']}/100 completeness (cap {done['cap']}: "
                     f"{done['cap_reason']}" + (", provisional" if state.phase != "done" else "")
                     + ")")
    lines.append("")
    lines.append(f"{'agent':<14} {'phase':<11} {'status':<10} {'iter':>7} {'elapsed':>8} "
                 f"{'output':>9} {'tokens':>8} {'cost':>8}")
    for r in rows(state, ws):
        it = f"{r.iteration}/{r.max_iterations}" if r.max_iterations else "-"
        el = "-" if r.elapsed_s is None else _duration(r.elapsed_s)
        size = "-" if r.output_bytes is None else _size(r.output_bytes)
        line = (f"{r.agent:<14} {r.phase:<11} {r.status:<10} {it:>7} {el:>8} {size:>9} "
                f"{_tokens(r.tokens):>8} {_cost(r.cost_usd, r.cost_estimated):>8}")
        if r.quiet_s is not None:
            line += f"  last output {_duration(r.quiet_s)} ago"
        if r.error:
            line += f"  {' '.join(r.error.split())[:80]}"
        lines.append(line)
    if ws.final_report.is_file():
        lines += ["", f"final report: {ws.final_report}"]
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def _tokens(n: int) -> str:
    return "-" if not n else (f"{n / 1000:.1f}k" if n >= 1000 else str(n))


def _cost(cost: float | None, estimated: bool) -> str:
    return "-" if cost is None else f"{'~' if estimated else ''}${cost:.2f}"


LIST_HEADER = (f"{'run':<22}  {'phase':<11} {'started':<20}  {'duration':>8}  {'cost':>8}  "
               "topic")


def run_line(state: RunState, ws: Workspace) -> str:
    """One line per run for `council list`."""
    start = _epoch(state.created_at)
    end = _epoch(state.ended_at) or time.time()
    duration = "-" if start is None else _duration(end - start)
    spent = budget.spent(state)
    topic = " ".join(state.topic.split())
    topic = topic if len(topic) <= 50 else topic[:47] + "..."
    return (f"{state.id}  {shown_phase(state, ws):<11} {state.created_at}  {duration:>8}  "
            f"{_cost(spent.cost_usd, spent.estimated):>8}  {topic}")
