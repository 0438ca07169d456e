"""The engine that runs graph.py's declaration: each phase starts as soon as the phases it
depends on have ended, so research and dissent (and verification and the antagonist) run at
the same time, in one anyio task group. A phase runs the module of council/phases/ that bears
its name, `run(ctx, phase)`, which gets its Phase: adding a phase takes no edit here.

What has ended is recorded in state.yaml (`steps`: done, or skipped and why), and a phase that
is already there is not run again: `council resume` starts from the same declaration and the
state, whatever the phase it stopped in (an antagonist that had finished is not paid for
twice). Inside a phase, each module skips the seats that finished it (RunContext.to_run)."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable

import anyio

from council import graph, phases
from council.errors import PhaseFailedError
from council.evidence import claimcheck, finalreport
from council.graph import DONE, GRAPH, NAMES, Facts, Phase
from council.phases import RunContext, gapfill
from council.store import events
from council.store.progress import utc_now
from council.store.state import ENDED, RunState, States
from council.store.workspace import Workspace

Runner = Callable[[RunContext, Phase], Awaitable[None]]


def runner(phase: Phase) -> Runner:
    """The `run` of the phase's module, council/phases/<name>.py."""
    module = importlib.import_module(f"{phases.__name__}.{phase.name}")
    run: Runner = module.run
    return run


async def run_graph(ctx: RunContext) -> None:
    """Run every phase of the graph that has not ended yet. A PhaseFailedError (every agent
    failed in research, the synthesis failed) stops the phases still running and is raised."""
    ended = {name: anyio.Event() for name in NAMES}
    running: list[Phase] = []
    failures: list[PhaseFailedError] = []

    async def one(phase: Phase, group: anyio.abc.TaskGroup) -> None:
        for dependency in phase.after:
            await ended[dependency].wait()
        try:
            await _run_phase(ctx, phase, running)
        except PhaseFailedError as exc:
            failures.append(exc)
            group.cancel_scope.cancel()
            return
        ended[phase.name].set()

    async with anyio.create_task_group() as group:
        for phase in GRAPH:
            group.start_soon(one, phase, group)
    if failures:
        raise failures[0]


async def _run_phase(ctx: RunContext, phase: Phase, running: list[Phase]) -> None:
    ws, owner = ctx.ws, ctx.owner
    state = owner.state
    if (state.steps or {}).get(phase.name) is not None:
        return  # ended in an earlier attempt at this run
    why = graph.skipped(phase, facts(ctx, state))
    if why is not None:
        _end(ctx, phase, f"skipped: {why}")
        events.emit(ws.root, phase.name, f"skipped: {why}")
        return
    running.append(phase)
    set_phase(ws, owner, _shown(running))
    try:
        await runner(phase)(ctx, phase)
    finally:
        running.remove(phase)
    if phase is graph.SYNTHESIS and not ctx.synthesise:
        return  # handed to the plugin's session, which writes it (handover.py)
    _end(ctx, phase, DONE)
    if running:
        set_phase(ws, owner, _shown(running))


def facts(ctx: RunContext, state: RunState) -> Facts:
    """What the graph's skip decisions look at, read from the run as it is now (its owner's
    state, and claims.json read once)."""
    steps = state.steps or {}
    _, contributors = ctx.contributors()
    listed = finalreport.verification_facts(ctx.ws)
    judged = None
    if steps.get(graph.CLAIMS.name) is not None:  # the first coverage judgement has ended
        judged = bool(claimcheck.listed(listed))
    filled = steps.get(graph.GAPFILL.name)
    return Facts(ctx.options, survivors=len(contributors),
                 budget_exhausted=state.budget_exhausted,
                 gaps=gapfill.count(listed) if judged else None, judged=judged,
                 gap_filled=filled == DONE if filled is not None else None,
                 gap_reports=len(gapfill.published(ctx.ws)) if filled == DONE else None)


def _shown(running: list[Phase]) -> str:
    """state.phase while phases run side by side: the first of them in graph order."""
    return min(running, key=GRAPH.index).name


def _end(ctx: RunContext, phase: Phase, what: str) -> None:
    def change(state: RunState) -> None:
        state.steps = {**(state.steps or {}), phase.name: what}

    ctx.owner.update(change)


def set_phase(ws: Workspace, states: States, phase: str, error: str | None = None) -> None:
    """Move the run to `phase` (a graph phase or an end: done, failed, cancelled): in its
    owner during the run, in its file for the host's session that ends a handed-over run."""
    if phase in NAMES:  # a phase boundary: what the next phase reads must be as published
        finalreport.check_snapshots(ws, states)

    def change(state: RunState) -> None:
        state.phase = phase
        if error is not None:
            state.error = error
        if phase in ENDED:
            state.ended_at = utc_now()
        else:  # running (again, after a resume): the old ending no longer holds
            state.ended_at, state.error = None, None

    states.update(change)
