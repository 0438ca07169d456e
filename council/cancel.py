"""Stopping a run: from inside (a signal to the supervisor: its agents' process trees are
stopped and the state says `cancelled`) or from another process (`council cancel`), and the
agents an earlier supervisor left running when it died."""

from __future__ import annotations

import signal
import time

import psutil

from council import events, sessions, spawn
from council.config import RunOptions
from council.errors import CouncilError
from council.progress import utc_now
from council.runlock import RunLock, live_supervisor
from council.state import RunState, load_state, update_state
from council.workspace import Workspace

ENDED = ("done", "failed", "cancelled")


def stop_orphans(ws: Workspace, state: RunState, grace: float) -> list[str]:
    """Agents whose supervisor died (kill -9, crash) may still be running: stop them before
    anything else touches their files."""
    # A seat can be at work in two phases at once (research beside its dissent): every
    # running phase's process, not one per seat.
    recorded = [(name, ap.pid, ap.pid_started)
                for name, rec in state.agents.items()
                for ap in rec.phases.values()
                if ap.pid and ap.pid_started and ap.status == "running"]
    stopped = set(spawn.stop_orphans([(pid, started) for _, pid, started in recorded], grace))
    return sorted({name for name, pid, _ in recorded if pid in stopped})


def mark_cancelled(ws: Workspace, why: str) -> list[str]:
    """Record the run and every unfinished agent as cancelled; returns those agents."""
    stopped: list[str] = []

    def change(state: RunState) -> None:
        state.phase, state.error, state.ended_at = "cancelled", f"cancelled by {why}", utc_now()
        for name, rec in state.agents.items():
            for ap in rec.phases.values():
                if ap.status == "cancelled":
                    stopped.append(name)
                if ap.status in ("running", "queued", "pending"):
                    ap.status, ap.error = "cancelled", f"cancelled by {why}"
                    stopped.append(name)

    update_state(ws.root, change)
    return sorted(set(stopped))


def cancel_run(ws: Workspace) -> str:
    """Stop a run from another process: signal its supervisor, which stops its agents and
    records `cancelled`; with no live supervisor, stop its orphaned agents directly."""
    state = load_state(ws.root)
    if state.phase in ENDED:
        raise CouncilError(f"run {ws.id} has already ended ({state.phase}); nothing to cancel")
    options = RunOptions.from_dict(state.options)
    holder = live_supervisor(ws.root)
    proc = holder.process() if holder else None
    if proc is not None:
        sessions.release_run(ws.root.parent, ws.id)
        proc.send_signal(signal.SIGTERM)
        if not _wait_gone(proc, options.grace_period + 30):
            raise CouncilError(f"the supervisor of run {ws.id} (pid {proc.pid}) did not stop "
                               "within its grace period; try again or kill it")
        return f"cancelled run {ws.id}: its supervisor (pid {proc.pid}) stopped its agents"
    sessions.release_run(ws.root.parent, ws.id)  # a Claude session waiting on it may stop
    with RunLock(ws.root):
        orphans = stop_orphans(ws, state, options.grace_period)
        stopped = mark_cancelled(ws, "council cancel")
        events.emit(ws.root, "run", "cancelled by council cancel" +
                    (f"; stopped {', '.join(orphans)}" if orphans else ""))
    return f"cancelled run {ws.id}" + (f"; stopped {', '.join(stopped)}" if stopped else "")


def _wait_gone(proc: psutil.Process, timeout: float) -> bool:
    """Wait for a process that is not our child: it is gone once it has exited, even if its
    parent has not reaped it yet (a zombie)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)  # polling a process we cannot wait() on
    return False
