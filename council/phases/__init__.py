"""The run's phases, one module each, named as graph.py names the phase it runs: scope →
research ∥ dissent → refinement → claims → gap fill → recheck → verification ∥ antagonist →
synthesis.

Each module's `run(ctx, phase)` gets its Phase from the engine (pipeline.py), chooses which
seats take part and what each is asked; what else it needs to know of its phase (its output,
its cap on turns, its attempts) it reads from that Phase, so no module spells its own name.
`seat_task` gives a seat its turns, `run_parallel` runs the seats at once in one task group
(no more CLI processes than `--max-parallel` allows) and returns each seat's final record;
`ask_json` gets one agent's answer as a JSON file council can check."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import anyio

from council import graph
from council.errors import PhaseFailedError
from council.evidence import changes
from council.graph import GRAPH, SHORT, Phase, counted
from council.runoptions import RunOptions, Seat
from council.seat import failover
from council.seat.runner import Limits, SeatTask, fail_seat, run_seat
from council.store import events
from council.store.loop import read_report
from council.store.owner import StateOwner
from council.store.state import AgentPhase, RunState, SeatStatus
from council.store.workspace import Workspace

T = TypeVar("T")

UNFINISHED = (SeatStatus.PENDING, SeatStatus.QUEUED, SeatStatus.RUNNING, SeatStatus.CANCELLED)
SHORT_PHASES = tuple(p.name for p in GRAPH if p.length == SHORT)


@dataclass(frozen=True)
class RunContext:
    """What every phase of a run is given: its folder, the owner of its state (read from it,
    change it through its update: never the file), its options and topic."""

    ws: Workspace
    owner: StateOwner
    options: RunOptions
    topic: str
    synthesise: bool = True  # False: the Claude Code session writes the synthesis (plugin)
    # --max-parallel: one token per running CLI process, over the whole run
    limiter: anyio.CapacityLimiter | None = None

    def limits(self, phase: Phase) -> Limits:
        """The short phases (a one- or two-turn answer) get a quarter of the per-phase timeout:
        that is what lets the plugin fit every phase before the synthesis in its hook's time."""
        timeout = self.options.timeout
        if timeout is not None and phase.length == SHORT:
            timeout /= 4
        return Limits(timeout=timeout, grace=self.options.grace_period,
                      idle=self.options.idle_timeout,
                      budgeted=self.options.max_cost is not None
                      or self.options.max_tokens is not None,
                      report_cap=self.options.max_report_bytes)

    def to_run(self, phase: Phase, seats: list[Seat]
               ) -> list[tuple[Seat, AgentPhase | None]]:
        """Seats that still have `phase` to do, each with its interrupted record (if it had
        started): a fresh run lists every seat; a resumed one skips finished work."""
        state = self.owner.state
        out: list[tuple[Seat, AgentPhase | None]] = []
        for seat in seats:
            rec = state.agents[seat.name].phases.get(phase.name)
            if rec is None:
                out.append((seat, None))
            elif rec.status in UNFINISHED:
                out.append((seat, rec if rec.started_at else None))
        return out

    def earlier(self) -> dict[str, Any] | None:
        """What the run `--since` names established (changes.seed: its claims, verdicts and
        sources, bounded), for the prompts; None when this is not a --since run."""
        since = self.options.since
        if since is None:
            return None
        claims, urls = changes.recorded(self.ws.root.parent / since)
        return changes.seed(since, claims, urls)

    def seats(self) -> list[Seat]:
        """The seats still in the run, as they run now: without the ones given up for good,
        and on their fallback CLI where they moved (failover.py)."""
        state = self.owner.state
        dropped = state.dropped or {}
        return [seat for seat in state.options.seats
                if seat.name not in dropped]

    def contributors(self) -> tuple[Phase, list[Seat]]:
        """The phase whose reports the phases after it build on, and the seats that wrote
        one: the one rule (graph.feeding) the host's hand-off and the completeness score use
        too (finalreport.contributions)."""
        phase = graph.feeding(self.owner.state.steps, lambda p: bool(self.usable(p)))
        return phase, self.usable(phase)

    def usable(self, phase: Phase) -> list[Seat]:
        """Seats whose output for `phase` exists and can be built on."""
        state = self.owner.state
        return [
            seat for seat in state.options.seats
            if (rec := state.agents[seat.name].phases.get(phase.name)) is not None
            and rec.usable
        ]


