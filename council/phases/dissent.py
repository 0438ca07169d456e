"""Seed 004's dissent: while the council researches, one agent hunts the contrarian case from
the topic alone (the strongest opposing position, disconfirming evidence, the ways the obvious
answer fails), so that opposing evidence is gathered with the rest rather than bolted on.

Its memo, dissent.md, feeds the refinement (every agent must weigh it), the antagonist and the
synthesis, whose report answers it. A dissent that fails never stops the run: the council goes
on without a memo and the methodology says so.

The dissenter works in agents/<seat>.dissent/, beside its research folder (workspace.work_dir):
the same seat's research agent, running at the same time, cannot rewrite the memo."""

from __future__ import annotations

from dataclasses import replace

from council import events, loop, prompts
from council.config import RunOptions, Seat
from council.phases import RunContext, run_parallel
from council.runner import SeatTask
from council.scope import SCOPE
from council.scope import load as load_scope

MAX_ITERATIONS = 4  # a memo, not a second research report


def choose(options: RunOptions, seats: list[Seat]) -> Seat | None:
    """The named dissenter; with `auto`, a seat of another CLI than the synthesiser's (the
    opposition should not come from the pen that writes the answer), else another seat."""
    if not seats:
        return None
    if options.dissent not in ("auto", "off"):
        return next((s for s in seats if s.name == options.dissent), None)
    writer = next((s for s in seats if s.name == options.synthesizer), seats[0])
    return next((s for s in seats if s.cli != writer.cli), None) or \
        next((s for s in seats if s.name != writer.name), seats[0])


async def run(ctx: RunContext) -> None:
    ws = ctx.ws
    seat = choose(ctx.options, ctx.seats())
    if seat is None:
        events.emit(ws.root, "dissent", "skipped: its agent has left the run")
        return
    pending = dict(ctx.to_run("dissent", [seat]))
    if seat not in pending:
        return  # a resumed run that had finished its dissent
    iterations = min(seat.max_iterations, MAX_ITERATIONS)
    prompt = prompts.render(
        "dissent", topic=ctx.topic, mode=ctx.options.mode,
        scope=load_scope(ws.root / SCOPE), marker=loop.MARKER,
        report_path=str(ws.working_output(seat.name, "dissent")))
    events.emit(ws.root, "dissent", f"started: {seat.name} builds the opposing case beside "
                "the research")
    task = SeatTask(replace(seat, max_iterations=iterations), "dissent", prompt, iterations,
                    previous=pending[seat])
    record = (await run_parallel(ctx, [task]))[seat.name]
    events.emit(ws.root, "dissent", f"finished: {ws.published_output(seat.name, 'dissent').name}"
                if record.usable else f"failed ({record.error}): the council goes on without "
                "a dissent memo")
