"""Beside verification: one agent, preferably of another vendor than the synthesiser,
steelmans the opposing case against the council's emerging consensus, attacks its weak claims
and hunts disconfirming evidence, starting from the dissent memo when there is one. Its
counterpoints.md must be answered by the synthesis.

When it runs is declared in graph.py (`--debate`): `auto` runs it with the full council
(verification on), `force` always, `off` never; compliance research is always challenged.
It cannot wait for verification's verdicts (they run at the same time): it gets the claims
as listed, to attack the weak ones itself."""

from __future__ import annotations

from dataclasses import replace

from council import claims, events, loop, prompts
from council.config import Seat
from council.phases import RunContext, run_parallel
from council.runner import SeatTask
from council.workspace import CLAIMS, DISSENT

DEBATE_MODES = ("auto", "force", "off")


def choose(synthesizer: str, seats: list[Seat], contributors: list[Seat]) -> Seat:
    """A contributor of another CLI than the synthesiser, else another seat, else anyone."""
    writer = next((s for s in seats if s.name == synthesizer), contributors[0])
    return next((s for s in contributors if s.cli != writer.cli), None) or \
        next((s for s in contributors if s.name != writer.name), contributors[0])


async def run(ctx: RunContext) -> None:
    ws = ctx.ws
    source_phase, contributors = ctx.contributors()
    seat = choose(ctx.options.synthesizer, ctx.seats() or contributors, contributors)
    pending = dict(ctx.to_run("antagonist", [seat]))
    if seat not in pending:
        return  # a resumed run that had finished its antagonist
    folder = ws.peers_dir(seat.name, "antagonist")
    inputs = {ws.output_name(s.name, source_phase): ws.published_output(s.name, source_phase)
              for s in contributors}
    dissent = ws.root / DISSENT
    if dissent.is_file():
        inputs[DISSENT] = dissent
    listed = claims.load(ws.root / CLAIMS)
    prompt = prompts.render(
        "antagonist", topic=ctx.topic, marker=loop.MARKER,
        claims=listed.get("claims", []) if listed else [],
        dissent=str(folder / DISSENT) if DISSENT in inputs else None,
        reports=[{"name": s.name, "path": str(folder / ws.output_name(s.name, source_phase))}
                 for s in contributors],
        report_path=str(ws.working_output(seat.name, "antagonist")))
    iterations = min(seat.max_iterations, 2)
    events.emit(ws.root, "antagonist", f"started: {seat.name} attacks the consensus")
    task = SeatTask(replace(seat, max_iterations=iterations), "antagonist", prompt, iterations,
                    inputs, pending[seat])
    record = (await run_parallel(ctx, [task]))[seat.name]
    events.emit(ws.root, "antagonist", "finished: counterpoints.md" if record.usable
                else f"failed ({record.error}): the synthesis goes on without counterpoints")