def announce(ctx: RunContext, phase: Phase, seats: list[Seat], how: str) -> None:
    todo = [seat.name for seat, _ in ctx.to_run(phase, seats)]
    if len(todo) == len(seats):
        events.emit(ctx.ws.root, phase.name, f"started: {counted(len(todo), 'agent')} {how}")
    elif todo:
        events.emit(ctx.ws.root, phase.name, f"resumed: {', '.join(todo)} still to finish")


def survivors(ctx: RunContext, phase: Phase, total: int) -> list[Seat]:
    """The seats with a usable report for `phase`; none at all stops the run."""
    usable = ctx.usable(phase)
    if not usable:
        raise PhaseFailedError(f"every agent failed in {phase.name}; see "
                               f"{ctx.ws.root / 'progress.log'}")
    events.emit(ctx.ws.root, phase.name,
                f"finished: {len(usable)} of {counted(total, 'agent')} produced a report")
    return usable


def reports(ws: Workspace, phase: Phase, seats: Sequence[Seat]) -> dict[str, Path]:
    """What `seats` published in `phase`, by the name each is copied under into a seat's
    inputs folder (ws.peers_dir): the reports a later phase hands its seats to read."""
    return {ws.output_name(s.name, phase): ws.published_output(s.name, phase) for s in seats}


def listed(ws: Workspace, phase: Phase, seats: Sequence[Seat], folder: Path
           ) -> list[dict[str, Any]]:
    """Those reports as a prompt names them: each seat's name, cli and model, and where its
    copy is in `folder` (the seat's inputs folder, or the run folder for a host's session)."""
    return [{"name": s.name, "cli": s.cli, "model": s.model,
             "path": str(folder / ws.output_name(s.name, phase))} for s in seats]


def seat_task(phase: Phase, seat: Seat, prompt: str, inputs: Mapping[str, Path] | None = None,
              previous: AgentPhase | None = None, own: int | None = None) -> SeatTask:
    """What `phase` asks of `seat`: its prompt, the files copied into its folder, and its
    turns, as the phase caps them (`own`: what stands for the seat's own max_iterations)."""
    turns = phase.turns(seat.max_iterations if own is None else own)
    return SeatTask(replace(seat, max_iterations=turns), phase, prompt, turns,
                    inputs or {}, previous)


def within_budget(task: SeatTask, budget_exhausted: str | None) -> SeatTask:
    """A seat that starts once the run's budget is reached gets one turn (an interrupted one:
    the turn it was in), like every loop that was running then, which stops after its current
    turn: the synthesis runs on what there is, not to its cap (pure)."""
    if budget_exhausted is None:
        return task
    turns = max(task.previous.iteration, 1) if task.previous else 1
    if turns >= task.max_iterations:
        return task
    return replace(task, seat=replace(task.seat, max_iterations=turns), max_iterations=turns)


async def _seat_turn(ctx: RunContext, task: SeatTask) -> AgentPhase:
    """One run of a seat's CLI, holding one of the run's process slots (--max-parallel)
    while it runs: a seat that must wait says so in progress.log and in its state."""
    limiter = ctx.limiter
    if limiter is None:
        return await run_seat(ctx.ws, ctx.owner, _budgeted(ctx, task),
                              ctx.limits(task.phase))
    if limiter.available_tokens < 1:
        ctx.owner.update(lambda s: _queue(s, task))
        events.emit(ctx.ws.root, task.phase.name, f"queued: all {limiter.total_tokens:g} process "
                    "slots (--max-parallel) are in use", agent=task.seat.name)
    async with limiter:
        return await run_seat(ctx.ws, ctx.owner, _budgeted(ctx, task),
                              ctx.limits(task.phase))


