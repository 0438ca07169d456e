"""`council status`, MCP `research_status`: how a run is. Its phase word and its percent
are views/status.py's (shown_phase, percent), the ones the live view draws, so every surface
says the same."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from council.commands import TEXT
from council.evidence import asking, finalreport, ledger, reportcheck
from council.store import agentfs, provenance
from council.store.progress import PROGRESS_FILE
from council.store.runlock import live_supervisor
from council.store.state import ENDED, RunEnd, RunState, readable
from council.store.workspace import Workspace, find_run
from council.views import status as views
from council.views.status import AgentRow, Overview

PROGRESS_LINES = 12  # progress.log's last lines in a status
MAX_WAIT = 55  # seconds research_status may wait: under the 60 s many clients allow a call


@dataclass(frozen=True)
class Paths:
    run_dir: str
    progress_log: str
    final_report: str
    report_html: str
    sources_json: str


def paths(ws: Workspace) -> Paths:
    return Paths(str(ws.root), str(ws.root / PROGRESS_FILE), str(ws.final_report),
                 str(ws.root / "report.html"), str(ws.root / "sources.json"))


@dataclass(frozen=True)
class Status:
    """A run's status: `council status --json` prints it, research_status answers with it."""

    id: str
    topic: str
    phase: str  # views.shown_phase: the word every surface shows
    state_phase: str  # the state's own phase
    percent: int  # views.percent: how far, as the live view says it
    ended: bool  # ended and let go by its supervisor: the progress log is whole
    plan: str
    supervisor_pid: int | None
    created_at: str
    ended_at: str | None
    error: str | None
    final_report: str | None
    budget_exhausted: str | None
    completeness: dict[str, Any] | None
    spent: dict[str, Any]
    usage: list[dict[str, Any]]  # per agent and phase: tokens in (of them cached), out, the cost
    phases: list[dict[str, Any]]  # per phase that ran: its cost and what it changed
    agents: list[AgentRow]
    asks: list[str]  # the follow-up answers (`council ask`), oldest first
    # A done run's seats that did not contribute (or only in part), each and why, with the
    # reset of a plan limit or quota: `codex: plan limit until 2026-11-30 00:53 UTC`.
    missing: list[str]
    own: bool  # made by council on this machine (store/provenance.py)
    progress: list[str]  # progress.log's last lines
    paths: Paths
    overview: Overview = field(metadata=TEXT)  # `council status`'s text, from the same facts
    # integrity.json's figures without its items (evidence/reportcheck.py); None before it
    integrity: dict[str, Any] | None


def status(run_id: str | None, base: Path) -> Status:
    """The status of run `run_id` (the latest by default)."""
    ws = find_run(run_id, base)
    return of(readable(ws.root), ws)


def of(state: RunState, ws: Workspace) -> Status:
    phase = views.shown_phase(state, ws)
    shown = views.overview(state, ws, phase=phase)
    holder = live_supervisor(ws.root)  # before the log: once it has let go, every line is in
    lines = tail(ws.root / PROGRESS_FILE, PROGRESS_LINES)
    return Status(
        state.id, state.topic, phase, state.phase, views.percent(state),
        ended(phase, holder is not None), views.plan_line(state),
        holder.pid if holder else None, state.created_at, state.ended_at, state.error,
        str(ws.final_report) if ws.final_report.is_file() else None, state.budget_exhausted,
        state.completeness, ledger.spent(state).to_dict(), ledger.by_phase(state),
        [a.to_dict() for a in views.phase_accounts(state, ws)], shown.agents,
        [str(ws.root / asking.ASKS / name) for name in asking.listed(ws.root)],
        missing_of(state), provenance.is_own(ws.root), lines, paths(ws), shown,
        integrity=reportcheck.figures(ws))


def missing_of(state: RunState) -> list[str]:
    """The seats a done run finished without, each and why (finalreport.missing)."""
    if state.phase != RunEnd.DONE:
        return []
    return [m.describe() for m in finalreport.missing(state)]


def without(state: RunState) -> str:
    """What a surface adds to a done run's line when it lost seats: "" for a full run."""
    lost = missing_of(state)
    return (f"; finished without {'; '.join(lost)} (`council resume {state.id}` tries "
            "again where it can)" if lost else "")


def ended(phase: str, held: bool) -> bool:
    """A run has ended once its phase says so and its supervisor has let go of it: it marks
    the phase first and writes the last progress line after, so a client told `ended` on
    the phase alone could read a log without its last line."""
    return phase in ENDED and not held


def tail(path: Path, count: int, limit: int = 64 << 10) -> list[str]:
    """The last `count` lines of a log (read from its last `limit` bytes, no link
    followed)."""
    try:
        data, cut = agentfs.tail(path, limit)
    except OSError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    if cut:
        lines = lines[1:]  # the first is cut
    return [line for line in lines if line.strip()][-count:]


def next_step(run_id: str, phase: str, missing: Sequence[str] = ()) -> str:
    """What an MCP client can do next, in one sentence (some clients show the model only
    the structured data)."""
    if phase == RunEnd.DONE:
        return (f"get_report with run_id {run_id} gives the final report"
                + (f"; the run finished without {'; '.join(missing)}: `council resume "
                   f"{run_id}` in a terminal tries again where it can" if missing else ""))
    what = {RunEnd.FAILED: "failed", RunEnd.CANCELLED: "was cancelled",
            views.INTERRUPTED: "was interrupted (no supervisor holds it)"}.get(phase)
    if what:
        return (f"the run {what}; `council resume {run_id}` in a terminal continues it; "
                "research_status says why")
    return (f"research_status with run_id {run_id} and wait {MAX_WAIT} answers when it ends "
            "(call it again until ended is true), then get_report")


def end_line(state: RunState, ws: Workspace) -> str:
    """How a followed run (`council watch`) ended: its final report, or its phase word and
    its error."""
    if ws.final_report.is_file() and state.phase == RunEnd.DONE:
        return f"final report: {ws.final_report}"
    return (f"run {ws.id} ended: {views.shown_phase(state, ws)}"
            + (f" ({state.error})" if state.error else ""))
