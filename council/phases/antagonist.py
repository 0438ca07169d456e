"""Phase before synthesis: one agent, preferably of another vendor than the synthesiser,
steelmans the opposing case against the council's emerging consensus; the synthesis must
answer it in a Counterpoints section.

`--debate force` always runs it, `off` never, `auto` (the default) when the verification found
a contradicted claim or too few of the checked claims were supported: seed 003's triggers (an
unresolved conflict, cross-verification below 50%, 70% for a decision). Compliance research is
always challenged, so `auto` runs it and `off` is refused."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from council import loop, prompts
from council.config import Seat
from council.phases import RunContext, run_parallel
from council.runner import SeatTask
from council.state import AgentPhase

DEBATE_MODES = ("auto", "force", "off")
# The share of checked claims that must hold before `auto` lets the consensus stand: seed
# 003 asks more of a decision (and of compliance work) than of an exploration.
SUPPORT_THRESHOLD = {"exploratory": 0.5, "decision": 0.7}


def should_run(mode: str, verification: dict[str, Any] | None,
               research_mode: str = "exploratory") -> tuple[bool, str]:
    """Whether the antagonist runs, and why: a pure function of the mode and the verdicts."""
    if mode == "force":
        return True, "forced (--debate force)"
    if mode == "off":
        return False, "off (--debate off)"
    if research_mode == "compliance":
        return True, "compliance research is always challenged"
    if not verification or verification.get("status") == "degraded":
        return False, "no verified claims to weigh"
    tally = verification.get("tally", {})
    checked = sum(tally.get(v, 0) for v in ("SUPPORTED", "UNSUPPORTED", "OVERSTATED",
                                            "CONTRADICTED"))
    if tally.get("CONTRADICTED", 0):
        return True, f"{tally['CONTRADICTED']} claim(s) contradicted"
    if checked and tally.get("SUPPORTED", 0) / checked < SUPPORT_THRESHOLD[research_mode]:
        return True, f"only {tally.get('SUPPORTED', 0)} of {checked} checked claims supported"
    return False, "the checked claims held up"


def choose(synthesizer: str, seats: list[Seat], contributors: list[Seat]) -> Seat:
    """A contributor of another CLI than the synthesiser, else another seat, else anyone."""
    writer = next((s for s in seats if s.name == synthesizer), contributors[0])
    return next((s for s in contributors if s.cli != writer.cli), None) or \
        next((s for s in contributors if s.name != writer.name), contributors[0])


async def run(ctx: RunContext, contributors: list[Seat], source_phase: str,
              verification: dict[str, Any] | None) -> AgentPhase:
    ws = ctx.ws
    seat = choose(ctx.options.synthesizer, ctx.seats(), contributors)
    folder = ws.peers_dir(seat.name, "antagonist")
    inputs = {ws.output_name(s.name, source_phase): ws.published_output(s.name, source_phase)
              for s in contributors}
    prompt = prompts.render(
        "antagonist", topic=ctx.topic, verification=verification, marker=loop.MARKER,
        reports=[{"name": s.name, "path": str(folder / ws.output_name(s.name, source_phase))}
                 for s in contributors],
        report_path=str(ws.working_output(seat.name, "antagonist")))
    iterations = min(seat.max_iterations, 2)
    task = SeatTask(replace(seat, max_iterations=iterations), "antagonist", prompt, iterations,
                    inputs)
    return (await run_parallel(ctx, [task]))[seat.name]
