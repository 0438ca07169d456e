"""Runs a council from start to end: creates the run, holds its lock and its state, runs the
phase graph (pipeline.py) and turns signals into a clean cancel.

Degrade, don't die: a seat that fails is left out of later phases and the run goes on; only
a phase where every seat failed stops the run. One signal-handling task at the root cancels
the run on SIGINT/SIGTERM; every agent's process tree is stopped and the state says
`cancelled`.

At most `max_runs` runs at once on this machine (options.MACHINE; the user's own config or
$COUNCIL_MAX_RUNS, 2 by default): each supervisor holds one run slot (store/slots.py, flock'd
files under ~/.cache/council/run-slots/) for its whole life, and the kernel frees it when
the supervisor dies. `council run` takes it before the run exists; `council resume`, the
MCP server's detached supervisors and the plugin's hook take it here, before the run's lock,
so a run that has a supervisor is counted. A supervisor that finds no slot refuses in one
line naming the active runs (exit 2); a run that had not begun (an MCP request's, whose
server looked and found room a moment before another took it) is ended as failed with that
line, so that its client learns why. `council eval`'s sample runs are exempt (its own
--max-runs and --per-vendor hold them: evaluation/slots.py)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import anyio

from council import config, graph
from council.errors import CouncilError, PhaseFailedError, UsageError
from council.evidence import finalreport
from council.options import EVAL_RUN_ENV
from council.phases import RunContext
from council.readiness import preflight
from council.run import crash, recovery
from council.run.cancel import mark_cancelled, stop_orphans
from council.run.pipeline import run_graph, set_phase
from council.runoptions import RunOptions
from council.store import events, sessions, slots
from council.store.owner import StateOwner, owned
from council.store.progress import utc_now
from council.store.runlock import RunLock
from council.store.state import (
    MAIN_SESSION,
    AgentRecord,
    RunEnd,
    RunState,
    begun,
    create_state,
)
from council.store.workspace import Workspace, create_workspace

EXIT_OK, EXIT_FAILED = 0, 1
SIGNAL_EXIT = {signal.SIGHUP: 129, signal.SIGINT: 130, signal.SIGTERM: 143}
HANDED_OVER = "handed over"  # the plugin's session writes the synthesis (handover.py)
EXIT_REFUSED = UsageError.exit_code  # no run slot: refused before anything was spent
RUN_SLOTS = "run-slots"  # ~/.cache/council/run-slots/run-<n>.lock
RUN_KIND = "run"

# What writes the run's page (report.html, views/page.publish) when the run ends: handed down
# by whoever starts the supervisor (the command line, the hosts' hook), so that the engine
# never imports the views. It is called before the run's last progress line, which tells a
# follower the run has ended, so a follower that sees that line finds the page.
Publish = Callable[[Workspace, RunState], object]


@dataclass(frozen=True)
class RunResult:
    ws: Workspace
    exit_code: int
    message: str
    # A run that ended done without seats it started with: each, and why (Missing.describe);
    # `council run` and `council resume` exit EXIT_DEGRADED for it (commands/outcome.py).
    missing: tuple[str, ...] = ()


class TooManyRuns(UsageError):
    """This machine runs as many council runs as it allows at once (max_runs)."""


class RunSlot:
    """One of the machine's run slots, held by this process until closed (or until it
    dies). An exempt run (`council eval`'s) holds none."""

    def __init__(self, fd: int | None, folder: Path) -> None:
        self.fd = fd
        self.folder = folder

    def label(self, ws: Workspace) -> None:
        """Name the run that holds it, for the refusals of others."""
        if self.fd is not None:
            slots.relabel(self.folder, self.fd, _label(ws))

    def close(self) -> None:
        if self.fd is not None:
            slots.release([self.fd])
            self.fd = None

    def __enter__(self) -> RunSlot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _label(ws: Workspace) -> str:
    return f"{ws.id} in {ws.root}"


def exempt() -> bool:
    """A sample run of `council eval`, held by the eval's own limits."""
    return bool(os.environ.get(EVAL_RUN_ENV))


def reserve(ws: Workspace | None = None, base: Path | None = None) -> RunSlot:
    """Take a run slot for this process (naming `ws`, or a run starting in `base`), or
    TooManyRuns naming the runs that hold the others."""
    folder = slots.cache_folder(RUN_SLOTS)
    if exempt():
        return RunSlot(None, folder)
    limit, source = config.max_runs()
    label = _label(ws) if ws is not None else f"a run starting in {base or 'a research folder'}"
    taken = slots.take_counted(folder, RUN_KIND, limit, label)
    if taken.fd is None:
        raise TooManyRuns(refusal(limit, source, taken.holders))
    return RunSlot(taken.fd, folder)


def check_room() -> None:
    """TooManyRuns when the machine's runs are at their limit now: the MCP server's look
    before it creates a run, so that a refused request leaves no run folder. It reserves
    nothing: the run's own supervisor takes its slot, and if another took the last one in
    between, ends the run as failed with the same line."""
    if exempt():
        return
    limit, source = config.max_runs()
    held = slots.holders(slots.cache_folder(RUN_SLOTS), RUN_KIND)
    if len(held) >= limit:
        raise TooManyRuns(refusal(limit, source, held))


def holds_slot(ws: Workspace) -> bool:
    """Whether a supervisor holds a run slot for the run in `ws` (always, for exempt runs,
    which take none)."""
    return exempt() or _label(ws) in slots.holders(slots.cache_folder(RUN_SLOTS), RUN_KIND)


def refusal(limit: int, source: str, held: list[str]) -> str:
    """The one line a run past the limit is refused with: the runs that are active."""
    runs = "runs are" if len(held) != 1 else "run is"
    return (f"{len(held)} council {runs} already active on this machine, which allows "
            f"{limit} at once (max_runs: {source}): {'; '.join(held)}; wait for one to end, "
            "or cancel one")


def start_run(topic: str, options: RunOptions, base: Path | None = None) -> Workspace:
    """Create research/<id>/ with its state, ready for `execute`."""
    ws = create_workspace(base)
    crash.note_run(ws.root)
    state = RunState(
        id=ws.id,
        topic=topic,
        created_at=utc_now(),
        options=options,
        agents={s.name: AgentRecord(cli=s.cli, model=s.model) for s in options.seats},
    )
    create_state(ws.root, state)
    seats = ", ".join(f"{s.name} ({s.cli})" for s in options.seats)
    events.emit(ws.root, "run",
                f"{ws.id} created with {graph.counted(len(options.seats), 'agent')}: {seats}")
    return ws


def execute(ws: Workspace, publish: Publish, synthesise: bool = True,
            slot: RunSlot | None = None) -> RunResult:
    """Run every remaining phase of the run in `ws` (all of them for a new run, what is left
    for a resumed one). Holds a run slot (`slot`, the one `council run` took before making
    the run, else one taken here) and the run's lock throughout; never raises for agent
    failures (a failed run is a RunResult that says so), nor for want of a slot (EXIT_REFUSED).

    With `synthesise=False` (a host whose own session writes the report: the Claude Code
    plugin) every phase before the synthesis runs, and the synthesis is handed to that
    session: handover.handover gives it its instructions, handover.complete_handover stamps
    its report and ends the run.

    `publish` writes the run's page when it ends (failed, cancelled or done): the caller's
    (views/page.publish for the cli and the hosts), so the engine imports no view."""
    crash.note_run(ws.root)
    if slot is None:
        try:
            slot = reserve(ws)
        except TooManyRuns as exc:
            return _refused(ws, str(exc), publish)
    else:
        slot.label(ws)
    with slot:
        return _supervise(ws, synthesise, publish)


def _refused(ws: Workspace, line: str, publish: Publish) -> RunResult:
    """No run slot: a run that had not begun ends failed with the line (its MCP client
    reads why in research_status); one that had is left as it was, to resume later. A run
    another supervisor holds says so instead (RunLock)."""
    with RunLock(ws.root), owned(ws.root) as owner:
        if not begun(owner.state):
            set_phase(ws, owner, RunEnd.FAILED, line)
            publish(ws, owner.state)
            events.emit(ws.root, "run", f"failed: {line}")
    return RunResult(ws, EXIT_REFUSED, line)


def _supervise(ws: Workspace, synthesise: bool, publish: Publish) -> RunResult:
    # The supervisor owns the state for the whole run: in memory, mirrored to state.yaml,
    # and handed to every phase in the run's context.
    with RunLock(ws.root), owned(ws.root) as owner:
        plan = recover(ws, owner)
        state = owner.state
        if state.phase == RunEnd.DONE:
            said = "".join(f"; {line}" for line in plan.lines())
            return RunResult(ws, EXIT_OK, f"run {ws.id} is already done: {ws.final_report}"
                             + said, without(state))
        if state.phase == RunEnd.FAILED and plan.waiting and not plan.seats:
            return RunResult(ws, EXIT_FAILED, f"run {ws.id} has no agent that can run "
                             f"before its reset: {'; '.join(plan.lines())}")
        if state.phase == graph.SYNTHESIS.name and state.synthesizer == MAIN_SESSION \
                and synthesise and sessions.is_bound(ws.root.parent, ws.id):
            raise CouncilError(f"run {ws.id} is waiting for its Claude Code session to write "
                               "the synthesis; cancel it first to resume it here")
        options = state.options
        orphans = stop_orphans(ws, state, options.grace_period)
        if orphans:
            events.emit(ws.root, "run", f"stopped agents left running by an earlier "
                        f"supervisor: {', '.join(orphans)}")
        return anyio.run(_execute, ws, owner, options, state.topic, synthesise, publish)


def recover(ws: Workspace, owner: StateOwner) -> recovery.Reopening:
    """Before the run (re)starts: the seats a recoverable fault took are tried again when
    their CLI passes the preflight and their reset has come (run/recovery.py); each lost seat
    gets one line in progress.log. Nothing for a new run."""
    state = owner.state
    lost = recovery.lost_seats(state)
    if not lost:
        return recovery.Reopening()
    clis = sorted({x.cli for x in lost})
    found = preflight.check(clis)
    hosted = {s.name for s in state.options.seats if s.self_hosted}
    problems = {x.cli: found[x.cli].problem for x in lost if x.seat not in hosted
                or found[x.cli].path is None}
    home, env = Path.home(), dict(os.environ)
    now = datetime.now(UTC)
    credential = {x.seat: preflight.credential_key(x.cli, env, home) for x in lost}
    plan = recovery.reopening(state, now, problems,
                              recovery.limited_seats(state, now, credential))
    recovery.reopen(ws, owner, plan)
    for line in plan.lines()[len(plan.seats):]:
        events.emit(ws.root, "run", f"resume: {line}")
    return plan


def without(state: RunState) -> tuple[str, ...]:
    """The seats a done run lost, each as the header names it (finalreport.missing)."""
    return tuple(m.describe() for m in finalreport.missing(state))


async def _execute(ws: Workspace, owner: StateOwner, options: RunOptions, topic: str,
                   synthesise: bool, publish: Publish) -> RunResult:
    limiter = anyio.CapacityLimiter(options.max_parallel) if options.max_parallel else None
    ctx = RunContext(ws, owner, options, topic, synthesise, limiter)
    received: list[signal.Signals] = []
    result: RunResult | None = None
    async with anyio.create_task_group() as root:
        root.start_soon(_watch_signals, root.cancel_scope, received)
        try:
            result = await _run(ctx, publish)
        except PhaseFailedError as exc:
            set_phase(ws, owner, RunEnd.FAILED, str(exc))
            publish(ws, owner.state)
            events.emit(ws.root, "run", f"failed: {exc}")
            result = RunResult(ws, EXIT_FAILED, str(exc))
        finally:
            root.cancel_scope.cancel()
    if received:
        sig = received[0]
        stopped = mark_cancelled(owner, sig.name)
        publish(ws, owner.state)
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


async def _run(ctx: RunContext, publish: Publish) -> RunResult:
    """The graph, then the run's end: done, or handed to the plugin's session."""
    ws, owner = ctx.ws, ctx.owner
    await run_graph(ctx)
    if owner.state.synthesizer == MAIN_SESSION:
        return RunResult(ws, EXIT_OK, HANDED_OVER)
    set_phase(ws, owner, RunEnd.DONE)
    publish(ws, owner.state)  # before the last line, which tells a follower the run has ended
    lost = without(owner.state)
    if lost:
        events.emit(ws.root, "run", f"finished without {'; '.join(lost)}: "
                    f"`council resume {ws.id}` tries again where it can")
    events.emit(ws.root, "run", f"done: {ws.final_report}")
    return RunResult(ws, EXIT_OK, str(ws.final_report), lost)
