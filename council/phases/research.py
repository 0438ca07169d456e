"""Every seat researches the topic on its own, in parallel, against the scope when there is
one."""

from __future__ import annotations

from council import prompts
from council.evidence.coverage import SCOPE, Scope
from council.evidence.coverage import load as load_scope
from council.graph import Phase
from council.phases import RunContext, announce, run_parallel, seat_task, survivors
from council.seat.runner import SeatTask
from council.store import loop


def tasks(ctx: RunContext, phase: Phase, scope: Scope | None = None) -> list[SeatTask]:
    """The research task of every seat that has not finished it yet."""
    return [
        seat_task(phase, seat, prompts.render(
            phase.prompt,
            topic=ctx.topic,
            mode=ctx.options.mode,
            scope=scope,
            earlier=ctx.earlier(),
            report_path=str(ctx.ws.working_output(seat.name, phase)),
            marker=loop.MARKER,
        ), previous=previous)
        for seat, previous in ctx.to_run(phase, ctx.seats())
    ]


async def run(ctx: RunContext, phase: Phase) -> None:
    """Every seat still in the run researches, against the scope when there is one; a run
    where every seat failed stops here."""
    announce(ctx, phase, ctx.seats(), "in parallel")
    await run_parallel(ctx, tasks(ctx, phase, load_scope(ctx.ws.root / SCOPE)))
    survivors(ctx, phase, len(ctx.options.seats))
