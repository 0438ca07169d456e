"""The pipeline's phases, one module each: research → refinement → synthesis.

A phase chooses which seats take part and what each is asked; `run_parallel` runs them all
at once in one task group and returns each seat's final record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from council.config import RunOptions, Seat
from council.runner import Limits, SeatTask, fail_seat, run_seat
from council.state import AgentPhase, load_state
from council.workspace import Workspace

UNFINISHED = ("pending", "running", "cancelled")


@dataclass(frozen=True)
class RunContext:
    ws: Workspace
    options: RunOptions
    topic: str

    @property
    def limits(self) -> Limits:
        return Limits(timeout=self.options.timeout, grace=self.options.grace_period,
                      idle=self.options.idle_timeout,
                      budgeted=self.options.max_cost is not None
                      or self.options.max_tokens is not None)

    def to_run(self, phase: str, seats: list[Seat]) -> list[tuple[Seat, AgentPhase | None]]:
        """Seats that still have `phase` to do, each with its interrupted record (if it had
        started): a fresh run lists every seat; a resumed one skips finished work."""
        state = load_state(self.ws.root)
        out: list[tuple[Seat, AgentPhase | None]] = []
        for seat in seats:
            rec = state.agents[seat.name].phases.get(phase)
            if rec is None:
                out.append((seat, None))
            elif rec.status in UNFINISHED:
                out.append((seat, rec if rec.started_at else None))
        return out

    def usable(self, phase: str) -> list[Seat]:
        """Seats whose output for `phase` exists and can be built on."""
        state = load_state(self.ws.root)
        return [
            seat for seat in self.options.seats
            if (rec := state.agents[seat.name].phases.get(phase)) is not None and rec.usable
        ]


async def run_parallel(ctx: RunContext, tasks: Sequence[SeatTask]) -> dict[str, AgentPhase]:
    results: dict[str, AgentPhase] = {}

    async def one(task: SeatTask) -> None:
        try:
            results[task.seat.name] = await run_seat(ctx.ws, task, ctx.limits)
        except Exception as exc:  # one seat's trouble (a full disk, a mangled file) is its own
            results[task.seat.name] = fail_seat(ctx.ws, task.seat.name, task.phase,
                                                f"council error: {exc}")

    async with anyio.create_task_group() as group:
        for task in tasks:
            group.start_soon(one, task)
    return results
