"""Seed 004's gap fill: once the reports have been judged against the scope (phases/claims.py),
the sub-questions they left open (or answered only with refuted evidence), the dimensions no
report covered, and the partly answered sub-questions, at most MAX_GAPS of them in that order,
are researched in one bounded round, each by one agent. The plan goes to gaps.json. Coverage
is then judged again with the gap reports (recheck), whose claims verification checks like
the rest."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from council import graph, prompts
from council.evidence import claimcheck
from council.evidence.score import STATUS_VALUE, closures
from council.graph import Phase
from council.phases import RunContext, listed, reports, run_parallel, seat_task
from council.runoptions import Seat
from council.store import agentfs, events, loop
from council.store.disk import atomic_write
from council.store.workspace import CLAIMS, GAPS, Workspace

MAX_GAPS = 3  # seed 004: "find 1-3 genuine gaps", one bounded round (of turns graph.py caps)


@dataclass(frozen=True)
class Gap:
    id: str
    kind: str  # question | dimension
    text: str
    why: str


def gaps(verification: Mapping[str, Any] | None) -> list[Gap]:
    """The gaps worth one more round, most important first (pure). Before verification (the
    claims are listed, not checked) a sub-question counts as far as its status says."""
    questions = closures(verification)
    if not verification or not questions:
        return []
    if verification.get("status") == "extracted":
        questions = [(q, STATUS_VALUE.get(q.get("status", "open"), 0.0)) for q, _ in questions]
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


def load_plan(path: Path) -> dict[str, list[dict[str, str]]]:
    """gaps.json: each gap-filling seat and the gaps it was given (empty when none)."""
    try:
        data = agentfs.read_json(path)
    except (OSError, ValueError):
        return {}
    plan = data.get("plan") if isinstance(data, dict) else None
    return plan if isinstance(plan, dict) else {}


def published(ws: Workspace) -> list[tuple[str, Path]]:
    """The gap fill's published reports, (seat, path): what the recheck reads beside the
    reports the first judgement read (graph.Facts.gap_reports counts them)."""
    return [(seat, path) for seat in load_plan(ws.root / GAPS)
            if (path := ws.published_output(seat, graph.GAPFILL)).is_file()]


def count(verification: Mapping[str, Any] | None) -> int:
    """How many gaps the first judgement left (graph.Facts.gaps), from claims.json as read."""
    return len(gaps(verification))


async def run(ctx: RunContext, phase: Phase) -> None:
    """One bounded round on what the first coverage judgement found missing. The plan is
    written once, so a resumed run fills the same gaps with the same seats."""
    ws, name = ctx.ws, phase.name
    source_phase, contributors = ctx.contributors()
    plan = load_plan(ws.root / GAPS)
    if not plan:
        todo = gaps(claimcheck.load(ws.root / CLAIMS))
        plan = {seat: [asdict(g) for g in batch]
                for seat, batch in assign(todo, contributors).items()}
        atomic_write(ws.root / GAPS, json.dumps({"plan": plan}, indent=2, ensure_ascii=False)
                     + "\n")
    seats = [s for s in contributors if s.name in plan]
    pending = [seat.name for seat, _ in ctx.to_run(phase, seats)]
    events.emit(ws.root, name, (
        f"started: {graph.counted(sum(map(len, plan.values())), 'gap')}, "
        if len(pending) == len(plan)
        else f"resumed: {', '.join(pending)} still to finish; ") + ", ".join(
        f"{seat} ({', '.join(g['id'] for g in batch)})" for seat, batch in plan.items()))
    inputs = reports(ws, source_phase, contributors)
    tasks = []
    for seat, previous in ctx.to_run(phase, seats):
        folder = ws.peers_dir(seat.name, phase)
        prompt = prompts.render(
            phase.prompt, topic=ctx.topic, mode=ctx.options.mode, marker=loop.MARKER,
            gaps=plan[seat.name],
            reports=listed(ws, source_phase, contributors, folder),
            report_path=str(ws.working_output(seat.name, phase)))
        tasks.append(seat_task(phase, seat, prompt, inputs, previous))
    await run_parallel(ctx, tasks)
    state = ctx.owner.state
    failed = [(seat, rec) for seat in plan
              if (rec := state.agents[seat].phases.get(name)) is not None
              and not rec.usable]
    events.emit(ws.root, name, f"finished: {len(plan) - len(failed)} of {len(plan)} "
                "gap reports" + "".join(f"; {seat} failed ({rec.error})"
                                        for seat, rec in failed))
