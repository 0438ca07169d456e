"""Each seat reads its own report and the others', researches what none covered, and writes
a refined report in a fresh session. The reports it refines are those of the feeding phase
declared before it (graph.before: the research)."""

from __future__ import annotations

from council import graph, prompts
from council.evidence import regression, sources
from council.graph import Phase
from council.phases import RunContext, announce, listed, reports, run_parallel, seat_task, survivors
from council.runoptions import Seat
from council.seat.runner import SeatTask
from council.store import events, loop
from council.store.state import RunState
from council.store.workspace import DISSENT


def tasks(ctx: RunContext, phase: Phase, seats: list[Seat]) -> list[SeatTask]:
    """The refinement of each of `seats` (the research's survivors) that has not finished it
    yet."""
    ws, source = ctx.ws, graph.before(phase)
    result = []
    for seat, previous in ctx.to_run(phase, seats):
        inputs_dir = ws.peers_dir(seat.name, phase)
        inputs = reports(ws, source, seats)
        dissent = ws.root / DISSENT
        if dissent.is_file():  # the dissenter's memo: every agent weighs the opposing case
            inputs[DISSENT] = dissent
        peers = listed(ws, source, [s for s in seats if s.name != seat.name], inputs_dir)
        result.append(seat_task(phase, seat, prompts.render(
            phase.prompt,
            topic=ctx.topic,
            mode=ctx.options.mode,
            own_report=str(inputs_dir / ws.output_name(seat.name, source)),
            peers=peers,
            report_path=str(ws.working_output(seat.name, phase)),
            marker=loop.MARKER,
            dissent=str(inputs_dir / DISSENT) if DISSENT in inputs else None,
        ), inputs, previous))
    return result


async def run(ctx: RunContext, phase: Phase) -> None:
    """The research survivors refine in parallel; a run where every one failed stops here."""
    seats = ctx.usable(graph.before(phase))
    announce(ctx, phase, seats, "read each other's reports")
    await run_parallel(ctx, tasks(ctx, phase, seats))
    survivors(ctx, phase, len(ctx.options.seats))
    record_regressions(ctx, phase)


def record_regressions(ctx: RunContext, phase: Phase) -> None:
    """No silent regression: sources and cited claims an agent dropped between its research
    and refined reports go into state.yaml, progress.log and the synthesis's methodology."""
    ws, source = ctx.ws, graph.before(phase)

    def change(state: RunState) -> list[tuple[str, int, int]]:
        found = []
        for name, rec in state.agents.items():
            ap = rec.phases.get(phase.name)
            before = loop.read_report(ws.published_output(name, source))
            after = loop.read_report(ws.published_output(name, phase))
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

    for name, dropped, gone in ctx.owner.update(change):
        events.emit(ws.root, phase.name, f"dropped {graph.counted(dropped, 'source')} and "
                    f"{graph.counted(gone, 'cited claim')} its research report had",
                    agent=name)
