"""Phase 2: each seat reads its own report and the others', researches what none covered,
and writes a refined report in a fresh session."""

from __future__ import annotations

from council import events, loop, prompts, regression, sources
from council.config import Seat
from council.phases import RunContext, announce, run_parallel, survivors
from council.runner import SeatTask
from council.state import RunState, update_state
from council.workspace import DISSENT, Workspace

MIN_SEATS = 2  # cross-pollination needs someone to cross with


def tasks(ctx: RunContext, seats: list[Seat]) -> list[SeatTask]:
    """Refinement for each of `seats` (research survivors) that has not finished it yet."""
    ws = ctx.ws
    result = []
    for seat, previous in ctx.to_run("refinement", seats):
        inputs_dir = ws.peers_dir(seat.name, "refinement")
        inputs = {ws.output_name(s.name, "research"): ws.published_output(s.name, "research")
                  for s in seats}
        dissent = ws.root / DISSENT
        if dissent.is_file():  # the dissenter's memo: every agent weighs the opposing case
            inputs[DISSENT] = dissent
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
                dissent=str(inputs_dir / DISSENT) if DISSENT in inputs else None,
            ),
            max_iterations=seat.max_iterations,
            inputs=inputs,
            previous=previous,
        ))
    return result


async def run(ctx: RunContext) -> None:
    """The research survivors refine in parallel; a run where every one failed stops here."""
    seats = ctx.usable("research")
    announce(ctx, "refinement", seats, "read each other's reports")
    await run_parallel(ctx, tasks(ctx, seats))
    survivors(ctx, "refinement", len(ctx.options.seats))
    record_regressions(ctx.ws)


def record_regressions(ws: Workspace) -> None:
    """No silent regression: sources and cited claims an agent dropped between its research
    and refined reports go into state.yaml, progress.log and the synthesis's methodology."""
    def change(state: RunState) -> list[tuple[str, int, int]]:
        found = []
        for name, rec in state.agents.items():
            ap = rec.phases.get("refinement")
            before = loop.read_report(ws.published_output(name, "research"))
            after = loop.read_report(ws.published_output(name, "refinement"))
            if ap is None or not ap.usable or before is None or after is None:
                continue
            # The first few of each, then how many more: a pasted appendix can drop 15,000
            # sources, and every state update and mirror write would carry them all.
            ap.dropped_sources = regression.listed(sources.disappeared(before, after))
            ap.dropped_claims = regression.listed(regression.dropped_claims(before, after))
            lost = regression.total(ap.dropped_sources) if ap.dropped_sources else 0
            gone = regression.total(ap.dropped_claims) if ap.dropped_claims else 0
            if lost or gone:
                found.append((name, lost, gone))
        return found

    for name, dropped, gone in update_state(ws.root, change):
        events.emit(ws.root, "refinement", f"dropped {dropped} source(s) and {gone} cited "
                    "claim(s) its research report had", agent=name)
