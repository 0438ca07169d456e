"""Seed 003's scoping, before the research: one agent splits the question into the
sub-questions a complete answer must close and the dimensions it must cover (scope.json).
Every researcher gets the same checklist, and the completeness score later measures the
reports against it.

A scope that cannot be had (malformed answers, every agent failing) never stops the run:
scope.json says `degraded`, the research goes on unscoped, and the score says those signals
were not measured."""

from __future__ import annotations

import json
from pathlib import Path

from council import graph, prompts
from council.evidence.coverage import DIMENSIONS, QUESTIONS, SCOPE, Scope, validate_scope
from council.evidence.coverage import load as load_scope
from council.graph import Phase
from council.phases import RunContext, ask_json
from council.phases.chooser import writer
from council.runoptions import Seat
from council.store import events
from council.store.disk import atomic_write


async def run(ctx: RunContext, phase: Phase) -> None:
    await find(ctx, phase)


async def find(ctx: RunContext, phase: Phase) -> Scope | None:
    """The run's scope (written now, or by an earlier attempt of a resumed run)."""
    ws = ctx.ws
    path = ws.root / SCOPE
    if path.is_file():
        found = load_scope(path)
        # A degraded scope (say, a rate limit) is tried again on resume, unless the research
        # already started without it: the agents must share one checklist or none.
        if found is not None or _research_started(ctx):
            return found
    seats = ctx.seats()
    first = writer(ctx.options.synthesizer, seats, seats)
    candidates = [first, *(s for s in seats if s.name != first.name)]

    def render(seat: Seat, error: str | None) -> tuple[str, dict[str, Path]]:
        return prompts.render(
            phase.prompt, topic=ctx.topic, mode=ctx.options.mode, error=error,
            questions=QUESTIONS, dimensions=DIMENSIONS,
            report_path=str(ws.working_output(seat.name, phase))), {}

    events.emit(ws.root, phase.name, f"started: {first.name} splits the question")
    found, error = await ask_json(ctx, phase, candidates, render,
                                  lambda data, _last: validate_scope(data))
    data = found.to_dict() if found else {"status": "degraded", "error": error}
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    events.emit(ws.root, phase.name, f"finished: {len(found.questions)} sub-questions, "
                f"{len(found.dimensions)} dimensions" if found
                else f"degraded: {error}; the research goes on unscoped")
    return found


def _research_started(ctx: RunContext) -> bool:
    """Whether a seat has begun its research (with this scope, or without one)."""
    state = ctx.owner.state
    return any((ap := rec.phases.get(graph.RESEARCH.name)) is not None and ap.started_at
               for rec in state.agents.values())
