"""Phase 1: every seat researches the topic on its own, in parallel."""

from __future__ import annotations

from council import loop, prompts
from council.phases import RunContext, announce, run_parallel, survivors
from council.runner import SeatTask
from council.scope import SCOPE, Scope
from council.scope import load as load_scope


def tasks(ctx: RunContext, scope: Scope | None = None) -> list[SeatTask]:
    """The research task of every seat that has not finished it yet."""
    return [
        SeatTask(
            seat=seat,
            phase="research",
            prompt=prompts.render(
                "research",
                topic=ctx.topic,
                mode=ctx.options.mode,
                scope=scope,
                report_path=str(ctx.ws.working_output(seat.name, "research")),
                marker=loop.MARKER,
            ),
            max_iterations=seat.max_iterations,
            previous=previous,
        )
        for seat, previous in ctx.to_run("research", ctx.seats())
    ]


async def run(ctx: RunContext) -> None:
    """Every seat still in the run researches, against the scope when there is one; a run
    where every seat failed stops here."""
    announce(ctx, "research", ctx.seats(), "in parallel")
    await run_parallel(ctx, tasks(ctx, load_scope(ctx.ws.root / SCOPE)))
    survivors(ctx, "research", len(ctx.options.seats))
