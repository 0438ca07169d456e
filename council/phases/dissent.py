"""Seed 004's dissent: while the council researches, one agent hunts the contrarian case from
the topic alone (the strongest opposing position, disconfirming evidence, the ways the obvious
answer fails), so that opposing evidence is gathered with the rest rather than bolted on.

Its memo, dissent.md, feeds the refinement (every agent must weigh it), the antagonist and the
synthesis, whose report answers it. A dissent that fails never stops the run: the council goes
on without a memo and the methodology says so. Its cap on turns is declared in graph.py (a
memo, not a second research report), and the budget stops it like every loop.

The dissenter works in a folder of its own, beside its research folder (graph.py declares it,
workspace.work_dir makes it): the same seat's research agent, running at the same time,
cannot rewrite the memo."""

from __future__ import annotations

from council import prompts
from council.evidence.coverage import SCOPE
from council.evidence.coverage import load as load_scope
from council.graph import Phase
from council.phases import RunContext, run_parallel, seat_task
from council.phases.chooser import Role, choose
from council.runoptions import RunOptions, Seat
from council.store import events, loop


def dissenter(options: RunOptions, seats: list[Seat]) -> Seat | None:
    """The seat named with --dissent, or with `auto` the OPPONENT of the seats in the run."""
    named = options.dissent if options.dissent not in ("auto", "off") else None
    return choose(Role.OPPONENT, options.synthesizer, seats, seats, named)


async def run(ctx: RunContext, phase: Phase) -> None:
    ws = ctx.ws
    seat = dissenter(ctx.options, ctx.seats())
    if seat is None:
        events.emit(ws.root, phase.name, "skipped: its agent has left the run")
        return
    pending = dict(ctx.to_run(phase, [seat]))
    if seat not in pending:
        return  # a resumed run that had finished its dissent
    prompt = prompts.render(
        phase.prompt, topic=ctx.topic, mode=ctx.options.mode,
        scope=load_scope(ws.root / SCOPE), marker=loop.MARKER,
        report_path=str(ws.working_output(seat.name, phase)))
    events.emit(ws.root, phase.name, f"started: {seat.name} builds the opposing case beside "
                "the research")
    task = seat_task(phase, seat, prompt, previous=pending[seat])
    record = (await run_parallel(ctx, [task]))[seat.name]
    events.emit(ws.root, phase.name, f"finished: {ws.published_output(seat.name, phase).name}"
                if record.usable else f"failed ({record.error}): the council goes on without "
                "a dissent memo")