def _budgeted(ctx: RunContext, task: SeatTask) -> SeatTask:
    """The task as the budget leaves it, read the moment the seat starts (nothing runs
    between this and the runner writing the seat's loop file)."""
    cut = within_budget(task, ctx.owner.state.budget_exhausted)
    if cut is not task:
        events.emit(ctx.ws.root, task.phase.name, "the run's budget is reached: one turn",
                    agent=task.seat.name)
    return cut


def _queue(state: RunState, task: SeatTask) -> None:
    record = state.agents[task.seat.name].phase(task.phase.name)
    if record.status != SeatStatus.RUNNING:
        record.status = SeatStatus.QUEUED


async def run_parallel(ctx: RunContext, tasks: Sequence[SeatTask]) -> dict[str, AgentPhase]:
    results: dict[str, AgentPhase] = {}

    async def one(task: SeatTask) -> None:
        retries = 0
        while True:
            try:
                record = await _seat_turn(ctx, task)
            except Exception as exc:  # one seat's trouble (a full disk, a mangled file)
                record = fail_seat(ctx.ws, ctx.owner, task.seat.name, task.phase,
                                   f"council error: {exc}")
            step, wait = failover.next_step(
                record.failure if record.status == SeatStatus.FAILED else None, retries,
                record.error)
            if step == "retry":  # a rate limit: pause, then go on where it stopped
                retries += 1
                events.emit(ctx.ws.root, task.phase.name, f"rate-limited; trying again in "
                            f"{wait:g} s (retry {retries} of {failover.RETRIES})",
                            agent=task.seat.name)
                await anyio.sleep(wait)
                task = replace(task, previous=record)
                continue
            if step == "give_up":
                assert record.failure is not None
                moved = failover.give_up(ctx.ws, ctx.owner, task.seat, task.phase,
                                         record.failure, record.error)
                if moved is not None:  # the seat's role, on its fallback CLI, from scratch
                    task, retries = replace(task, seat=moved, previous=None), 0
                    continue
            results[task.seat.name] = record
            return

    async with anyio.create_task_group() as group:
        for task in tasks:
            group.start_soon(one, task)
    return results


Render = Callable[[Seat, str | None], tuple[str, dict[str, Path]]]


async def ask_json(ctx: RunContext, phase: Phase, seats: Sequence[Seat], render: Render,
                   validate: Callable[[Any, bool], T]) -> tuple[T | None, str | None]:
    """Ask the first of `seats` for a JSON answer (`render(seat, feedback)` gives the prompt
    and its input files) and check it with `validate(answer, last_chance)`, which raises
    ValueError (and may accept a partly good answer when it is the last chance).

    The phase's `attempts` bound the runs of an agent: a malformed answer is sent back with
    what is wrong with it while attempts remain; an agent that fails outright (crash,
    timeout) hands the question to the next seat. Returns (the validated answer, None) or
    (None, why there is none)."""
    candidates = list(seats)
    error: str | None = None
    feedback: str | None = None
    for attempt in range(1, phase.attempts + 1):
        if not candidates:
            break
        seat = candidates[0]
        prompt, inputs = render(seat, feedback)
        task = seat_task(phase, seat, prompt, inputs)
        record = (await run_parallel(ctx, [task]))[seat.name]
        if not record.usable:
            error, feedback = f"{seat.name}: {record.error or 'no answer'}", None
            candidates.pop(0)
            continue
        try:
            text = read_report(ctx.ws.published_output(seat.name, phase)) or ""
            return validate(json.loads(text), attempt == phase.attempts), None
        except (ValueError, TypeError) as exc:  # json.JSONDecodeError is a ValueError too
            error = feedback = f"invalid {phase.name} file: {exc}"
            events.emit(ctx.ws.root, phase.name, error, agent=seat.name)
    return None, error
