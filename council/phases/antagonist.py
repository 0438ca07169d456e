"""Beside verification: one agent, preferably of another vendor than the synthesiser,
steelmans the opposing case against the council's emerging consensus, attacks its weak claims
and hunts disconfirming evidence, starting from the dissent memo when there is one. Its
counterpoints.md must be answered by the synthesis.

When it runs is declared in graph.py (`--debate`): `auto` runs it with the full council
(verification on), `force` always, `off` never; compliance research is always challenged.
It cannot wait for verification's verdicts (they run at the same time): it gets the claims
as listed, to attack the weak ones itself."""

from __future__ import annotations

from council import prompts
from council.evidence import claimcheck
from council.graph import Phase
from council.phases import RunContext, evidence, listed, reports, run_parallel, seat_task
from council.phases.chooser import Role, choose
from council.store import events, loop
from council.store.workspace import CLAIMS, DISSENT


async def run(ctx: RunContext, phase: Phase) -> None:
    ws = ctx.ws
    source_phase, contributors = ctx.contributors()
    seat = choose(Role.OPPONENT, ctx.options.synthesizer, ctx.seats() or contributors,
                  contributors)
    if seat is None:
        return  # no report to attack (the graph skips it then)
    pending = dict(ctx.to_run(phase, [seat]))
    if seat not in pending:
        return  # a resumed run that had finished its antagonist
    folder = ws.peers_dir(seat.name, phase)
    inputs = reports(ws, source_phase, contributors)
    dissent = ws.root / DISSENT
    if dissent.is_file():
        inputs[DISSENT] = dissent
    claims = claimcheck.load(ws.root / CLAIMS)
    await evidence.ensure(ctx, phase.name)  # beside verification: one of them fetches
    prompt = prompts.render(
        phase.prompt, topic=ctx.topic, marker=loop.MARKER,
        claims=claimcheck.listed(claims),
        stored=evidence.shown(ws, claimcheck.listed(claims)),
        dissent=str(folder / DISSENT) if DISSENT in inputs else None,
        reports=listed(ws, source_phase, contributors, folder),
        report_path=str(ws.working_output(seat.name, phase)))
    events.emit(ws.root, phase.name, f"started: {seat.name} attacks the consensus")
    task = seat_task(phase, seat, prompt, inputs, pending[seat])
    record = (await run_parallel(ctx, [task]))[seat.name]
    events.emit(ws.root, phase.name, f"finished: {ws.published_output(seat.name, phase).name}"
                if record.usable else f"failed ({record.error}): the synthesis goes on without "
                "counterpoints")
