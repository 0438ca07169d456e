"""Phase 2: each seat reads its own report and the others', researches what none covered,
and writes a refined report in a fresh session."""

from __future__ import annotations

from council import loop, prompts
from council.config import Seat
from council.phases import RunContext, run_parallel
from council.runner import SeatTask
from council.state import AgentPhase

MIN_SEATS = 2  # cross-pollination needs someone to cross with


def tasks(ctx: RunContext, seats: list[Seat]) -> list[SeatTask]:
    """Refinement for each of `seats` (research survivors) that has not finished it yet."""
    ws = ctx.ws
    result = []
    for seat, previous in ctx.to_run("refinement", seats):
        inputs_dir = ws.peers_dir(seat.name, "refinement")
        inputs = {ws.output_name(s.name, "research"): ws.published_output(s.name, "research")
                  for s in seats}
        peers = [
            {"name": s.name, "cli": s.cli,
             "path": str(inputs_dir / ws.output_name(s.name, "research"))}
            for s in seats if s.name != seat.name
        ]
        result.append(SeatTask(
            seat=seat,
            phase="refinement",
            prompt=prompts.render(
                "refinement",
                topic=ctx.topic,
                mode=ctx.options.mode,
                own_report=str(inputs_dir / ws.output_name(seat.name, "research")),
                peers=peers,
                report_path=str(ws.working_output(seat.name, "refinement")),
                marker=loop.MARKER,
            ),
            max_iterations=seat.max_iterations,
            inputs=inputs,
            previous=previous,
        ))
    return result


async def run(ctx: RunContext, seats: list[Seat]) -> dict[str, AgentPhase]:
    return await run_parallel(ctx, tasks(ctx, seats))
