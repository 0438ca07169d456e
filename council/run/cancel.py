"""Stopping a run: from inside (a signal to the supervisor: its agents' process trees are
stopped and the state says `cancelled`) or from another process (`council cancel`), and the
agents an earlier supervisor left running when it died."""

from __future__ import annotations

import signal
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

from council import spawn
from council.errors import CouncilError, UsageError
from council.store import events, sessions
from council.store.progress import utc_now
from council.store.runlock import RunLock, live_supervisor
from council.store.state import ENDED, RunEnd, RunState, SeatStatus, StateFile, States, load_state
from council.store.workspace import Workspace, active_runs, find_run

Recorded = tuple[str, int, float]  # (seat, pid, the pid's start time when it was recorded)


def choose(active: Sequence[str]) -> str | None:
    """Which active run `council cancel` without an id stops: the only one, or None when
    none is active; with several, the user names one (a UsageError listing them)."""
    if len(active) > 1:
        raise UsageError(f"{len(active)} runs are active ({', '.join(active)}): name the one "
                         f"to cancel, e.g. `council cancel {active[-1]}`")
    return active[0] if active else None


def pick(run_id: str | None, base: Path | None = None) -> Workspace:
    """The run `council cancel [RUN_ID]` stops: the one named; else the one run a supervisor
    holds now (never merely the newest-looking folder); else the latest run, whose agents
    may have outlived a supervisor that died."""
    if run_id is not None:
        return find_run(run_id, base, act="cancel")
    active = active_runs(base)
    chosen = choose([ws.id for ws in active])
    if chosen:
        return next(ws for ws in active if ws.id == chosen)
    return find_run(None, base, act="cancel")


def since_boot(recorded: Sequence[Recorded], boot: float,
               now: float) -> tuple[list[Recorded], list[Recorded]]:
    """(the agents started since the machine booted, the rest). A process from before the
    boot is gone; its pid, and a session of that id, may now be another program's; a start
    time after now was never a process's (a state file was edited): the second list must
    never be swept."""
    def plausible(r: Recorded) -> bool:
        return boot <= r[2] <= now

    return ([r for r in recorded if plausible(r)], [r for r in recorded if not plausible(r)])


def stop_orphans(ws: Workspace, state: RunState, grace: float) -> list[str]:
    """Agents whose supervisor died (kill -9, crash) may still be running: stop them before
    anything else touches their files. Not those recorded before the machine last booted
    (they died with it) or after now (never a real start): their pids may now be anyone's
    (progress.log says so)."""
    # A seat can be at work in two phases at once (research beside its dissent): every
    # running phase's process, not one per seat.
    recorded = [(name, ap.pid, ap.pid_started)
                for name, rec in state.agents.items()
                for ap in rec.phases.values()
                if ap.pid and ap.pid_started and ap.status == SeatStatus.RUNNING]
    current, earlier = since_boot(recorded, psutil.boot_time(), time.time())
    if earlier:
        log_event(ws, "no orphan sweep for "
                  + ", ".join(f"{name} (pid {pid})" for name, pid, _ in earlier)
                  + ": their recorded start is before the machine last booted (they are "
                  "gone) or in the future, so their pids may now be another program's")
    stopped = set(spawn.stop_orphans([(pid, started) for _, pid, started in current], grace))
    return sorted({name for name, pid, _ in current if pid in stopped})


def mark_cancelled(states: States, why: str) -> list[str]:
    """Record the run and every unfinished agent as cancelled, in its owner (the supervisor
    on a signal) or its file (`council cancel` with no supervisor); returns those agents."""
    stopped: list[str] = []

    def change(state: RunState) -> None:
        state.phase, state.error, state.ended_at = (RunEnd.CANCELLED, f"cancelled by {why}",
                                                    utc_now())
        for name, rec in state.agents.items():
            for ap in rec.phases.values():
                if ap.status == SeatStatus.CANCELLED:
                    stopped.append(name)
                if ap.status in (SeatStatus.RUNNING, SeatStatus.QUEUED, SeatStatus.PENDING):
                    ap.status, ap.error = SeatStatus.CANCELLED, f"cancelled by {why}"
                    stopped.append(name)

    states.update(change)
    return sorted(set(stopped))


def cancel_run(ws: Workspace) -> str:
    """Stop a run from another process: signal its supervisor, which stops its agents and
    records `cancelled`; with no live supervisor, stop its orphaned agents directly."""
    state = load_state(ws.root)
    if state.phase in ENDED:
        raise CouncilError(f"run {ws.id} has already ended ({state.phase}); nothing to cancel")
    options = state.options
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
        stopped = mark_cancelled(StateFile(ws.root), "council cancel")
        unlogged = log_event(ws, "cancelled by council cancel" +
                             (f"; stopped {', '.join(orphans)}" if orphans else ""))
    return (f"cancelled run {ws.id}" + (f"; stopped {', '.join(stopped)}" if stopped else "")
            + unlogged)


def log_event(ws: Workspace, message: str) -> str:
    """Note a run's event in its progress.log; "" once it is, else what stopped it, to end
    the line that tells the user: an adopted folder came with whatever its author left at
    that name (a link to a file of the user's, a FIFO), which is refused, never written
    through (store/agentfs.py)."""
    try:
        events.emit(ws.root, "run", message)
    except OSError as exc:
        why = f"{exc.filename}: {exc.strerror}" if exc.strerror else str(exc)
        return f" (not logged: {why})"
    return ""


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
