"""Seed 004's gap fill: once verification has judged the reports against the scope, the
sub-questions they left open (or answered only with refuted evidence), the dimensions no
report covered, and the partly answered sub-questions, at most MAX_GAPS of them in that order,
are researched in one bounded round before the synthesis, each by one agent. The round's
findings are not cross-checked; the synthesis is told so and says so."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from council import loop, prompts
from council.config import Seat
from council.phases import RunContext, run_parallel
from council.runner import SeatTask
from council.score import closures
from council.state import AgentPhase

MAX_GAPS = 3  # seed 004: "find 1-3 genuine gaps", one bounded round
ITERATIONS = 2


@dataclass(frozen=True)
class Gap:
    id: str
    kind: str  # question | dimension
    text: str
    why: str


def gaps(verification: Mapping[str, Any] | None) -> list[Gap]:
    """The gaps worth one more round, most important first (pure)."""
    questions = closures(verification)
    if not verification or not questions:
        return []
    closed: list[tuple[float, Gap]] = []
    for q, value in questions:
        if value < 1.0:
            status = q.get("status")
            why = "left open" if status == "open" else (
                "its evidence did not survive verification" if value == 0.0
                else "answered only in part" if status == "partial"
                else "its answer was not confirmed by verification")
            closed.append((value, Gap(q["id"], "question", q["question"], why)))
    dims = [Gap(d["id"], "dimension", d["dimension"], "no report covered it")
            for d in verification.get("dimensions", []) if not d.get("covered")]
    ordered = [g for v, g in closed if v == 0.0] + dims + [g for v, g in closed if v > 0.0]
    return ordered[:MAX_GAPS]


def assign(todo: list[Gap], seats: list[Seat]) -> dict[str, list[Gap]]:
    """One gap per seat in turn, so the round takes one agent-phase of time (pure)."""
    out: dict[str, list[Gap]] = {}
    for i, gap in enumerate(todo):
        out.setdefault(seats[i % len(seats)].name, []).append(gap)
    return out


async def run(ctx: RunContext, contributors: list[Seat], source_phase: str,
              plan: dict[str, list[Gap]]) -> dict[str, AgentPhase]:
    """Each seat of `plan` (see `assign`) researches its gaps, reading every report."""
    ws = ctx.ws
    seats = [s for s in contributors if s.name in plan]
    inputs = {ws.output_name(s.name, source_phase): ws.published_output(s.name, source_phase)
              for s in contributors}
    tasks = []
    for seat, previous in ctx.to_run("gapfill", seats):
        folder = ws.peers_dir(seat.name, "gapfill")
        iterations = min(seat.max_iterations, ITERATIONS)
        prompt = prompts.render(
            "gapfill", topic=ctx.topic, mode=ctx.options.mode, marker=loop.MARKER,
            gaps=[asdict(g) for g in plan[seat.name]],
            reports=[{"name": s.name, "path": str(folder / ws.output_name(s.name, source_phase))}
                     for s in contributors],
            report_path=str(ws.working_output(seat.name, "gapfill")))
        tasks.append(SeatTask(replace(seat, max_iterations=iterations), "gapfill", prompt,
                              iterations, inputs, previous))
    return await run_parallel(ctx, tasks)
