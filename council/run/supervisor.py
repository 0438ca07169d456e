"""Runs a council from start to end: creates the run, holds its lock and its state, runs the
phase graph (pipeline.py) and turns signals into a clean cancel.

Degrade, don't die: a seat that fails is left out of later phases and the run goes on; only
a phase where every seat failed stops the run. One signal-handling task at the root cancels
the run on SIGINT/SIGTERM; every agent's process tree is stopped and the state says
`cancelled`."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path

import anyio

from council import graph
from council.config import RunOptions
from council.errors import CouncilError, PhaseFailedError
from council.phases import RunContext
from council.phases.synthesis import MAIN_SESSION
from council.run import crash
from council.run.cancel import mark_cancelled, stop_orphans
from council.run.pipeline import run_graph, set_phase
from council.store import events, sessions
from council.store.owner import StateOwner, owned
from council.store.progress import utc_now
from council.store.runlock import RunLock
from council.store.state import AgentRecord, RunState, create_state
from council.store.workspace import Workspace, create_workspace
from council.views import page

EXIT_OK, EXIT_FAILED = 0, 1
SIGNAL_EXIT = {signal.SIGHUP: 129, signal.SIGINT: 130, signal.SIGTERM: 143}
HANDED_OVER = "handed over"  # the plugin's session writes the synthesis (handover.py)


@dataclass(frozen=True)
class RunResult:
    ws: Workspace
    exit_code: int
    message: str


def start_run(topic: str, options: RunOptions, base: Path | None = None) -> Workspace:
    """Create research/<id>/ with its state, ready for `execute`."""
    ws = create_workspace(base)
    crash.note_run(ws.root)
    state = RunState(
        id=ws.id,
        topic=topic,
        created_at=utc_now(),
        options=options.to_dict(),
        agents={s.name: AgentRecord(cli=s.cli, model=s.model) for s in options.seats},
    )
    create_state(ws.root, state)
    seats = ", ".join(f"{s.name} ({s.cli})" for s in options.seats)
    events.emit(ws.root, "run", f"{ws.id} created with {len(options.seats)} agents: {seats}")
    return ws


def execute(ws: Workspace, synthesise: bool = True) -> RunResult:
    """Run every remaining phase of the run in `ws` (all of them for a new run, what is left
    for a resumed one). Holds the run's lock throughout; never raises for agent failures
    (a failed run is a RunResult that says so).

    With `synthesise=False` (a host whose own session writes the report: the Claude Code
    plugin) every phase before the synthesis runs, and the synthesis is handed to that
    session: handover.handover gives it its instructions, handover.complete_handover stamps
    its report and ends the run."""
    crash.note_run(ws.root)
    # The supervisor owns the state for the whole run: in memory, mirrored to state.yaml,
    # and handed to every phase in the run's context.
    with RunLock(ws.root), owned(ws.root) as owner:
        state = owner.state
        if state.phase == "done":
            return RunResult(ws, EXIT_OK, f"run {ws.id} is already done: {ws.final_report}")
        if state.phase == graph.SYNTHESIS.name and state.synthesizer == MAIN_SESSION \
                and synthesise and sessions.is_bound(ws.root.parent, ws.id):
            raise CouncilError(f"run {ws.id} is waiting for its Claude Code session to write "
                               "the synthesis; cancel it first to resume it here")
        options = RunOptions.from_dict(state.options)
        orphans = stop_orphans(ws, state, options.grace_period)
        if orphans:
            events.emit(ws.root, "run", f"stopped agents left running by an earlier "
                        f"supervisor: {', '.join(orphans)}")
        return anyio.run(_execute, ws, owner, options, state.topic, synthesise)


async def _execute(ws: Workspace, owner: StateOwner, options: RunOptions, topic: str,
                   synthesise: bool) -> RunResult:
    limiter = anyio.CapacityLimiter(options.max_parallel) if options.max_parallel else None
    ctx = RunContext(ws, owner, options, topic, synthesise, limiter)
    received: list[signal.Signals] = []
    result: RunResult | None = None
    async with anyio.create_task_group() as root:
        root.start_soon(_watch_signals, root.cancel_scope, received)
        try:
            result = await _run(ctx)
        except PhaseFailedError as exc:
            set_phase(ws, owner, "failed", str(exc))
            page.publish(ws, owner.state)
            events.emit(ws.root, "run", f"failed: {exc}")
            result = RunResult(ws, EXIT_FAILED, str(exc))
        finally:
            root.cancel_scope.cancel()
    if received:
        sig = received[0]
        stopped = mark_cancelled(owner, sig.name)
        page.publish(ws, owner.state)
        message = f"cancelled by {sig.name}" + (f"; stopped {', '.join(stopped)}"
                                                if stopped else "")
        events.emit(ws.root, "run", message)
        return RunResult(ws, SIGNAL_EXIT[sig], message)
    assert result is not None
    return result


async def _watch_signals(scope: anyio.CancelScope, received: list[signal.Signals]) -> None:
    """The first SIGINT/SIGTERM/SIGHUP cancels the run; later ones are absorbed, so a second
    Ctrl-C cannot cut short the stopping of agents (a closed terminal sends SIGHUP, which
    would otherwise kill the supervisor and orphan its agents)."""
    with anyio.open_signal_receiver(*SIGNAL_EXIT) as signals:
        async for sig in signals:
            if not received:
                received.append(signal.Signals(sig))
                scope.cancel()


async def _run(ctx: RunContext) -> RunResult:
    """The graph, then the run's end: done, or handed to the plugin's session."""
    ws, owner = ctx.ws, ctx.owner
    await run_graph(ctx)
    if owner.state.synthesizer == MAIN_SESSION:
        return RunResult(ws, EXIT_OK, HANDED_OVER)
    set_phase(ws, owner, "done")
    page.publish(ws, owner.state)  # before the last line, which tells a follower the run has ended
    events.emit(ws.root, "run", f"done: {ws.final_report}")
    return RunResult(ws, EXIT_OK, str(ws.final_report))
